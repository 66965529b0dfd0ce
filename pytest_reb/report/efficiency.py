"""The paper's efficiency columns: preparation time and tokens per agent, from agent runs.

``reb agent run`` records each run (``agent_runs.jsonl``); the verification's outcomes
hold success and environment size. Preparation time is the agent's wall time (officially
``agent_end - agent_start``), shown as mean and median since one stuck run moves a mean a
lot; a timed-out run counts with the time it was given. Tokens are summed over the runs
whose CLI reported them, and the runs that did not are counted as unknown, never as 0
(the official export summed a Langfuse window over all jobs, or wrote a stub).

A run that never got to work (the agent could not reach its model, or stopped on its own
connection or authentication error) is no preparation time and no tokens: it is left out
of both and counted in a column of its own. It was never committed, so it is in no
verification denominator either.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: Statuses of runs that never got to work (``pytest_reb.loop.agent.run``).
NOT_STARTED = ("agent_unreachable", "agent_error")


class AgentRun(Protocol):
    """What a run record (``pytest_reb.loop.agent.run.AgentRun``) gives the table: report/ reads
    records, it does not import the machinery that writes them."""

    repo: str
    agent: str
    started: float
    wall_s: float | None
    timed_out: bool
    tokens: dict[str, Any] | str
    status: str


@dataclass
class Efficiency:
    """One agent's runs, summarised."""

    runs: int
    timed_out: int
    prep_mean_s: float | None
    prep_median_s: float | None
    tokens_in: int | None  # sums over the runs that reported usage
    tokens_out: int | None
    tokens_known: int
    tokens_unknown: int
    not_started: int = 0

    @property
    def tokens_total(self) -> int | None:
        if self.tokens_in is None or self.tokens_out is None:
            return None
        return self.tokens_in + self.tokens_out

    @property
    def tokens_total_avg(self) -> float | None:
        total = self.tokens_total
        return None if total is None or not self.tokens_known else total / self.tokens_known


def summarise(runs: Iterable[AgentRun]) -> dict[str, Efficiency]:
    """Per agent name, the efficiency of its runs; the latest run of a (repo, agent) wins."""
    latest: dict[tuple[str, str], AgentRun] = {}
    for run in runs:
        key = (run.repo, run.agent)
        if key not in latest or run.started >= latest[key].started:
            latest[key] = run
    by_agent: dict[str, list[AgentRun]] = defaultdict(list)
    for run in latest.values():
        by_agent[run.agent].append(run)
    return {agent: _of(items) for agent, items in by_agent.items()}


def _of(every: Sequence[AgentRun]) -> Efficiency:
    runs = [r for r in every if r.status not in NOT_STARTED]
    times = [r.wall_s for r in runs if r.wall_s is not None]
    usage = [r.tokens for r in runs if isinstance(r.tokens, dict)]
    return Efficiency(
        runs=len(runs), timed_out=sum(r.timed_out for r in runs),
        prep_mean_s=round(statistics.fmean(times), 2) if times else None,
        prep_median_s=round(statistics.median(times), 2) if times else None,
        tokens_in=sum(int(u["input"]) for u in usage) if usage else None,
        tokens_out=sum(int(u["output"]) for u in usage) if usage else None,
        tokens_known=len(usage), tokens_unknown=len(runs) - len(usage),
        not_started=len(every) - len(runs))


def columns() -> list[str]:
    """CSV columns: the official names where the official table has them (§10.2)."""
    return ["agent_wall_time_avg_sec", "agent_wall_time_median_sec", "agent_time_valid_jobs",
            "agent_timed_out_jobs", "agent_tokens_input_sum", "agent_tokens_output_sum",
            "agent_tokens_total_sum", "agent_tokens_total_avg", "agent_tokens_unknown_jobs",
            "agent_not_started_jobs"]


def record(eff: Efficiency | None, *, published: bool) -> dict[str, Any]:
    """The CSV cells (None is an empty cell)."""
    if eff is None:
        return {c: None for c in columns()} | {"agent_time_valid_jobs": None if published else 0}
    avg = eff.tokens_total_avg
    return {
        "agent_wall_time_avg_sec": _fixed(eff.prep_mean_s),
        "agent_wall_time_median_sec": _fixed(eff.prep_median_s),
        "agent_time_valid_jobs": eff.runs, "agent_timed_out_jobs": eff.timed_out,
        "agent_tokens_input_sum": eff.tokens_in, "agent_tokens_output_sum": eff.tokens_out,
        "agent_tokens_total_sum": eff.tokens_total,
        "agent_tokens_total_avg": None if avg is None else f"{avg:.1f}",
        "agent_tokens_unknown_jobs": eff.tokens_unknown,
        "agent_not_started_jobs": eff.not_started,
    }


