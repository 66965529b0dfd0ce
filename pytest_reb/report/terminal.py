"""The terminal pyramid: a compact block per target and the totals, readable in 80 columns.

Each target's block stands the tiers up as the paper draws them, C0 the
widest at the bottom: ``#`` passed, ``.`` failed, blank not applicable.
The totals give the C0 figure, C1-C5 passed/failed/skipped over their
denominators, and the C5 hallucination counts by kind.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Mapping

from pytest_reb.outcome import TIERS, Outcome, mib_of, one_line
from pytest_reb.report.summary import (
    HALLUCINATIONS,
    missing_count,
    root_causes_by_environment,
    tally,
)

WIDTH = 79
_MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "skip"}
_BAR = 11  # C0's width; each tier above is two narrower


def pyramid(outcomes: list[Outcome], *, titles: Mapping[str, str]) -> list[str]:
    """Lines: the pyramid of each target (top tier first), then the totals."""
    lines: list[str] = []
    groups: dict[tuple[str, str], dict[str, Outcome]] = defaultdict(dict)
    for o in outcomes:
        groups[(o.target, o.repo)][o.tier] = o
    for (target, repo), tiers in sorted(groups.items()):
        lines.append(_cut(f"{target}  ({repo})"))
        for tier in reversed(TIERS):
            o = tiers.get(tier)
            if o is not None:
                lines.extend(_tier_lines(o, titles[tier]))
    lines.extend(totals(outcomes, titles=titles))
    return lines


def _tier_lines(o: Outcome, title: str) -> list[str]:
    width = _BAR - 2 * TIERS.index(o.tier)
    fill = {"passed": "#", "failed": "."}.get(o.status, " ")
    bar = (fill * width).center(_BAR)
    lines = [_cut(f"  {title:<18} {bar}  {_MARK[o.status]:<4}  {_detail(o)}".rstrip())]
    counts = o.evidence.get("counts") if o.tier == "c5" else None
    if isinstance(counts, dict) and any(counts.values()):
        lines.append(_cut(f"  {'':<18} hallucinations: {_c5_counts(counts)}"))
    return lines


def _detail(o: Outcome) -> str:
    """The few words after the verdict: category, C0 figure, official verdict, env size."""
    parts: list[str] = []
    if o.tier == "c0":
        missing = missing_count(o)
        total = o.evidence.get("imports_total")
        parts.append(f"{missing}/{total} imports missing" if missing is not None else "no count")
    if o.status == "skipped" and o.category == "not_applicable":
        parts.append(f"n/a: {o.message}" if o.message else "n/a")
    elif o.category:
        official = (" (official: pass)"
                    if o.status == "failed" and o.compat and o.tier != "c0" else "")
        parts.append(o.category + official)
    mib = mib_of(o.evidence.get("env_size")) if o.tier == "c5" else None
    if mib is not None:
        parts.append(f"env {mib} MiB")
    return "; ".join(parts)


def totals(outcomes: list[Outcome], *, titles: Mapping[str, str]) -> list[str]:
    """The total line, the per-tier counts, and the C5 line."""
    t = tally(outcomes)
    head = []
    for tier in TIERS:
        if tier not in t:
            continue
        if tier == "c0":
            head.append(f"C0 {t[tier]['missing_imports']}/{t[tier]['imports_total']} missing")
        else:
            head.append(f"{tier.upper()} {t[tier]['passed']}/{t[tier]['applicable']}")
    lines = [_cut("total: " + "  ".join(head))]
    targets = len({(o.target, o.repo) for o in outcomes})
    lines.append(_row(f"over {targets} target(s)", "passed", "failed", "skipped", "n/a", "of",
                      "rate"))
    for tier in TIERS:
        if tier not in t:
            continue
        row = t[tier]
        if tier == "c0":
            lines.append(_cut(f"  {titles[tier]:<20}{_c0_figure(row)}"))
            continue
        lines.append(_row(titles[tier], row["passed"], row["failed"] - row["skipped"],
                          row["skipped"], row["not_applicable"], row["applicable"],
                          _pct(row["passed"], row["applicable"])))
    c5 = t.get("c5")
    if c5:
        other = ", ".join(f"{cat} {n}" for cat, n in sorted(c5["categories"].items())
                          if not cat.endswith("_hallucination"))
        lines.append(_cut("C5 hallucinations: " + _c5_counts(c5["hallucinations"])
                          + (f"; {other}" if other else "")))
        env = c5["env_size"]
        if env["measured"]:
            lines.append(_cut(f"env size: mean {env['mean_mib']:g} MiB over {env['measured']} "
                              f"measured, {env['unknown']} unknown"))
    lines.extend(root_cause_lines(outcomes))
    return lines


def root_cause_lines(outcomes: list[Outcome]) -> list[str]:
    """``root causes: native_extension 2, ...``: failed environments per class, if any.

    Wrapped rather than cut: every class a run found is a number a person reads.
    """
    counts = root_causes_by_environment(outcomes)
    if not counts:
        return []
    return textwrap.wrap(one_line(", ".join(f"{c} {n}" for c, n in counts.items())), WIDTH,
                         initial_indent="root causes: ", subsequent_indent=" " * 13)


def _row(title: str, *cells: object) -> str:
    """One line of the totals table: passed, failed, skipped, n/a, denominator, rate."""
    return f"  {title:<20}" + "".join(f"{c!s:>8}" for c in cells)


def _c0_figure(row: Mapping[str, int]) -> str:
    text = (f"missing {row['missing_imports']}/{row['imports_total']} imports "
            f"({_pct(row['missing_imports'], row['imports_total'])})")
    if row["imports_unknown"]:
        text += f"; {row['imports_unknown']} target(s) without a count"
    return text


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _c5_counts(counts: object) -> str:
    """``path 1, version 0, capability 2`` from an audit's counts."""
    counts = counts if isinstance(counts, dict) else {}
    return ", ".join(f"{kind} {counts.get(kind, 0)}" for kind in HALLUCINATIONS)


def _cut(line: str) -> str:
    """One terminal line: the target's names and messages in it cannot start another."""
    line = one_line(line)
    return line if len(line) <= WIDTH else line[:WIDTH - 3] + "..."
