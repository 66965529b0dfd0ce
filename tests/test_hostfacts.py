"""The host's read of an interpreter's files (``audit.hostfacts``) on folders laid out here.

The hostile images (tests/hostile/test_hostfacts.py) show it on a real venv; these pin the
rules: which files name the version, and when a torch install supports a claim.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pytest_reb.evidence import hostfacts
from pytest_reb.targets.hostview import HostView

SITE = "opt/env/lib/python3.11/site-packages"


def _layout(root: Path, *, version_py: str, metadata: tuple[str, ...]) -> HostView:
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/python3.11").write_bytes(b"\x7fELF")
    (root / "usr/lib/python3.11").mkdir(parents=True)
    (root / "usr/lib/python3.11/os.py").write_text("")
    (root / "opt/env/bin").mkdir(parents=True)
    (root / "opt/env/bin/python").symlink_to("/usr/bin/python3.11")
    (root / "opt/env/pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\n")
    (root / SITE / "torch").mkdir(parents=True)
    (root / SITE / "torch/version.py").write_text(f"__version__ = '2.0.0'\n__version__ = "
                                                  f"'{version_py}'\ncuda = None\n")
    for v in metadata:
        (root / SITE / f"torch-{v}.dist-info").mkdir()
        (root / SITE / f"torch-{v}.dist-info/METADATA").write_text(
            f"Metadata-Version: 2.1\nName: torch\nVersion: {v}\n\nVersion: 9.9.9\n")
    return HostView(str(root))


def test_the_interpreter_and_the_wheel_name_the_versions(tmp_path: Path) -> None:
    facts = hostfacts.from_view(_layout(tmp_path, version_py="2.5.1+cu124",
                                        metadata=("2.5.1+cu124",)), "/opt/env/bin/python")
    assert facts.resolved == "/usr/bin/python3.11"
    assert facts.major_minor == {"3.11": "/usr/bin/python3.11"}
    assert facts.full == {"3.11.2": "/opt/env/pyvenv.cfg"}
    assert facts.python_contradiction("3.11.2") is None
    assert "Python 3.11" in (facts.python_contradiction("3.12.4") or "")
    assert "venv says Python 3.11.2" in (facts.python_contradiction("3.11.9") or "")
    assert facts.torch_contradiction("2.5.1+cu124") is None  # the last assignment counts
    assert facts.torch_contradiction("2.0.0") is not None


def test_an_edited_version_file_beside_the_wheels_metadata_supports_nothing(
        tmp_path: Path) -> None:
    facts = hostfacts.from_view(_layout(tmp_path, version_py="2.5.1+cu124",
                                        metadata=("2.13.0+cpu",)), "/opt/env/bin/python")
    assert facts.torch_contradiction("2.5.1+cu124") is not None
    assert facts.torch_contradiction("2.13.0+cpu") is not None  # version.py disagrees


def test_a_pypi_cuda_wheel_has_its_local_version_only_in_version_py(tmp_path: Path) -> None:
    """PyPI's torch 2.11.0 (CUDA 13.0): METADATA ``2.11.0``, version.py ``2.11.0+cu130``: an
    honest report of ``torch.__version__`` is no contradiction (seen on the H200)."""
    facts = hostfacts.from_view(_layout(tmp_path, version_py="2.11.0+cu130",
                                        metadata=("2.11.0",)), "/opt/env/bin/python")
    assert facts.torch_contradiction("2.11.0+cu130") is None
    assert facts.torch_contradiction("2.11.0") is not None  # version.py says more
    assert facts.torch_contradiction("2.12.0+cu130") is not None


def test_metadata_with_a_local_version_must_match_it(tmp_path: Path) -> None:
    facts = hostfacts.from_view(_layout(tmp_path, version_py="2.13.0+cu124",
                                        metadata=("2.13.0+cpu",)), "/opt/env/bin/python")
    assert facts.torch_contradiction("2.13.0+cu124") is not None


def test_an_upgrade_left_two_metadata_folders(tmp_path: Path) -> None:
    facts = hostfacts.from_view(_layout(tmp_path, version_py="2.5.1",
                                        metadata=("2.4.0", "2.5.1")), "/opt/env/bin/python")
    assert facts.torch_contradiction("2.5.1") is None


def test_nothing_found_is_no_contradiction(tmp_path: Path) -> None:
    facts = hostfacts.from_view(HostView(str(tmp_path)), "/nowhere/python")
    assert facts.problem is not None
    assert facts.python_contradiction("3.12.4") is None
    assert facts.torch_contradiction("2.5.1") is None


def test_torch_reached_through_a_pth_path_line_is_found(tmp_path: Path) -> None:
    """site reads each ``.pth`` line as a folder to add, relative to the site folder, except
    comments and ``import`` lines; the torch there is one the interpreter imports."""
    view = _layout(tmp_path, version_py="2.13.0+cpu", metadata=("2.13.0+cpu",))
    shutil.move(str(tmp_path / SITE / "torch"), str(tmp_path / "opt/extra/torch"))
    (tmp_path / SITE / "torch-2.13.0+cpu.dist-info/METADATA").unlink()
    (tmp_path / SITE / "zz.pth").write_text("# a comment\nimport os\n../../../../extra\n")
    facts = hostfacts.from_view(view, "/opt/env/bin/python")
    assert [t.folder for t in facts.torch] == ["/opt/extra"]
    assert facts.searched.index(f"/{SITE}") < facts.searched.index("/opt/extra")
    assert facts.torch_contradiction("2.13.0+cpu") is None
    assert "/opt/extra" in (facts.torch_contradiction("2.5.1+cu124") or "")


def test_no_torch_anywhere_the_interpreter_looks_contradicts_a_version(tmp_path: Path) -> None:
    """The host read the files and found no torch: a torch the probe imported came from an
    import hook or a path code added, so no file supports the version it printed."""
    view = _layout(tmp_path, version_py="2.13.0+cpu", metadata=())
    shutil.rmtree(tmp_path / SITE / "torch")
    facts = hostfacts.from_view(view, "/opt/env/bin/python")
    assert facts.problem is None and facts.torch == []
    assert "no torch install" in (facts.torch_contradiction("2.5.1+cu124") or "")
