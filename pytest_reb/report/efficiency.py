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
    if eff is None:
        return "-"
    if eff.tokens_total is None:
        return f"unknown ({eff.tokens_unknown})"
    text = f"{eff.tokens_in:,} / {eff.tokens_out:,} / {eff.tokens_total:,}"
    return text + (f" ({eff.tokens_unknown} unknown)" if eff.tokens_unknown else "")


def chart_png(points: Sequence[tuple[str, Efficiency, dict[str, float | None]]]) -> bytes:
    """Tokens and preparation time against C3 and C4 success, one point per agent and tier.

    ``points`` are (agent, efficiency, {"c3": pct, "c4": pct}); an agent without a token
    count is left out of the tokens panel and named below it.
    """
    from matplotlib.figure import Figure

    from pytest_reb.report.chart import _png

    fig = Figure(figsize=(9.2, 3.6))
    axes = fig.subplots(1, 2, sharey=True)
    marks = {"c3": ("o", "#2f6db3", "C3 single GPU"), "c4": ("s", "#c77c1a", "C4 multi-GPU")}
    panels = ((axes[0], "preparation time, mean (s)", lambda e: e.prep_mean_s),
              (axes[1], "tokens, total", lambda e: e.tokens_total))
    for ax, label, value in panels:
        missing = []
        for agent, eff, rates in points:
            x = value(eff)
            if x is None:
                missing.append(agent)
                continue
            for tier, (marker, colour, name) in marks.items():
                if rates.get(tier) is not None:
                    ax.scatter([x], [rates[tier]], marker=marker, color=colour, label=name)
            ax.annotate(agent, (x, max((r for r in rates.values() if r is not None),
                                       default=0)), textcoords="offset points",
                        xytext=(4, 4), fontsize=8)
        ax.set_xlabel(label + (f"\nunknown: {', '.join(missing)}" if missing else ""))
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("success (%)")
    handles, labels = axes[0].get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=False))
    if unique:
        axes[0].legend(unique.values(), unique.keys(), fontsize=8, loc="lower right")
    fig.suptitle("Efficiency against C3/C4 success", fontsize=10)
    fig.tight_layout()
    return _png(fig)
