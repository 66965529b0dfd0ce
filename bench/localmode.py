"""The benches' ``--local`` mode: the demo on ``local://`` (this machine, no Docker), as the
GPU machines run it (docs/gpu_run.sh), for ``scaling.py`` and ``overhead.py``.

The interpreter under test is ``--python``; ``--reb-repo-dir`` is the demo's checkout at its
pinned commit (``python -m pytest_reb.loop.demo checkout DIR``, or made by the bench with git
alone); the agent's report is written from that interpreter's own facts.  A checkout of this
repository carried to a machine where it is not installed still runs (``importable``; the
plugin named with ``pytest_reb.plugin.load_args``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import ROOT

#: The agent's report, as docs/gpu_run.sh writes it: the interpreter's own facts.
REPORT_SNIPPET = """\
import json, platform, sys
try:
    import torch
except Exception:
    torch = None
cuda = bool(torch is not None and torch.cuda.is_available())
json.dump({"python_path": sys.executable, "python_version": platform.python_version(),
           "torch_version": None if torch is None else torch.__version__,
           "cuda_available": cuda, "gpu_count": torch.cuda.device_count() if cuda else 0,
           "ddp_expected_ok": None, "env_tool": "none", "env_name": None,
           "notes": "written by a pytest-reb bench in --local mode"}, open(sys.argv[1], "w"))
"""


@dataclass(frozen=True)
class Local:
    """The ``local://`` mode's setting: the interpreter under test, the demo's checkout and
    the report file (relative to the bench's folder)."""

    python: str
    checkout: Path
    report: str = "report.json"

    def pytest_args(self) -> list[str]:
        """What a pytest run on ``local://`` adds to its command line (a matrix row names the
        host and the report itself; a single run passes ``--reb-host`` and
        ``--agent-report`` too)."""
        return ["--reb-python", self.python, "--reb-repo-dir", str(self.checkout)]


def importable() -> None:
    """Make ``pytest_reb`` importable here and in the runs the bench starts, from this
    checkout, where it is not installed (the GPU machines)."""
    if importlib.util.find_spec("pytest_reb") is None:
        sys.path.insert(0, str(ROOT))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


def demo_checkout(dest: Path) -> Path:
    """The demo's checkout at its pinned commit, made offline (git alone, as ``python -m
    pytest_reb.loop.demo checkout`` makes it); exits with the reason when it cannot be made."""
    try:
        from pytest_reb.loop.demo.checkout import make_demo_checkout
        from pytest_reb.loop.images import ImageError
    except ImportError as exc:
        sys.exit(f"--local: cannot make the demo checkout here ({exc}); make it where "
                 "pytest-reb's dependencies are installed with 'python -m pytest_reb.loop.demo "
                 "checkout DIR' and pass --local DIR")
    try:
        make_demo_checkout(dest, ROOT / "demo" / "tinynet")
    except (ImageError, OSError) as exc:
        sys.exit(f"--local: the demo checkout could not be made in {dest}: {exc}; make it with "
                 "'python -m pytest_reb.loop.demo checkout DIR' and pass --local DIR")
    return dest


def setting(checkout: str, python: str, where: Path) -> Local:
    """``--local CHECKOUT`` (empty: made in ``where``) with ``--python``, its report written
    in ``where``."""
    local = Local(python=python, checkout=(Path(checkout).resolve() if checkout
                                           else demo_checkout(where / "demo-checkout")))
    done = subprocess.run([python, "-", str(where / local.report)], input=REPORT_SNIPPET,
                          text=True, capture_output=True, check=False)
    if done.returncode != 0:
        sys.exit(f"--local: {python} could not write the report: {done.stderr.strip()[-2000:]}")
    return local


def add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``--local [CHECKOUT]`` (``what`` says what it runs on ``local://``) and ``--python``."""
    parser.add_argument("--local", nargs="?", const="", default=None, metavar="CHECKOUT",
                        help=f"{what} on local:// (no Docker); CHECKOUT is the demo's checkout "
                             "(python -m pytest_reb.loop.demo checkout DIR), made here if not "
                             "given")
    parser.add_argument("--python", default=sys.executable,
                        help="--local: the interpreter under test (default: this one)")


def checked(parser: argparse.ArgumentParser, checkout: str | None) -> None:
    """``--local DIR`` must name a git checkout (``parser.error`` otherwise)."""
    if checkout and not (Path(checkout) / ".git").is_dir():
        parser.error(f"--local {checkout}: no git checkout there (python -m "
                     "pytest_reb.loop.demo checkout DIR makes one)")
