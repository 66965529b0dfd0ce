"""``summary.json``: per target outcomes and the aggregate, with the official denominators.

A tier that does not apply to a repository (skipped ``not_applicable``) leaves
the denominator, as officially; a tier that applies but did not pass counts
as a failure whatever the reason, also as officially.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from pytest_reb.outcome import Outcome
from pytest_reb.tiers import TIERS

#: The denominators of the full benchmark (all 44 repositories).
OFFICIAL_DENOMINATORS = {"c0": 2858, "c1": 29, "c2": 44, "c3": 43, "c4": 32}


def applies(o: Outcome) -> bool:
    return not (o.status == "skipped" and o.category == "not_applicable")


def tally(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """Per tier: passed, failed, not applicable, applicable, and the other verdict's passes."""
    out: dict[str, dict[str, Any]] = {}
    for tier in TIERS:
        mine = [o for o in outcomes if o.tier == tier]
        if not mine:
            continue
        applicable = [o for o in mine if applies(o)]
        out[tier] = {
            "passed": sum(o.status == "passed" for o in applicable),
            "failed": sum(o.status != "passed" for o in applicable),
            "not_applicable": len(mine) - len(applicable),
            "applicable": len(applicable),
            "strict_passed": sum(bool(o.strict) for o in applicable),
            "compat_passed": sum(bool(o.compat) for o in applicable),
            "categories": dict(Counter(o.category for o in applicable
                                       if o.status != "passed" and o.category)),
        }
        if tier == "c5":
            out[tier]["hallucinations"] = hallucinations(applicable)
    return out


def hallucinations(outcomes: list[Outcome]) -> dict[str, int]:
    """C5: findings per kind summed over targets (the official c5_path_sum ...), lower is better."""
    sums = dict.fromkeys(("path", "version", "capability"), 0)
    for o in outcomes:
        counts = o.evidence.get("counts")
        if isinstance(counts, dict):
            for kind in sums:
                value = counts.get(kind)
                sums[kind] += value if isinstance(value, int) else 0
    return sums


def build(outcomes: list[Outcome], *, run_id: str, compat: bool) -> dict[str, Any]:
    """The whole summary document."""
    by_target: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_target[(o.target, o.repo)].append(o)
    targets = []
    for (target, repo), mine in sorted(by_target.items()):
        targets.append({
            "target": target, "repo": repo, "agent": mine[0].agent,
            "tiers": {o.tier: {"status": o.status, "category": o.category, "message": o.message,
                               "strict": o.strict, "compat": o.compat,
                               "duration": o.duration, "evidence": _short(o)}
                      for o in sorted(mine, key=lambda o: o.tier)},
        })
    agents: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        agents[o.agent or "-"].append(o)
    return {
        "run_id": run_id,
        "mode": "compat" if compat else "strict",
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "targets": targets,
        "totals": tally(outcomes),
        "agents": {a: tally(os_) for a, os_ in sorted(agents.items())},
        "official_denominators": OFFICIAL_DENOMINATORS,
    }


def _short(o: Outcome) -> dict[str, Any]:
    keep = ("gpu_holders", "observed", "gpus_needed", "gpus_available", "missing", "imports_total",
            "counts")
    return {k: v for k, v in o.evidence.items() if k in keep}
