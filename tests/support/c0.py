"""What the C0 tests share: the demo's source tree, and a C0 context on this machine.

``local_ctx`` runs the tier on ``local://`` (the host's node and pyright) against a checkout
and an interpreter the test chooses, so the C0 tests, and the diagnosis tests that need a real
C0 outcome, run it without Docker.
"""

from __future__ import annotations

from pathlib import Path

from pytest_reb.pyramid.context import Context
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import ReportLoad
from pytest_reb.spec import Repo
from pytest_reb.targets import LocalTarget, Target

#: The demo repository's source, whose imports are the demo module's ``imports_total``.
DEMO_SOURCE = Path(__file__).resolve().parents[2] / "demo" / "tinynet"


def local_ctx(repo: Path, python: str | None, *, compat: bool = False, total: int = 0,
              target: Target | None = None, report: ReportLoad | None = None,
              counts_none: str = "") -> Context:
    """C0's context for ``repo`` on this machine: ``python`` as the interpreter under test
    (``--reb-python``; None: the one ``report`` names, or no report at all)."""
    local = target or LocalTarget(gpus=[])
    return Context(repo=Repo("t/local", commit="0" * 40, imports_total=total,
                             c0_official_counts_none=counts_none),
                   target_name="local://", connect=lambda: local,
                   read_report=lambda _: report or ReportLoad("none", category="missing_report",
                                                            message="no report at x"),
                   options=RebOptions(python=python, repo_dir=str(repo), compat=compat))
