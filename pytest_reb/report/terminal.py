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
    totals = tally(outcomes)
    parts = []
    for tier in TIERS:
        t = totals.get(tier)
        if t:
            parts.append(f"{tier.upper()} {t['passed']}/{t['applicable']}")
    lines.append("total: " + "  ".join(parts))
    return lines
