"""VoxCPM's generated-config shim (``repos/shims/test_OpenBMB__VoxCPM``): the LoRA
fine-tuning config and its one-line manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repomodules import Stage, module

VOXCPM = module("test_OpenBMB__VoxCPM").repo


def voxcpm_model(st: Stage, *files: str) -> Path:
    model = st.assets / "model" / "openbmb__VoxCPM-0.5B"
    model.mkdir(parents=True)
    for name in files:
        (model / name).write_text("{}")
    return model


def test_voxcpm_config(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="VoxCPM reads the config with yaml.safe_load")
    st = Stage(VOXCPM.single_gpu, tmp_path, "single_gpu")
    model = voxcpm_model(st, "config.json", "audiovae.pth")
    wav = st.assets / "dataset" / "example.wav"  # the prepared asset
    wav.parent.mkdir()
    wav.write_bytes(b"RIFF")
    st.setup()
    config = st.arg("--config_path")
    assert config == st.out / "config.yaml"
    cfg = yaml.safe_load(config.read_text())
    manifest = st.out / "train_manifest.jsonl"
    assert cfg == {
        "pretrained_path": str(model), "train_manifest": str(manifest), "val_manifest": "",
        "sample_rate": 16000, "batch_size": 1, "grad_accum_steps": 1, "num_workers": 0,
        "num_iters": 1, "log_interval": 1, "valid_interval": 1000000, "save_interval": 1000000,
        "learning_rate": 1e-4, "weight_decay": 0.01, "warmup_steps": 0, "max_steps": 1,
        "max_batch_tokens": 0, "save_path": str(st.out / "checkpoints"),
        "tensorboard": str(st.out / "tensorboard"),
        "lambdas": {"loss/diff": 1.0, "loss/stop": 1.0},
        "lora": {"enable_lm": True, "enable_dit": True, "enable_proj": False, "r": 4,
                 "alpha": 4, "dropout": 0.0},
    }
    lines = manifest.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{
        "audio": str(wav),
        "text": "This is a minimal benchmark sample for VoxCPM fine-tuning.", "dataset_id": 0}]


def test_voxcpm_config_refuses_an_incomplete_model(tmp_path: Path) -> None:
    st = Stage(VOXCPM.single_gpu, tmp_path, "single_gpu")
    voxcpm_model(st, "config.json")
    done = st.setup(check=False)
    assert done.returncode != 0 and "audiovae.pth" in done.stderr
    assert not (st.out / "config.yaml").exists()
