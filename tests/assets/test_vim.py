"""Vim's COCO val 100 (``repos/test_hustvl__Vim.py``): fetched from beside the tgz url and laid
out by the setup where detectron2 reads it.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

from support.assets import assert_real, fetched
from support.repomodules import Stage, module, stages

from pytest_reb.assets.fetchers import _extract_all

COCO_IMAGES = ["000000000139.jpg", "000000000285.jpg"]


def coco_download(folder: Path) -> None:
    """Stand-ins of the two downloaded files: the images tgz (val2017/...) and the json."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(folder / "val2017_100.tgz", "w:gz") as tar:
        for name in COCO_IMAGES:
            info = tarfile.TarInfo(f"val2017/{name}")
            info.size = len(name)
            tar.addfile(info, io.BytesIO(name.encode()))
    (folder / "instances_val2017_100.json").write_text('{"images": [], "annotations": []}')


def check_detectron2_layout(stage: Stage) -> None:
    """What detectron2's builtin coco_2017_val_100 reads under DETECTRON2_DATASETS."""
    root = Path(stage.fill(stage.run.env["DETECTRON2_DATASETS"]))
    assert root == stage.out / "datasets"
    images = root / "coco" / "val2017"
    assert sorted(p.name for p in images.iterdir()) == COCO_IMAGES
    assert (images / COCO_IMAGES[0]).read_text() == COCO_IMAGES[0]
    annotations = root / "coco" / "annotations" / "instances_val2017_100.json"
    assert json.loads(annotations.read_text()) == {"images": [], "annotations": []}


def test_vim_coco_laid_out_by_setup_from_the_prepared_view(tmp_path: Path) -> None:
    mod = module("test_hustvl__Vim")
    repo = mod.repo
    assert_real(repo, "coco_2017_val_100", ["cpu", "single_gpu", "multi_gpu"])
    coco = repo.assets[0]
    assert coco.dest == "dataset/coco/" and coco.extract
    staging = tmp_path / "staging"  # what --reb-prepare makes of the two downloads
    coco_download(staging)
    _extract_all(staging, "coco")
    assert sorted(p.name for p in staging.iterdir()) == ["instances_val2017_100.json", "val2017"]
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        raw = stage.raw("coco_2017_val_100")
        shutil.copytree(staging, raw)
        stage.setup()
        check_detectron2_layout(stage)
        assert (stage.out / "datasets" / "coco" / "val2017").resolve() == (raw / "val2017")
        stage.setup()  # a second run of the setup in the same {out} works too
        check_detectron2_layout(stage)


def test_vim_setup_unpacks_a_download_left_packed(tmp_path: Path) -> None:
    repo = module("test_hustvl__Vim").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    coco_download(stage.raw("coco_2017_val_100"))
    stage.setup()
    check_detectron2_layout(stage)
    assert not (stage.out / "datasets" / "coco" / "val2017").is_symlink()


def test_vim_setup_needs_the_annotations(tmp_path: Path) -> None:
    repo = module("test_hustvl__Vim").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    coco_download(stage.raw("coco_2017_val_100"))
    (stage.raw("coco_2017_val_100") / "instances_val2017_100.json").unlink()
    done = stage.setup(check=False)
    assert done.returncode != 0 and "instances_val2017_100.json" in done.stderr


def test_vim_both_files_fetched_from_beside_the_tgz_url(
        tmp_path: Path, served: tuple[str, Path]) -> None:
    host, www = served
    repo = module("test_hustvl__Vim").repo
    coco_download(www / "detectron2" / "annotations" / "coco")
    staging = fetched(repo, "coco_2017_val_100", host, tmp_path / "staging")
    assert sorted(p.name for p in staging.iterdir()) == ["instances_val2017_100.json", "val2017"]
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    shutil.copytree(staging, stage.raw("coco_2017_val_100"))
    stage.setup()
    check_detectron2_layout(stage)
