"""ClearerVoice-Studio's shims (``repos/shims/test_modelscope__ClearerVoice_Studio``): the
checkpoint choice, the DDP scp lists and the torchrun wrapper.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.repomodules import module
from support.shims import Tree, report, run, shim

CV = "test_modelscope__ClearerVoice_Studio"


def choose(tmp_path: Path, *folders: Path) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "out" / "ckpt"
    out.unlink(missing_ok=True)
    return run([sys.executable, shim(CV, "frcrn_checkpoint.py"), str(out), *map(str, folders)],
               tmp_path)


def test_clearervoice_checkpoint_preference(tmp_path: Path) -> None:
    """last_best_checkpoint.pt, else the file named in last_best_checkpoint, else the first *.pt;
    the first folder holding one wins; none fails."""
    link, snap = tmp_path / "model" / "FRCRN_SE_16K", tmp_path / "cache" / "FRCRN_SE_16K"
    snap.mkdir(parents=True)
    out = tmp_path / "out" / "ckpt"

    assert choose(tmp_path, link, snap).returncode == 1
    assert not out.exists()

    for name in ("b.pt", "a.pt", "named.pt"):
        (snap / name).write_text(name)
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text() == f"{snap / 'a.pt'}\n"

    (snap / "last_best_checkpoint").write_text("missing.pt\n")  # names no file: first *.pt
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "a.pt")

    (snap / "last_best_checkpoint").write_text("named.pt\r\nother.pt\n")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "named.pt")

    (snap / "last_best_checkpoint.pt").write_text("best")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "last_best_checkpoint.pt")

    link.mkdir(parents=True)  # an empty first folder is passed over
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "last_best_checkpoint.pt")
    (link / "z.pt").write_text("")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(link / "z.pt")


def test_clearervoice_ddp_scp(tmp_path: Path) -> None:
    source, dest = tmp_path / "train.scp", tmp_path / "out" / "train_ddp.scp"
    source.write_text("/d/input.wav /d/input.wav\r\n/d/other.wav /d/other.wav\n")
    res = run([sys.executable, shim(CV, "ddp_scp.py"), "3", str(source), str(dest)], tmp_path)
    assert res.returncode == 0, res.stderr
    assert dest.read_text() == "/d/input.wav /d/input.wav\n" * 3

    source.write_text("")
    dest.unlink()
    res = run([sys.executable, shim(CV, "ddp_scp.py"), "2", str(source), str(dest)], tmp_path)
    assert res.returncode == 1 and not dest.exists()


#: A stand-in of train/speech_enhancement/train.py: imports a sibling package as the real one
#: does (dataloader.dataloader) and reports how it was started.
STANDIN_TRAIN = """\
import json, os, sys
from dataloader.dataloader import WHERE
if __name__ == "__main__":
    print("REPORT " + json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "where": WHERE,
                                 "path0": sys.path[0]}))
"""


def standin_repo(root: Path) -> Path:
    train = root / "train" / "speech_enhancement"
    (train / "dataloader").mkdir(parents=True)
    (train / "dataloader" / "__init__.py").write_text("")
    (train / "dataloader" / "dataloader.py").write_text("WHERE = __file__\n")
    (train / "train.py").write_text(STANDIN_TRAIN)
    return train


def test_clearervoice_wrapper_ranks(tmp_path: Path) -> None:
    """--local-rank from LOCAL_RANK (or a --local_rank flag, removed), rank<N> checkpoints for
    non-zero ranks, run in train.py's folder as __main__."""
    train = standin_repo(tmp_path / "repo")
    wrapper = shim(CV, "torchrun_train_wrapper.py")
    ckpt = tmp_path / "out" / "checkpoints"
    args = ["--config", "c.yaml", "--checkpoint_dir", str(ckpt), "--use-cuda", "1"]

    got = report(run([sys.executable, wrapper, *args], train, LOCAL_RANK="1"))
    assert got["argv"] == [str(train / "train.py"), "--local-rank", "1", "--config", "c.yaml",
                           "--checkpoint_dir", str(ckpt / "rank1"), "--use-cuda", "1"]
    assert (ckpt / "rank1").is_dir()
    assert got["cwd"] == str(train) and got["path0"] == str(train)
    assert got["where"] == str(train / "dataloader" / "dataloader.py")

    got = report(run([sys.executable, wrapper, *args], train, LOCAL_RANK="0"))
    assert got["argv"][1:] == ["--local-rank", "0", *args]

    got = report(run([sys.executable, wrapper, "--local_rank=3", *args[:2],
                      f"--checkpoint_dir={ckpt}"], train, LOCAL_RANK="0"))
    assert got["argv"][1:] == ["--local-rank", "3", "--config", "c.yaml",
                               f"--checkpoint_dir={ckpt / 'rank3'}"]

    env = {k: v for k, v in os.environ.items() if k != "LOCAL_RANK"}
    res = subprocess.run([sys.executable, wrapper, "--local_rank", "2"], cwd=train,
                         capture_output=True, text=True, timeout=60, env=env)
    assert report(res)["argv"][1:] == ["--local-rank", "2"]


