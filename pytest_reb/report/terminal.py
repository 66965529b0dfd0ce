"""The terminal pyramid: one block per target, readable in 80 columns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from pytest_reb.outcome import Outcome
from pytest_reb.report.summary import tally
from pytest_reb.tiers import TIERS

_MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "skip"}


def pyramid(outcomes: list[Outcome], *, titles: Mapping[str, str]) -> list[str]:
    """Lines: the pyramid of each target (top tier first), then the totals."""
    lines: list[str] = []
    groups: dict[tuple[str, str], dict[str, Outcome]] = defaultdict(dict)
    for o in outcomes:
        groups[(o.target, o.repo)][o.tier] = o
    for (target, repo), tiers in sorted(groups.items()):
        lines.append(f"{target}  ({repo})")
        for tier in reversed(TIERS):
            o = tiers.get(tier)
            if o is None:
                continue
            width = 2 * (TIERS.index(tier) + 1)
            bar = ("#" if o.status == "passed" else "." if o.status == "failed" else " ") * width
            detail = o.category or ""
            if o.status == "failed" and o.strict != o.compat:
                detail += " (official rule: pass)" if o.compat else ""
            lines.append(f"  {titles[tier]:<20} {_MARK[o.status]:<4} {bar:<12} {detail}"[:79])
            counts = o.evidence.get("counts") if tier == "c5" else None
            if isinstance(counts, dict) and any(counts.values()):
                lines.append(f"  {'':<20} hallucinations: {_c5_counts(counts)}"[:79])
    totals = tally(outcomes)
    parts = []
    for tier in TIERS:
        t = totals.get(tier)
        if t:
            parts.append(f"{tier.upper()} {t['passed']}/{t['applicable']}")
    lines.append("total: " + "  ".join(parts))
    c5 = totals.get("c5")
    if c5:
        other = ", ".join(f"{cat} {n}" for cat, n in sorted(c5["categories"].items())
                          if not cat.endswith("_hallucination"))
        lines.append("C5 hallucinations: " + _c5_counts(c5["hallucinations"])
                     + (f"; {other}" if other else ""))
    return lines


def _c5_counts(counts: object) -> str:
    """``path 1, version 0, capability 2`` from an audit's counts."""
    counts = counts if isinstance(counts, dict) else {}
    return ", ".join(f"{kind} {counts.get(kind, 0)}" for kind in ("path", "version", "capability"))
