"""The environment's size (C5's efficiency figure): walked once per image, then read back.

On the demo image with the real engine: the first measurement walks the
report interpreter's prefix in a container; a second one, from a new target
of the same image, reads the host's cache by the image's id and gives the same
figures without running the probe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_reb.evidence import env_size
from pytest_reb.targets import DockerTarget, Limits

pytestmark = pytest.mark.container

PYTHON = "/opt/envs/tinynet/bin/python"


def test_the_size_is_measured_once_per_image(demo_image: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = DockerTarget(demo_image, run_id="tests-env-size", gpus=[], limits=Limits())
    try:
        walked = env_size.measure(first, PYTHON)
    finally:
        first.close()
    assert walked["status"] == "measured" and walked["bytes"] > 0 and "cached" not in walked
    assert len(list((tmp_path / "pytest-reb" / "env-size").glob("*.json"))) == 1
    second = DockerTarget(demo_image, run_id="tests-env-size", gpus=[], limits=Limits())
    try:
        read = env_size.measure(second, PYTHON)
        other = env_size.measure(second, "/usr/bin/python3")  # another interpreter: walked
    finally:
        second.close()
    assert read["cached"] is True
    assert {k: read[k] for k in ("bytes", "files", "prefix")} == \
        {k: walked[k] for k in ("bytes", "files", "prefix")}
    assert "cached" not in other


def test_a_failed_measurement_is_not_kept(demo_image: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    target = DockerTarget(demo_image, run_id="tests-env-size", gpus=[], limits=Limits())
    try:
        found = env_size.measure(target, "/nowhere/python")
    finally:
        target.close()
    assert found["status"] == "unknown"
    assert not (tmp_path / "pytest-reb" / "env-size").exists()