def _fixed(value: float | None) -> str | None:
    return None if value is None else f"{value:.2f}"


def time_cell(eff: Efficiency | None) -> str:
    if eff is None:
        return "-"
    notes = [f"{n} {what}" for n, what in ((eff.timed_out, "timed out"),
                                           (eff.not_started, "not started")) if n]
    text = "unknown" if eff.prep_mean_s is None else \
        f"{eff.prep_mean_s:.1f} / {eff.prep_median_s:.1f} s"
    return text + (f" ({', '.join(notes)})" if notes else "")


def tokens_cell(eff: Efficiency | None) -> str:
    if eff is None or not eff.runs:  # no run got to work: no tokens to know, none unknown
        return "-"
    if eff.tokens_total is None:
        return f"unknown ({eff.tokens_unknown})"
    text = f"{eff.tokens_in:,} / {eff.tokens_out:,} / {eff.tokens_total:,}"
    return text + (f" ({eff.tokens_unknown} unknown)" if eff.tokens_unknown else "")


#: C3 a hollow circle, C4 a filled square drawn smaller: where both rates are equal, the
#: circle rings the square and both are seen.
MARKS = {"c3": dict(marker="o", s=90, facecolors="none", linewidths=1.6),
         "c4": dict(marker="s", s=28)}


def chart_png(points: Sequence[tuple[str, Efficiency, dict[str, float | None]]]) -> bytes:
    """Tokens and preparation time against C3 and C4 success: one colour per agent, C3 a
    hollow circle and C4 a filled square joined by a line, the agent's name beside them.

    ``points`` are (agent, efficiency, {"c3": pct, "c4": pct}); an agent without a value for
    a panel (never started, no tokens reported) or without a C3/C4 verdict (not verified
    yet) is left out of it and named under it, saying which. The legend sits below the
    panels, never over a point.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    from pytest_reb.report.chart import PALETTE, _png

    fig = Figure(figsize=(9.6, 4.6))
    axes = fig.subplots(1, 2, sharey=True)
    panels = ((axes[0], "preparation time, mean (s)", lambda e: e.prep_mean_s),
              (axes[1], "tokens, total", lambda e: e.tokens_total))
    colour = {agent: PALETTE[i % len(PALETTE)] for i, (agent, _, _) in enumerate(points)}
    for ax, label, value in panels:
        unverified, no_value = [], []
        for agent, eff, rates in points:
            x = value(eff)
            ys = {t: r for t, r in rates.items() if r is not None}
            if not ys:
                unverified.append(agent)
            elif x is None:
                no_value.append(agent)
            if x is None or not ys:
                continue
            if len(ys) == 2:
                ax.plot([x, x], [ys["c3"], ys["c4"]], color=colour[agent], linewidth=0.8,
                        alpha=0.6)
            for tier, y in ys.items():
                style = dict(MARKS[tier])
                if tier == "c3":
                    style["edgecolors"] = colour[agent]
                else:
                    style["color"] = colour[agent]
                ax.scatter([x], [y], zorder=3, **style)
            ax.annotate(agent, (x, max(ys.values())), textcoords="offset points",
                        xytext=(6, 5), fontsize=8, color=colour[agent])
        notes = [f"{what}: {', '.join(names)}" for what, names in (
            ("unknown", no_value), ("no C3/C4 verdict", unverified)) if names]
        ax.set_xlabel("\n".join([label, *notes]), fontsize=9)
        ax.set_ylim(-5, 112)
        ax.margins(x=0.25)
        ax.set_xlim(left=0)  # a time or a count from 0: one agent's point is not stretched
        ax.grid(alpha=0.3)
    axes[1].xaxis.set_major_formatter(FuncFormatter(_count))
    axes[0].set_ylabel("success (%)")
    tiers = [Line2D([], [], linestyle="none", color="#444444", markerfacecolor="none",
                    marker="o", markersize=9, label="C3 single GPU (hollow circle)"),
             Line2D([], [], linestyle="none", color="#444444", marker="s", markersize=5,
                    label="C4 multi-GPU (filled square)")]
    fig.legend(handles=tiers, loc="lower center", ncols=2, fontsize=8, frameon=False)
    fig.suptitle("Efficiency against C3/C4 success", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return _png(fig)


def _count(value: float, _: object) -> str:
    """A token count as people read it: 950k, 3.7M (no ``1e6`` multiplier off the axis)."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"
