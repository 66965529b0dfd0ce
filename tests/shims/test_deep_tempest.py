"""deep-tempest's generated-config shims (``repos/shims/test_emidan19__deep_tempest``): the
image pairs, the checkpoint choice and the KAIR options file of each stage.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.repomodules import Stage, module

from pytest_reb.spec import Run

DEEP_TEMPEST = module("test_emidan19__deep_tempest").repo


def kair_parse(path: Path) -> dict[str, Any]:
    """How KAIR's utils_option.parse reads an options file: each line cut at '//', then JSON."""
    text = "".join(line.split("//")[0] + "\n" for line in path.read_text().splitlines())
    return json.loads(text)


def tempest_assets(st: Stage) -> None:
    """The raw assets: the checkout's examples/ in dataset/, the share's download in model/."""
    (st.assets / "dataset").mkdir(parents=True)
    for stamp, capture in (("18-08-19", "05-09-2023_21_07_37"),
                           ("18-08-27", "05-09-2023_21_10_14")):
        clean = f"Screenshot from 2023-08-29 {stamp}"
        (st.assets / "dataset" / f"{clean}.png").write_bytes(b"H")
        (st.assets / "dataset" / f"{clean}-gr-tempest_screenshot_{capture}.png").write_bytes(b"L")
    (st.assets / "model").mkdir()
    (st.assets / "model" / "download").write_bytes(b"a raw checkpoint")


def tempest_prepared(root: Path, *model_files: str) -> None:
    """A folder laid out as the official prepare left benchmark_assets."""
    for mini in ("mini_1", "mini_2"):
        for side in ("H", "L"):
            (root / "dataset" / mini / side).mkdir(parents=True)
    (root / "model").mkdir()
    for name in model_files:
        (root / "model" / name).write_bytes(b"PK")


def make_options_step(run: Run, prepared: str) -> list[str]:
    """The stage's make_options.py step, reading ``prepared`` instead of its {out}."""
    [step] = [s for s in run.setup if s[1].endswith("make_options.py")]
    return [prepared if a == "{out}" else a for a in step]


@pytest.mark.parametrize(("stage", "gpu_ids", "mini", "batch"), [
    ("cpu", [], "mini_1", 1), ("single_gpu", [0], "mini_1", 1),
    ("multi_gpu", [0, 1], "mini_2", 2), ("multi_gpu_retry", [0, 1], "mini_2", 2)])
def test_deep_tempest_options(tmp_path: Path, stage: str, gpu_ids: list[int], mini: str,
                              batch: int) -> None:
    if stage == "multi_gpu_retry":
        assert DEEP_TEMPEST.multi_gpu.retry is not None
        run = DEEP_TEMPEST.multi_gpu.retry.run
    else:
        run = getattr(DEEP_TEMPEST, stage)
    st = Stage(run, tmp_path, stage)
    tempest_assets(st)
    st.setup()
    options = st.arg("--opt")
    assert options.name == f"options_{stage.removesuffix('_retry')}_min.json"
    opt = kair_parse(options)
    assert (opt["task"], opt["model"], opt["gpu_ids"]) == ("drunet", "plain", gpu_ids)
    assert (opt["n_channels"], opt["n_channels_datasetload"], opt["use_abs_value"]) == (1, 3, True)
    assert opt["path"] == {"root": str(st.out / "artifacts"),
                           "pretrained_netG": str(st.out / "model" / "pretrained.pth")}
    for phase in ("train", "test"):
        ds = opt["datasets"][phase]
        assert ds["dataroot_H"] == str(st.out / "dataset" / mini / "H")
        assert ds["dataroot_L"] == str(st.out / "dataset" / mini / "L")
        assert (ds["H_size"], ds["num_patches_per_image"], ds["dataloader_batch_size"],
                ds["dataloader_shuffle"], ds["dataloader_num_workers"]) == (128, 1, batch, False, 0)
    net = opt["netG"]
    assert (net["net_type"], net["in_nc"], net["out_nc"], net["nc"], net["nb"]) == (
        "drunet", 2, 1, [64, 128, 256, 512], 4)
    train = opt["train"]
    assert (train["epochs"], train["G_lossfn_type"], train["G_optimizer_type"],
            train["G_optimizer_lr"], train["G_param_strict"]) == (1, "l2", "adam", 1e-4, True)
    assert {train[k] for k in ("checkpoint_test", "checkpoint_test_save", "checkpoint_save",
                               "checkpoint_print")} == {999999}


def test_deep_tempest_checkpoint_order_and_kair_comments(tmp_path: Path) -> None:
    """The prepare step's first checkpoint-like file, sorted; a '//' in a path would be cut
    off by KAIR's comment stripping, so none is written."""
    st = Stage(DEEP_TEMPEST.cpu, tmp_path, "cpu")
    prepared = tmp_path / "prepared"
    tempest_prepared(prepared, "zz.bin", "drunet_G.pth", "notes.txt")
    step = make_options_step(DEEP_TEMPEST.cpu, str(prepared) + "//")  # a trailing slash
    done = subprocess.run([st.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    raw = (st.out / "options_cpu_min.json").read_text()
    assert "//" not in raw
    assert kair_parse(st.out / "options_cpu_min.json")["path"]["pretrained_netG"] == str(
        prepared / "model" / "drunet_G.pth")


def test_deep_tempest_options_need_the_prepared_assets(tmp_path: Path) -> None:
    st = Stage(DEEP_TEMPEST.single_gpu, tmp_path, "single_gpu")
    tempest_prepared(tmp_path / "prepared", "notes.txt")
    step = make_options_step(DEEP_TEMPEST.single_gpu, str(tmp_path / "prepared"))
    done = subprocess.run([st.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "checkpoint" in done.stderr
    st2 = Stage(DEEP_TEMPEST.multi_gpu, tmp_path / "2", "multi_gpu")
    step = make_options_step(DEEP_TEMPEST.multi_gpu, str(tmp_path / "2" / "nothing"))
    done = subprocess.run([st2.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "mini_2" in done.stderr
