"""VoxCPM's example wav (``repos/test_OpenBMB__VoxCPM.py``): copied from the checkout by
``--reb-prepare``, named by the training manifest the setup writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.assets import Target, write
from support.repomodules import module


def test_voxcpm_manifest_names_the_prepared_wav(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="VoxCPM reads the config with yaml.safe_load")
    checkout = tmp_path / "checkout"
    write(checkout / "examples" / "example.wav", b"RIFFwav")
    target = Target(tmp_path, module("test_OpenBMB__VoxCPM").repo, checkout)
    model = tmp_path / "hub" / "openbmb__VoxCPM-0.5B"
    write(model / "config.json", "{}")
    write(model / "audiovae.pth", b"pth")
    target.prepare(**{"VoxCPM-0.5B": model})
    wav = target.view / "dataset" / "example.wav"
    assert wav.read_bytes() == b"RIFFwav"  # copied from the checkout by --reb-prepare
    run = target.repo.single_gpu
    target.setup(run)
    cfg = yaml.safe_load(target.arg(run, "--config_path").read_text())
    lines = Path(cfg["train_manifest"]).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{
        "audio": str(wav), "text": "This is a minimal benchmark sample for VoxCPM fine-tuning.",
        "dataset_id": 0}]
    wav.unlink()
    done = target.setup(run, check=False)
    assert done.returncode != 0 and "example.wav" in done.stderr
