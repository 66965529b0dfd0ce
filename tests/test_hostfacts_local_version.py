"""A torch wheel whose metadata names the public version and whose ``version.py`` adds the
build's local label (PyPI's CUDA builds: ``Version: 2.14.1``, ``2.14.1+cu130``) supports the
probe's honest answer; a different public version in the metadata still supports nothing.

Found on the honest apple/ml-aim image of the real runs (docs/real-runs.md, batch B): strict
C5 failed ``torch_version_contradicts_host`` for ``2.14.1+cu130``, which is what the wheel is.
"""

from __future__ import annotations

from pathlib import Path

from test_hostfacts import _layout

from pytest_reb.audit import hostfacts


def test_cuda_wheel_metadata_without_the_local_label(tmp_path: Path) -> None:
    facts = _facts(tmp_path, version_py="2.14.1+cu130", metadata=("2.14.1",))
    assert facts.torch_contradiction("2.14.1+cu130") is None


def test_another_public_version_in_the_metadata_still_contradicts(tmp_path: Path) -> None:
    facts = _facts(tmp_path, version_py="2.14.1+cu130", metadata=("2.13.0",))
    assert facts.torch_contradiction("2.14.1+cu130") is not None


def test_another_local_label_in_the_metadata_still_contradicts(tmp_path: Path) -> None:
    facts = _facts(tmp_path, version_py="2.14.1+cu130", metadata=("2.14.1+cpu",))
    assert facts.torch_contradiction("2.14.1+cu130") is not None


def _facts(root: Path, *, version_py: str, metadata: tuple[str, ...]) -> hostfacts.HostFacts:
    return hostfacts.from_view(_layout(root, version_py=version_py, metadata=metadata),
                               "/opt/env/bin/python")
