"""The audit's one entry point: the report's claims against what was observed, in one mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_reb.rules.c5_compat import Compat
from pytest_reb.rules.c5_strict import Strict
from pytest_reb.variants import MAJORITY, CompatVariant

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome
    from pytest_reb.rules.c5_evidence import PythonObservation
    from pytest_reb.rules.c5_result import AuditResult
    from pytest_reb.selfreport import ReportLoad


def audit(load: ReportLoad, python: PythonObservation | None,
          outcomes: Mapping[str, Outcome | None], *, compat: bool,
          variant: CompatVariant = MAJORITY) -> AuditResult:
    """Judge the report's claims against what was observed; pure, and never raises.

    ``outcomes`` holds the C2 and C4 outcomes (absent or None: not observed).
    ``variant`` is the repository's official validator (``Repo.c5_compat``),
    read in compat mode only: strict judges every repository alike.
    """
    if compat:
        return Compat(load, python, outcomes, variant).run()
    return Strict(load, python, outcomes).run()
