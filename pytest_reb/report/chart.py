"""Charts as PNG (matplotlib), embedded as base64 so a self-contained page stays one file.

Only matplotlib's object API is used (``Figure`` with an Agg canvas): no
pyplot, no global backend switch, so a test suite that plots for itself is
left alone.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pytest_reb.outcome import TIERS
from pytest_reb.report.summary import HALLUCINATIONS

PASSED, FAILED, SKIPPED, UNKNOWN = "#3a9a4f", "#d9534f", "#b0b0b0", "#e8e8e8"
#: One colour per agent, told apart by most eyes (Okabe and Ito's eight, then two more).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442",
           "#000000", "#8c564b", "#7f7f7f")
GPU_TIERS = ("c1", "c2", "c3", "c4")


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    return buf.getvalue()


def pyramid_png(totals: Mapping[str, Mapping[str, Any]], titles: Mapping[str, str],
                *, heading: str) -> bytes:
    """The run as a funnel: one centred bar per tier, C0 at the base.

    Each bar is its tier's denominator (narrower up the pyramid, for the
    shape only); the green middle is the share that passed (for C0, the
    imports that resolved), red what failed, grey what was skipped or has no
    count, light grey a tier nothing applied to.  The text gives the numbers.
    """
    tiers = [t for t in TIERS if t in totals]
    fig = Figure(figsize=(8.2, 0.62 * len(tiers) + 1.1))
    ax = fig.add_subplot()
    for y, tier in enumerate(tiers):
        parts, label = _funnel_parts(tier, totals[tier])
        scale = 1.0 - 0.09 * TIERS.index(tier)  # the pyramid's outline: C0 widest
        whole = (sum(parts.values()) or 1) / scale
        passed = parts["passed"] / whole
        left = -passed / 2
        ax.barh(y, passed, left=left, color=PASSED, height=0.72)
        for key, colour in (("failed", FAILED), ("skipped", SKIPPED)):
            side = parts[key] / whole / 2
            if side:
                ax.barh(y, side, left=left - side, color=colour, height=0.72)
                ax.barh(y, side, left=-left, color=colour, height=0.72)
                left -= side
        if not sum(parts.values()):
            ax.barh(y, scale, left=-scale / 2, color=UNKNOWN, height=0.72)
        ax.text(0.56, y, label, va="center", fontsize=9)
    ax.set_yticks(range(len(tiers)), [titles[t] for t in tiers], fontsize=9)
    ax.set_xlim(-0.55, 1.75)
    ax.set_ylim(-0.6, len(tiers) - 0.4)
    ax.set_xticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(heading, fontsize=10, loc="left")
    ax.legend(handles=[Patch(color=c, label=text) for c, text in (
        (PASSED, "passed / resolved"), (FAILED, "failed / missing"),
        (SKIPPED, "skipped / no count"))], loc="lower right", fontsize=8, frameon=False)
    fig.tight_layout()
    return _png(fig)


def _funnel_parts(tier: str, row: Mapping[str, Any]) -> tuple[dict[str, int], str]:
    if tier == "c0":
        total, missing = row["imports_total"], row["missing_imports"]
        unknown = row["imports_total_all"] - total
        label = f"missing {missing}/{total} imports ({_pct(missing, total)})"
        if row["imports_unknown"]:
            label += f", {row['imports_unknown']} without a count"
        return {"passed": total - missing, "failed": missing, "skipped": unknown}, label
    failed = row["failed"] - row["skipped"]
    label = f"{row['passed']}/{row['applicable']} passed ({_pct(row['passed'], row['applicable'])})"
    if failed or row["skipped"]:
        label += f", {failed} failed" + (f", {row['skipped']} skipped" if row["skipped"] else "")
    if row["not_applicable"]:
        label += f", {row['not_applicable']} n/a"
    if tier == "c5":
        counts = row.get("hallucinations", {})
        label += "\nhallucinations: " + ", ".join(f"{k} {counts.get(k, 0)}"
                                                  for k in HALLUCINATIONS)
    return {"passed": row["passed"], "failed": failed, "skipped": row["skipped"]}, label


@dataclass(frozen=True)
class Series:
    """One agent's bars: C1-C4 successes and denominators; published rows are hatched."""

    label: str
    tiers: Mapping[str, tuple[int | None, int | None]]
    published: bool = False


def grouped_bars_png(series: Sequence[Series], *, heading: str) -> bytes:
    """C1-C4 success rates, a group per tier and a bar per agent, ``s/d`` over each bar."""
    series = [s for s in series if any(d for _, d in s.tiers.values())]  # no bar: no legend
    n = max(len(series), 1)
    width = 0.8 / n
    fig = Figure(figsize=(max(7.5, 1.9 * len(GPU_TIERS) + 0.35 * n * len(GPU_TIERS)), 4.6))
    ax = fig.add_subplot()
    colours = [PALETTE[i % len(PALETTE)] for i in range(n)]
    for i, s in enumerate(series):
        xs, heights, notes = [], [], []
        for x, tier in enumerate(GPU_TIERS):
            success, denom = s.tiers.get(tier, (None, None))
            if success is None or not denom:
                continue
            xs.append(x - 0.4 + width * (i + 0.5))
            heights.append(100 * success / denom)
            notes.append(f"{success}/{denom}")
        label = f"{s.label} (published)" if s.published else s.label
        bars = ax.bar(xs, heights, width * 0.92, label=label, color=colours[i],
                      hatch="//" if s.published else None, edgecolor="white", linewidth=0.5)
        for bar, note in zip(bars, notes, strict=True):
            ax.annotate(note, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                        textcoords="offset points")
    ax.set_xticks(range(len(GPU_TIERS)), ["C1 CPU", "C2 CUDA", "C3 single GPU", "C4 multi-GPU"])
    ax.set_ylim(0, 112)
    ax.set_ylabel("success (% of applicable)")
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.set_title(heading, fontsize=10, loc="left")
    # below the axes: over them a legend of many agents covers the bars of the last tier
    ax.legend(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.08),
              ncols=min(n, 4))
    fig.tight_layout()
    return _png(fig)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"
