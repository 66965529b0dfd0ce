"""deep-tempest's screenshot pairs and checkpoint (``repos/test_emidan19__deep_tempest.py``):
the setup pairs the example screenshots into mini datasets and picks the checkpoint out of
the share's download.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support.assets import Target, on_server, write
from support.repomodules import REPOS, module

TEMPEST_PAIRS = [
    ("Screenshot from 2023-08-29 18-08-19.png",
     "Screenshot from 2023-08-29 18-08-19-gr-tempest_screenshot_05-09-2023_21_07_37.png"),
    ("Screenshot from 2023-08-29 18-08-27.png",
     "Screenshot from 2023-08-29 18-08-27-gr-tempest_screenshot_05-09-2023_21_10_14.png"),
]


def tempest(tmp_path: Path, served: tuple[str, Path], download: bytes) -> Target:
    checkout = tmp_path / "checkout"
    for i, (clean, capture) in enumerate(TEMPEST_PAIRS):
        write(checkout / "examples" / clean, f"H{i}")
        write(checkout / "examples" / capture, f"L{i}")
    write(checkout / "examples" / "Screenshot from 2023-08-29 18-08-31.png", "other")
    repo = on_server(module("test_emidan19__deep_tempest").repo, served,
                  {"drunet_pretrained": download})
    target = Target(tmp_path, repo, checkout)
    target.prepare()
    return target


def zipped(path: Path, members: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path.read_bytes()


def torch_zip(tmp_path: Path) -> bytes:
    """What torch.save writes: a zip of <prefix>/data.pkl, <prefix>/version, <prefix>/data/N."""
    return zipped(tmp_path / "ckpt.zip", {"archive/data.pkl": b"p", "archive/version": b"3",
                                          "archive/data/0": b"w" * 10})


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu", "retry"])
def test_deep_tempest_pairs_and_checkpoint(tmp_path: Path, served: tuple[str, Path],
                                           stage: str) -> None:
    download = torch_zip(tmp_path)
    target = tempest(tmp_path, served, download)
    raw = target.view / "model" / "download"
    assert raw.read_bytes() == download  # the share's download, as fetched
    repo = target.repo
    run = repo.multi_gpu.retry.run if stage == "retry" else getattr(repo, stage)
    target.setup(run)
    data = target.out / "dataset"
    for mini, count in (("mini_1", 1), ("mini_2", 2)):
        for side in ("H", "L"):  # pair i's clean screenshot in H, its capture in L
            got = sorted(p.name for p in (data / mini / side).iterdir())
            assert got == [f"sample{i}.png" for i in range(count)]
            for i in range(count):
                assert (data / mini / side / f"sample{i}.png").read_text() == f"{side}{i}"
    checkpoint = target.out / "model" / "pretrained.pth"
    assert checkpoint.read_bytes() == download  # a torch checkpoint is used as it is
    opt = json.loads(target.arg(run, "--opt").read_text())
    mini = "mini_1" if stage in ("cpu", "single_gpu") else "mini_2"
    assert opt["path"]["pretrained_netG"] == str(checkpoint)
    assert opt["datasets"]["train"]["dataroot_H"] == str(data / mini / "H")
    assert opt["datasets"]["test"]["dataroot_L"] == str(data / mini / "L")


def pick(tmp_path: Path, download: Path) -> subprocess.CompletedProcess[str]:
    shim = REPOS / "shims" / "test_emidan19__deep_tempest" / "pick_checkpoint.py"
    return subprocess.run([sys.executable, str(shim), str(download), str(tmp_path / "model")],
                          capture_output=True, text=True, timeout=60)


def test_deep_tempest_checkpoint_out_of_an_archive(tmp_path: Path) -> None:
    """An archive: a *_G.pth first, else the largest checkpoint-like file, extracted with its
    extension; none, or a truncated zip, fails."""
    out = tmp_path / "model"
    archive = tmp_path / "a.zip"
    zipped(archive, {"x/big.pth": b"b" * 50, "x/net_G.pth": b"g", "README": b"r" * 99})
    assert pick(tmp_path, archive).returncode == 0
    assert (out / "pretrained.pth").read_bytes() == b"g"
    assert not (out / "pretrained.pth").is_symlink()
    zipped(archive, {"m/a.pt": b"a" * 5, "m/B.PTH.TAR": b"t" * 9, "m/c.bin": b"c" * 9})
    done = pick(tmp_path, archive)
    assert done.returncode == 0, done.stderr
    assert (out / "pretrained.pth.tar").read_bytes() == b"t" * 9  # largest; ties: first by name
    zipped(archive, {"notes.txt": b"n"})
    done = pick(tmp_path, archive)
    assert done.returncode == 1 and "no checkpoint-like file" in done.stderr
    archive.write_bytes(b"PK\x03\x04truncated")
    done = pick(tmp_path, archive)
    assert done.returncode == 1 and "truncated zip" in done.stderr
    raw = write(tmp_path / "raw.bin", b"\x80\x02legacy pickle")
    assert pick(tmp_path, raw).returncode == 0
    assert (out / "pretrained.pth").resolve() == raw.resolve()  # a raw checkpoint: linked


def test_deep_tempest_missing_pair_fails(tmp_path: Path, served: tuple[str, Path]) -> None:
    target = tempest(tmp_path, served, b"raw checkpoint")
    (target.view / "dataset" / TEMPEST_PAIRS[1][1]).unlink()
    done = target.setup(target.repo.multi_gpu, check=False)
    assert done.returncode == 1 and "expected example files not found" in done.stderr
    assert not (target.out / "options_multi_gpu_min.json").exists()
