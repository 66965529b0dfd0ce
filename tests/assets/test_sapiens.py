"""Sapiens' toy dataset (``repos/test_facebookresearch__sapiens.py``): pruned by the setup to
one complete sample, from folders or zips.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from support.assets import assert_real
from support.repomodules import Stage, module, stages


def test_sapiens_toy_dataset_pruned_by_setup_from_folders(tmp_path: Path) -> None:
    mod = module("test_facebookresearch__sapiens")
    repo = mod.repo
    assert_real(repo, "sapiens_toy_dataset_min1", ["cpu", "single_gpu", "multi_gpu"])
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        raw = stage.raw("sapiens_toy_dataset_min1")
        assert raw == stage.assets / "dataset" / "sapiens_toy_dataset"
        for stem in ("00000002", "00000001", "00000003"):
            for kind, suffix in (("images", ".png"), ("masks", ".png"), ("normals", ".npy")):
                (raw / kind).mkdir(parents=True, exist_ok=True)
                (raw / kind / f"{stem}{suffix}").write_text(f"{kind} {stem}")
        (raw / "images" / "notes.txt").write_text("not an image")
        (raw / "depths").mkdir()
        (raw / "depths" / "00000001.npy").write_text("depth")
        stage.setup()
        option = next(a for a in stage.argv() if a.startswith("dataset_train.data_root="))
        root = Path(option.removeprefix("dataset_train.data_root="))
        assert root == stage.out / "sapiens_toy_dataset_min1"
        assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
            "images/00000001.png", "masks/00000001.png", "normals/00000001.npy"]
        assert (root / "normals" / "00000001.npy").read_text() == "normals 00000001"
        assert len(list((raw / "images").iterdir())) == 4, "the raw download is only read"


def test_sapiens_toy_dataset_pruned_by_setup_from_zips(tmp_path: Path) -> None:
    repo = module("test_facebookresearch__sapiens").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    raw = stage.raw("sapiens_toy_dataset_min1")
    raw.mkdir(parents=True)
    with zipfile.ZipFile(raw / "images.zip", "w") as zf:  # members in their folder
        zf.writestr("images/", "")
        zf.writestr("images/b.png", "img b")
        zf.writestr("images/a.jpg", "img a")
    with zipfile.ZipFile(raw / "masks.zip", "w") as zf:  # flat members: the archive's name
        zf.writestr("a.png", "mask a")
        zf.writestr("b.png", "mask b")
    with zipfile.ZipFile(raw / "normals.zip", "w") as zf:
        zf.writestr("normals/a.npy", "normal a")
    stage.setup()
    root = stage.out / "sapiens_toy_dataset_min1"
    assert {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()} == {
        "images/a.jpg": "img a", "masks/a.png": "mask a", "normals/a.npy": "normal a"}


def test_sapiens_setup_fails_without_a_matching_normal(tmp_path: Path) -> None:
    repo = module("test_facebookresearch__sapiens").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    raw = stage.raw("sapiens_toy_dataset_min1")
    for kind, name in (("images", "1.png"), ("masks", "1.png"), ("normals", "2.npy")):
        (raw / kind).mkdir(parents=True)
        (raw / kind / name).write_text(kind)
    done = stage.setup(check=False)
    assert done.returncode != 0 and "no normals file for the sample '1'" in done.stderr
