"""ml-mdm's dummy tar (``repos/test_apple__ml_mdm.py``): the setup rebuilds the file list and
index the training reads.
"""

from __future__ import annotations

import csv
import io
import tarfile
from pathlib import Path

from support.assets import assert_real
from support.repomodules import Stage, module, stages

MDM_CAPTION = "Manager in store with TVs, computers, laptops, printers, monitors."


def mdm_stand_ins(stage: Stage, files: list[str]) -> Path:
    """The prepared tar (holding ``files``) and the repository's own index; the tar's path."""
    tar = stage.raw("ml_mdm_dummy") / "images_00000.tar"
    tar.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar, "w") as archive:
        for name in files:
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"jpg"))
    index = stage.repo / "ml-mdm-matryoshka" / "tests" / "test_files" / "images_00000.tsv"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("tar\tfile\tcaption\n"
                     f"tests/test_files/images_00000.tar\t0000000000.jpg\t{MDM_CAPTION}\n")
    return tar


def test_ml_mdm_file_list_rebuilt_by_setup(tmp_path: Path) -> None:
    mod = module("test_apple__ml_mdm")
    repo = mod.repo
    assert_real(repo, "ml_mdm_dummy", ["cpu", "single_gpu", "multi_gpu"])
    assert repo.assets[0].dest == "dataset/ml_mdm_dummy"
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        (stage.repo / "ml-mdm-matryoshka").mkdir(parents=True)  # the run's cwd
        tar = mdm_stand_ins(stage, ["0000000000.jpg", "0000000001.jpg"])
        stage.setup()
        file_list = Path(next(a for a in stage.argv() if a.startswith("--file-list="))
                         .removeprefix("--file-list="))
        assert file_list == stage.out / "ml_mdm_dummy" / "sample_training_0.tsv"
        with open(file_list, newline="") as fh:  # read as the reader does: tab-separated
            listed = [r["filename"] for r in csv.DictReader(fh, delimiter="\t")]
        assert listed == [str(stage.out / "ml_mdm_dummy" / "images_00000.tsv")]
        with open(listed[0], newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        assert rows == [{"tar": str(tar), "file": "0000000000.jpg", "caption": MDM_CAPTION}]
        with tarfile.open(rows[0]["tar"]) as archive:
            assert archive.extractfile(rows[0]["file"]).read() == b"jpg"  # type: ignore[union-attr]


def test_ml_mdm_setup_refuses_a_tar_without_the_indexed_image(tmp_path: Path) -> None:
    repo = module("test_apple__ml_mdm").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    (stage.repo / "ml-mdm-matryoshka").mkdir(parents=True)
    mdm_stand_ins(stage, ["0000000005.jpg"])
    done = stage.setup(check=False)
    assert done.returncode != 0 and "0000000000.jpg" in done.stderr
    assert not (stage.out / "ml_mdm_dummy" / "sample_training_0.tsv").exists()