def test_clearervoice_wrapper_from_the_probe_folder(tmp_path: Path) -> None:
    """Started elsewhere, the wrapper mounted at {repo}/benchmark_scripts finds the repo's
    train/speech_enhancement/train.py."""
    repo = tmp_path / "repo"
    train = standin_repo(repo)
    probe = repo / "benchmark_scripts"
    probe.mkdir()
    (probe / "torchrun_train_wrapper.py").write_text(
        Path(shim(CV, "torchrun_train_wrapper.py")).read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    got = report(run([sys.executable, str(probe / "torchrun_train_wrapper.py")], elsewhere))
    assert got["cwd"] == str(train)
    assert got["argv"] == [str(train / "train.py"), "--local-rank", "0"]


def test_clearervoice_multi_gpu_stage(tmp_path: Path) -> None:
    """The module's C4 setup and, per rank, what torchrun would start: the wrapper with the
    module's argv after the launcher flags."""
    tree = Tree(tmp_path, CV)
    train = standin_repo(tree["repo"])
    dataset = tree["assets"] / "dataset"
    dataset.mkdir()
    (dataset / "input.wav").write_bytes(b"RIFF")  # the prepared asset; setup writes the lists
    snapshot = tree["assets"] / "cache" / "hf_models" / "FRCRN_SE_16K"
    snapshot.mkdir(parents=True)
    (snapshot / "pytorch_model.pt").write_text("")
    (snapshot / "last_best_checkpoint").write_text("pytorch_model.pt\n")
    stage = module(CV).repo.multi_gpu
    tree.setup(stage)

    out = tree["out"]
    line = f"{dataset}/input.wav {dataset}/input.wav\n"
    assert (out / "train.scp").read_text() == (out / "cv.scp").read_text() == line
    assert (out / "train_ddp.scp").read_text() == (out / "cv_ddp.scp").read_text() == line * 2
    assert (out / "checkpoints").is_dir()
    argv = tree.argv(stage.argv)
    assert argv[5:7] == ["--master_port", "29555"]
    script = argv.index(shim(CV, "torchrun_train_wrapper.py"))
    for rank in ("0", "1"):
        got = report(run([sys.executable, *argv[script:]], train, LOCAL_RANK=rank))
        flags = got["argv"][1:]
        assert flags[:2] == ["--local-rank", rank]
        assert flags[flags.index("--init_checkpoint_path") + 1] == str(snapshot /
                                                                        "pytorch_model.pt")
        assert flags[flags.index("--tr-list") + 1] == str(out / "train_ddp.scp")
        want = out / "checkpoints" if rank == "0" else out / "checkpoints" / f"rank{rank}"
        assert flags[flags.index("--checkpoint_dir") + 1] == str(want)


def test_clearervoice_single_stages_resolve_the_checkpoint(tmp_path: Path) -> None:
    tree = Tree(tmp_path, CV)
    link = tree["assets"] / "model" / "FRCRN_SE_16K"
    link.mkdir(parents=True)
    (link / "last_best_checkpoint.pt").write_text("")
    (tree["assets"] / "dataset").mkdir()
    (tree["assets"] / "dataset" / "input.wav").write_bytes(b"RIFF")
    standin_repo(tree["repo"])
    for stage in (module(CV).repo.cpu, module(CV).repo.single_gpu):
        tree.setup(stage)
        argv = tree.argv(stage.argv)
        assert argv[argv.index("--init_checkpoint_path") + 1] == str(
            link / "last_best_checkpoint.pt")


def test_clearervoice_missing_checkpoint_fails_setup(tmp_path: Path) -> None:
    tree = Tree(tmp_path, CV)
    standin_repo(tree["repo"])
    step = module(CV).repo.cpu.setup[0]
    res = run(tree.argv(step), tmp_path)
    assert res.returncode == 1 and "no FRCRN checkpoint" in res.stderr
