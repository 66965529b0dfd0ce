"""C5 report audit: the agent's self-report against what C2 and C4 observed.

The probe asks for the tiers it compares against through ``ctx.once``, so
``-m c5`` alone still runs them, and a full run reuses their outcomes instead
of running them again.  C4 is asked for only when the report makes a
``ddp_expected_ok`` claim a rule can judge.  The claimed interpreter is
observed here (``observe_python``), never assumed from another tier, because
the claim being audited is the report's ``python_path``, not ``--reb-python``;
a repository whose official validator strips that path has the stripped one
observed for compat.  It is observed in the GPU profile with every GPU of the
target (held as C2 holds them), since three validators read the device count
from their own probe of that interpreter.  With the side-by-side lanes
(``lanes.py``) that observation (``ahead``) is made by the first lane done with
its own tiers, and the probe, in its turn, only compares.
Both verdicts are recorded; the run's mode picks the status.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pytest_reb.evidence import env_size, hostfacts
from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c5_observe import PythonObservation, observe_python
from pytest_reb.pyramid.context import Context, tier_probe
from pytest_reb.rules.c5 import audit
from pytest_reb.rules.c5_compat import compat_path
from pytest_reb.rules.c5_result import AuditResult
from pytest_reb.selfreport import ReportLoad
from pytest_reb.spec import CompatVariant


def _wants_c4(load: ReportLoad, variant: CompatVariant) -> bool:
    """Only a ddp claim needs C4 (true always; false where the variant counts underclaims)."""
    ddp = load.data.get("ddp_expected_ok") if isinstance(load.data, dict) else None
    return ddp is True or (ddp is False and variant.ddp_underclaim)


def _tier_brief(o: Outcome | None) -> dict[str, Any] | None:
    if o is None:
        return None
    return {"status": o.status, "category": o.category, "strict": o.strict, "compat": o.compat,
            "started": o.started}


def _unjudged(strict: AuditResult, outcomes: dict[str, Outcome | None]) -> str | None:
    """Why strict C5 cannot pass: a claim it could not judge because the tier that observes it
    died of ``infra`` (already run once more in a fresh container), or None.

    An unobserved claim is no contradiction, but neither is it a pass: the
    CUDA overclaim of an image whose C2 was killed under it must not pass.
    """
    died = {t: o for t, o in outcomes.items() if o is not None and o.category == "infra"}
    if not died or not strict.inconclusive:
        return None
    claims = ", ".join(sorted({i.field for i in strict.inconclusive}))
    tiers = "; ".join(f"{t.upper()} died of infra ({o.message[:200]})" for t, o in died.items())
    return f"the claim(s) {claims} are unjudged: {tiers}"


def _reported(load: ReportLoad) -> dict[str, Any] | None:
    if load.report is not None:
        return {k: getattr(load.report, k) for k in (
            "python_path", "python_version", "torch_version", "cuda_available", "gpu_count",
            "ddp_expected_ok", "env_tool", "env_name")}
    return None


@dataclass
class Seen:
    """The report's interpreter as C5 observed it in the target: what the audit reads."""

    python: PythonObservation | None
    #: the interpreter the official validator asked, where it strips the report's path
    official_python: PythonObservation | None
    env_size: dict[str, Any]
    #: seconds the questions took (the outcome's duration, with the audit's own)
    took: float


def ahead(ctx: Context) -> Seen:
    """Observe the report's interpreter (``lanes.py`` runs this in lane 2, after C2, so the
    audit in its turn only compares): where the official validator ran its own probe, with
    the run's GPUs held (some take the device count from it), for strict and compat alike.
    The prefix size is measured here too; it is not part of the audit."""
    start = time.monotonic()
    load = ctx.report
    claimed = load.claimed_python
    variant = ctx.repo.c5_compat
    official = compat_path(load.data, variant)  # a validator that strips sees another path
    # C2's probe may answer the strict question (``answers.py``): waited for with no GPU
    # held, since C2 needs the lease to run
    answered = ctx.answers.take(claimed) if claimed else None
    with ctx.leases.hold(len(ctx.target.gpus)) as gpus:
        asked = variant.torch_questions
        python = observe_python(ctx.target, claimed, checkout=ctx.checkout, gpus=gpus,
                                torch_questions=asked, answered=answered) if claimed else None
        official_python = python if official == claimed else (
            observe_python(ctx.target, official, checkout=ctx.checkout, gpus=gpus,
                           torch_questions=asked, answered=answered) if official else None)
    if python is not None and python.runs:  # strict's cross-check; compat never reads it
        python.host = hostfacts.read(ctx.target, claimed)
    took = time.monotonic() - start
    size = (env_size.measure(ctx.target, claimed)
            if claimed and python is not None and python.runs
            else env_size.unknown(claimed, "the report's interpreter does not run"))
    return Seen(python, official_python, size, took)


def probe(ctx: Context) -> Outcome:
    """Audit the report of this target; fails with the first, most serious category."""
    load = ctx.report
    outcomes: dict[str, Outcome | None] = {"c2": ctx.once("c2", tier_probe("c2"))}
    if _wants_c4(load, ctx.repo.c5_compat):
        outcomes["c4"] = ctx.once("c4", tier_probe("c4"))
    seen = ctx.lanes.ahead("c5") if ctx.lanes is not None else None
    side = ctx.lanes.side_by_side("c5") if ctx.lanes is not None else None
    if not isinstance(seen, Seen):  # no lane observed it, or its observation failed
        seen, side = ahead(ctx), None
    start = time.monotonic()
    python, variant = seen.python, ctx.repo.c5_compat
    strict = audit(load, python, outcomes, compat=False)
    compat = audit(load, seen.official_python, outcomes, compat=True, variant=variant)
    chosen = compat if ctx.compat else strict
    unjudged = _unjudged(strict, outcomes)
    o = ctx.outcome("c5", category=chosen.category, message=chosen.message,
                    strict=strict.passed and unjudged is None, compat=compat.passed,
                    findings=[f.to_json() for f in chosen.findings])
    if unjudged is not None and strict.passed and not ctx.compat:
        o.category, o.message = "unjudged", unjudged
    o.evidence = {
        "counts": chosen.counts,
        "inconclusive": [i.to_json() for i in chosen.inconclusive],
        "strict": _mode(strict), "compat": _mode(compat),
        "report_source": load.source,
        "reported": _reported(load),
        "observed": python.to_json() if python else None,
        "tiers": {t: _tier_brief(outcomes.get(t)) for t in ("c2", "c4")},
    }
    if side is not None:
        o.evidence["side_by_side"] = side
    o.duration = round(seen.took + time.monotonic() - start, 3)
    # Not part of the audit (nor of its duration): the report interpreter's prefix size.
    o.evidence["env_size"] = seen.env_size
    return ctx.verdict(o)


def _mode(result: AuditResult) -> dict[str, Any]:
    data = result.to_json()
    data["message"] = result.message
    return data
