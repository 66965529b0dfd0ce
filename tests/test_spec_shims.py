"""``Repo.shims``: a run's ``shim_dir=SHIMS`` is its repository's shim folder, by default
``shims/<module stem>`` beside the module that makes the ``Repo``."""

from __future__ import annotations

from pathlib import Path

from pytest_reb.spec import SHIMS, Repo, Retry, Run

HERE = str(Path(__file__).parent / "shims" / Path(__file__).stem)


def test_the_default_folder_is_beside_the_module() -> None:
    inner = Run(["x"], shim_dir=SHIMS)
    repo = Repo("me/shimmed", commit="0" * 40,
                cpu=Run(["a"], shim_dir=SHIMS, together=[inner]),
                single_gpu=Run(["b"], retry=Retry("boom", inner)),
                multi_gpu=Run(["c"]))
    assert repo.shims == HERE
    assert repo.cpu is not None and repo.single_gpu is not None and repo.multi_gpu is not None
    assert repo.cpu.shim_dir == HERE and repo.cpu.together[0].shim_dir == HERE
    assert repo.single_gpu.shim_dir is None
    assert repo.single_gpu.retry is not None and repo.single_gpu.retry.run.shim_dir == HERE
    assert repo.multi_gpu.shim_dir is None


def test_a_folder_of_its_own() -> None:
    repo = Repo("me/shimmed", commit="0" * 40, shims="/opt/shims",
                cpu=Run(["a"], shim_dir=SHIMS))
    assert repo.cpu is not None and repo.cpu.shim_dir == "/opt/shims"


def test_a_repository_without_shims_names_none() -> None:
    repo = Repo("me/plain", commit="0" * 40, cpu=Run(["a"], shim_dir="/elsewhere"))
    assert repo.shims is None and repo.cpu is not None and repo.cpu.shim_dir == "/elsewhere"
