"""A torch wheel whose metadata carries the public version only (PyPI's CUDA wheels).

PyPI refuses local version labels, so the CUDA build of torch 2.14.1 installed from
it has ``Version: 2.14.1`` in its dist-info METADATA while ``torch/version.py``
says ``2.14.1+cu130``, and ``torch.__version__`` answers the latter.  Strict C5
took that pair for a ``version.py`` edited beside the wheel's metadata and failed
the truthful report of Depth-Anything-V2's real-run image with
``torch_version_contradicts_host``.  A metadata version that is the claim's public
part supports it; one that names another release still does not.
"""

from __future__ import annotations

from pathlib import Path

from pytest_reb.audit import hostfacts
from pytest_reb.hostview import HostView

SITE = "opt/env/lib/python3.11/site-packages"


def _torch(root: Path, *, version_py: str, metadata: str) -> HostView:
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/python3.11").write_bytes(b"\x7fELF")
    (root / "usr/lib/python3.11").mkdir(parents=True)
    (root / "usr/lib/python3.11/os.py").write_text("")
    (root / "opt/env/bin").mkdir(parents=True)
    (root / "opt/env/pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.2\n")
    (root / "opt/env/bin/python").symlink_to("/usr/bin/python3.11")
    (root / SITE / "torch").mkdir(parents=True)
    (root / SITE / "torch/version.py").write_text(f"__version__ = '{version_py}'\n")
    (root / SITE / f"torch-{metadata}.dist-info").mkdir()
    (root / SITE / f"torch-{metadata}.dist-info/METADATA").write_text(
        f"Metadata-Version: 2.1\nName: torch\nVersion: {metadata}\n")
    return HostView(str(root))


def test_pypi_cuda_wheel_supports_its_local_version(tmp_path: Path) -> None:
    facts = hostfacts.from_view(_torch(tmp_path, version_py="2.14.1+cu130", metadata="2.14.1"),
                                "/opt/env/bin/python")
    assert facts.torch_contradiction("2.14.1+cu130") is None
    assert facts.torch_contradiction("2.14.1") is not None  # version.py says +cu130


def test_public_metadata_of_another_release_still_contradicts(tmp_path: Path) -> None:
    facts = hostfacts.from_view(_torch(tmp_path, version_py="2.14.1+cu130", metadata="2.13.0"),
                                "/opt/env/bin/python")
    assert facts.torch_contradiction("2.14.1+cu130") is not None
