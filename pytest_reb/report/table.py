"""``reb table``: the master table across runs and agents, as CSV, Markdown and an HTML page.

One row per agent label and mode.  The CSV keeps the official ``master_summary.csv``
column names and formulas (§10.2 of the harness notes) for everything the
official aggregation computes, so a spreadsheet built on it reads ours; the
columns it lacks are ours: C0 without the targets pyright gave no count for
(officially they counted 0 missing), success rates, mean seconds per tier,
and the environment size averaged over measured targets only (officially a
failed measurement was averaged in as 0).

A run's outcomes carry their agent; a run whose outcomes have none is named
by ``RUN_DIR:LABEL``, else by its run id.  Denominators count what ran: a
tier with no outcome for a target is not in its denominator (an official
run would count the missing stage as a failure).  The paper's four agents
can be added as reference rows, marked as published figures.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from pytest_reb.outcome import TIERS, Outcome, OutcomeLog, mib_of
from pytest_reb.report import efficiency
from pytest_reb.report.efficiency import AgentRun, Efficiency
from pytest_reb.report.summary import (
    HALLUCINATIONS,
    applies,
    c0_figure,
    hallucinations,
    mean_duration,
)

#: tier -> official column prefix.
PREFIX = {"c1": "c1_cpu", "c2": "c2_cuda", "c3": "c3_single_gpu", "c4": "c4_multi_gpu"}
TITLES = {"c1": "C1 CPU", "c2": "C2 CUDA", "c3": "C3 single GPU", "c4": "C4 multi-GPU"}
PUBLISHED_SOURCE = ("ResearchEnvBench paper (arXiv 2603.06739 v1), figures as quoted by four "
                    "agreeing third-party digests; C0 counts other than Codex's, and the "
                    "path/version split of C5, were not published")


class TableError(Exception):
    """A run folder that cannot be read: one clear line."""


@dataclass
class Count:
    """One tier of one row: successes, failures, skips over the applicable targets."""

    success: int | None
    denom: int | None
    failed: int | None = None
    skipped: int | None = None

    @property
    def pct(self) -> float | None:
        if self.success is None or not self.denom:
            return None
        return round(100 * self.success / self.denom, 1)


@dataclass
class Row:
    """One agent's line of the master table."""

    agent: str
    published: bool = False
    runs: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    job_count: int | None = None
    c0_missing: int | None = None  # the official sum: a target without a count adds 0
    c0_total: int | None = None  # the official sum: every target's total
    c0_unknown: int | None = None  # targets pyright gave no count for
    c0_total_known: int | None = None
    c0_pct: float | None = None  # missing over the totals of the targets with a count
    tiers: dict[str, Count] = field(default_factory=dict)
    c5: dict[str, int | None] = field(default_factory=dict)  # path, version, capability, total
    c5_other: dict[str, int] = field(default_factory=dict)
    mean_sec: dict[str, float | None] = field(default_factory=dict)
    env_gb: float | None = None
    env_valid: int = 0
    env_unknown: int = 0
    #: preparation time and tokens, from ``reb agent`` records (``add_efficiency``)
    efficiency: Efficiency | None = None
    note: str = ""
    #: the agent also has a row of another mode: its label names the mode
    by_mode: bool = False

    @property
    def label(self) -> str:
        """The row's name on the page: the agent, and its mode where it has two rows."""
        return f"{self.agent} ({' '.join(self.modes) or 'mode unknown'})" if self.by_mode \
            else self.agent


# --------------------------------------------------------------------------- reading runs


def parse_run_arg(arg: str) -> tuple[Path, str | None]:
    """``RUN_DIR`` or ``RUN_DIR:LABEL`` (a path that exists as written is never split)."""
    if Path(arg).exists():
        return Path(arg), None
    path, sep, label = arg.rpartition(":")
    if sep and path and label:
        return Path(path), label
    return Path(arg), None


def load_run(path: Path) -> tuple[str, str | None, list[Outcome]]:
    """A run folder (or its ``summary.json`` / ``outcomes.jsonl``): run id, mode, outcomes."""
    folder = path.parent if path.is_file() else path
    log = folder / "outcomes.jsonl"
    if not log.is_file():
        raise TableError(f"reb table: no outcomes.jsonl in {folder}")
    mode = None
    summary = folder / "summary.json"
    if summary.is_file():
        try:
            mode = json.loads(summary.read_text()).get("mode")
        except (ValueError, AttributeError):
            mode = None
    outcomes = list(OutcomeLog(log).latest().values())
    if not outcomes:
        raise TableError(f"reb table: {log} holds no outcome")
    return folder.name, mode, outcomes


def measured_rows(runs: Iterable[tuple[Path, str | None]]) -> list[Row]:
    """Rows of the runs, one per agent label and mode; of two outcomes of one item in one
    mode, the later wins.

    A strict and a compat run of the same agent are two verdicts of the same environments,
    not a later and an earlier one: each mode is a row of its own (as the official table
    gives each run a row), labelled with its mode.
    """
    by_label: dict[tuple[str, str], dict[str, Outcome]] = defaultdict(dict)
    meta: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path, label in runs:
        run_id, mode, outcomes = load_run(path)
        for o in outcomes:
            key = (o.agent or label or run_id, mode or "")
            seen = by_label[key].get(o.key)
            if seen is None or o.started >= seen.started:
                by_label[key][o.key] = o
            if run_id not in meta[key]:
                meta[key].append(run_id)
    modes: dict[str, set[str]] = defaultdict(set)
    for name, mode in by_label:
        modes[name].add(mode)
    rows = []
    for (name, mode), items in by_label.items():
        row = row_of(name, list(items.values()), meta[(name, mode)], [mode] if mode else [])
        row.by_mode = len(modes[name]) > 1
        rows.append(row)
    return rows


def row_of(agent: str, outcomes: list[Outcome], runs: list[str], modes: list[str]) -> Row:
    """The master-table row of one agent's outcomes."""
    row = Row(agent, runs=runs, modes=modes)
    row.job_count = len({(o.repo, o.target) for o in outcomes})
    by_tier: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_tier[o.tier].append(o)
    for tier in TIERS:
        row.mean_sec[tier] = mean_duration([o for o in by_tier[tier] if applies(o)])
    if by_tier["c0"]:
        fig = c0_figure([o for o in by_tier["c0"] if applies(o)])
        row.c0_missing, row.c0_total = fig["missing_imports"], fig["imports_total_all"]
        row.c0_unknown, row.c0_total_known = fig["imports_unknown"], fig["imports_total"]
        if fig["imports_total"]:
            row.c0_pct = round(100 * fig["missing_imports"] / fig["imports_total"], 1)
    for tier in PREFIX:
        applicable = [o for o in by_tier[tier] if applies(o)]
        if by_tier[tier]:
            row.tiers[tier] = Count(
                success=sum(o.status == "passed" for o in applicable), denom=len(applicable),
                failed=sum(o.status == "failed" for o in applicable),
                skipped=sum(o.status == "skipped" for o in applicable))
    audits = [o for o in by_tier["c5"] if applies(o)]
    if audits:
        counts = hallucinations(audits)
        row.c5 = {**counts, "total": sum(counts.values())}
        other: dict[str, int] = defaultdict(int)
        for o in audits:
            if o.status != "passed" and o.category and not o.category.endswith("_hallucination"):
                other[o.category] += 1
        row.c5_other = dict(sorted(other.items()))
        sizes = [mib_of(o.evidence.get("env_size")) for o in audits]
        known = [m for m in sizes if m is not None]
        row.env_valid, row.env_unknown = len(known), len(sizes) - len(known)
        if known:
            row.env_gb = round(sum(known) / len(known) / 1024, 3)
    return row


def add_efficiency(rows: list[Row], runs: Iterable[AgentRun]) -> None:
    """Put each agent's preparation time and tokens on its row; an agent with runs but
    no verification yet gets a row of its own."""
    by_agent = efficiency.summarise(runs)
    for row in rows:  # both modes' rows of an agent: the same runs made their environments
        row.efficiency = by_agent.get(row.agent, row.efficiency)
    verified = {r.agent for r in rows}
    rows.extend(Row(agent, efficiency=eff, note="not verified yet")
                for agent, eff in by_agent.items() if agent not in verified)


# --------------------------------------------------------------------------- the paper


def _published(agent: str, c0_pct: float, c0_missing: int | None, c1: int, c2: int, c3: int,
               c4: int, c5_total: int, capability: int | None,
               path_version: tuple[int, int] | None = None) -> Row:
    denominators = {"c1": 29, "c2": 44, "c3": 43, "c4": 32}
    wins = {"c1": c1, "c2": c2, "c3": c3, "c4": c4}
    path, version = path_version or (None, None)
    return Row(agent, published=True, job_count=44, c0_missing=c0_missing, c0_total=2858,
               c0_pct=c0_pct, tiers={t: Count(wins[t], d) for t, d in denominators.items()},
               c5={"path": path, "version": version, "capability": capability,
                   "total": c5_total},
               note="published" + ("" if c0_missing is not None else "; C0 count not published"))


#: The paper's four agents (the ``reference/paper-and-peers.md`` A.3 and A.4 tables).
PAPER_ROWS = (
    _published("Codex (gpt-5.1-codex)", 23.6, 675, 17, 35, 19, 11, 4, None),
    _published("Claude Code (GLM-4.7)", 26.6, None, 16, 40, 21, 12, 18, 17),
    # total 20 = capability 20, so path and version are both 0
    _published("Claude (Sonnet 4.5)", 25.5, None, 15, 41, 18, 12, 20, 20, (0, 0)),
    _published("NexAU (DeepSeek-V3.1-Nex-N1)", 25.3, None, 16, 41, 21, 11, 16, 14),
)


# --------------------------------------------------------------------------- CSV


def columns() -> list[str]:
    cols = ["agent", "source", "runs", "mode", "job_count", "c0_missing_sum", "c0_total_sum",
            "c0_total_sum_reported", "c0_missing_over_total", "c0_unknown", "c0_total_known",
            "c0_missing_pct"]
    for p in PREFIX.values():
        cols += [f"{p}_denom", f"{p}_success", f"{p}_failed", f"{p}_skipped",
                 f"{p}_success_over_all", f"{p}_success_pct"]
    cols += ["c5_path_sum", "c5_version_sum", "c5_capability_sum", "c5_total_sum", "c5_other"]
    cols += [f"{t}_mean_sec" for t in TIERS]
    cols += ["env_size_avg_gb", "env_valid_jobs", "env_unknown_jobs", *efficiency.columns(),
             "note"]
    return cols


#: The columns the official aggregation computes the same way (§10.2), as recomputed from the
#: official layout. The agent columns are not among them: the layout of a verification run
#: holds no agent run, so they come from ``agent_runs.jsonl`` (``efficiency``) instead.
OFFICIAL_COLUMNS = ("job_count", "c0_missing_sum", "c0_total_sum", "c0_missing_over_total",
                    *(f"{p}_{k}" for p in PREFIX.values()
                      for k in ("denom", "success", "failed", "skipped", "success_over_all")),
                    "c5_path_sum", "c5_version_sum", "c5_capability_sum", "c5_total_sum",
                    "env_size_avg_gb", "env_valid_jobs")


def record(row: Row) -> dict[str, str]:
    """The row as CSV cells (an unknown is an empty cell, never 0)."""
    out: dict[str, Any] = {
        "agent": row.agent, "source": "published" if row.published else "measured",
        "runs": " ".join(row.runs), "mode": " ".join(row.modes), "job_count": row.job_count,
        "c0_missing_sum": row.c0_missing, "c0_total_sum": row.c0_total,
        "c0_total_sum_reported": None if row.published else row.c0_total,
        "c0_missing_over_total": (f"{row.c0_missing}/{row.c0_total}"
                                  if row.c0_missing is not None and row.c0_total else None),
        "c0_unknown": row.c0_unknown, "c0_total_known": row.c0_total_known,
        "c0_missing_pct": row.c0_pct,
        "c5_path_sum": row.c5.get("path"), "c5_version_sum": row.c5.get("version"),
        "c5_capability_sum": row.c5.get("capability"), "c5_total_sum": row.c5.get("total"),
        "c5_other": "; ".join(f"{k} {v}" for k, v in row.c5_other.items()),
        "env_size_avg_gb": f"{row.env_gb:.3f}" if row.env_gb is not None else None,
        "env_valid_jobs": None if row.published else row.env_valid,
        "env_unknown_jobs": None if row.published else row.env_unknown,
        **efficiency.record(row.efficiency, published=row.published), "note": row.note,
    }
    for tier, p in PREFIX.items():
        c = row.tiers.get(tier)
        if c is None:
            continue
        out |= {f"{p}_denom": c.denom, f"{p}_success": c.success, f"{p}_failed": c.failed,
                f"{p}_skipped": c.skipped,
                f"{p}_success_over_all": f"{c.success}/{c.denom}" if c.denom else None,
                f"{p}_success_pct": c.pct}
    for tier in TIERS:
        value = row.mean_sec.get(tier)
        out[f"{tier}_mean_sec"] = f"{value:.2f}" if value is not None else None
    return {k: "" if out.get(k) is None else str(out[k]) for k in columns()}


def to_csv(rows: Sequence[Row]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns(), lineterminator="\n")
    writer.writeheader()
    writer.writerows(record(r) for r in rows)
    return buf.getvalue()


# --------------------------------------------------------------------------- Markdown and HTML

HEADERS = ("Agent", "Targets", "C0 missing imports", *TITLES.values(),
           "C5 path / version / capability", "Mean s C0 · C1 · C2 · C3 · C4 · C5", "Env size",
           "Prep time mean / median", "Tokens in / out / total")


def cells(row: Row) -> list[str]:
    """The human-readable cells of a row (Markdown and HTML share them)."""
    agent = f"{row.agent} †" if row.published else row.label
    return [agent, str(row.job_count or "-"), _c0_cell(row),
            *(_tier_cell(row.tiers.get(t)) for t in TITLES), _c5_cell(row), _times_cell(row),
            _env_cell(row), efficiency.time_cell(row.efficiency),
            efficiency.tokens_cell(row.efficiency)]


def _c0_cell(row: Row) -> str:
    if row.c0_total is None:
        return "-"
    if row.published:
        missing = f"{row.c0_missing}/{row.c0_total} " if row.c0_missing is not None else ""
        return f"{missing}({row.c0_pct}%)" if missing else f"{row.c0_pct}% of {row.c0_total}"
    pct = f" ({row.c0_pct}%)" if row.c0_pct is not None else ""
    text = f"{row.c0_missing}/{row.c0_total_known}{pct}"
    return text + (f", {row.c0_unknown} without a count" if row.c0_unknown else "")


def _tier_cell(c: Count | None) -> str:
    if c is None:
        return "-"
    if not c.denom:
        return "n/a"
    return f"{c.success}/{c.denom} ({c.pct}%)"


def _c5_cell(row: Row) -> str:
    if not row.c5:
        return "-"
    path, version, cap, total = (row.c5.get(k) for k in (*HALLUCINATIONS, "total"))
    if path is not None and version is not None and cap is not None:
        text = f"{path} / {version} / {cap}"
    elif cap is not None and total is not None:
        text = f"total {total}: capability {cap}, path + version {total - cap}"
    else:
        text = f"total {total} (split not published)"
    if row.c5_other:
        text += "; " + ", ".join(f"{k} {v}" for k, v in row.c5_other.items())
    return text


def _times_cell(row: Row) -> str:
    if row.published:
        return "-"
    return " · ".join("-" if row.mean_sec.get(t) is None else f"{row.mean_sec[t]:.1f}"
                      for t in TIERS)


def _env_cell(row: Row) -> str:
    if row.published:
        return "-"
    if row.env_gb is None:
        return f"unknown ({row.env_unknown})" if row.env_unknown else "-"
    text = f"{row.env_gb:.3f} GiB"
    return text + (f" ({row.env_unknown} unknown)" if row.env_unknown else "")


def to_markdown(rows: Sequence[Row]) -> str:
    def line(values: Iterable[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    out = [line(HEADERS), line("---" for _ in HEADERS), *(line(cells(r)) for r in rows)]
    out.append("")
    out.append("C1-C4: successes / applicable targets. C0: missing / imports of the targets "
               "pyright gave a count for (lower is better). C5: hallucinations (lower is "
               "better).")
    if any(r.published for r in rows):
        out.append(f"† published: {PUBLISHED_SOURCE}.")
    return "\n".join(out) + "\n"


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; color: #222; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f0f0f0; }} tr.published td {{ color: #555; font-style: italic; }}
img {{ max-width: 100%; }} p.note {{ font-size: 12px; color: #555; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{subtitle}</p>
<figure><img id="reb-table-chart" alt="grouped bar chart of C1-C4 success per agent"
 src="{chart}"><figcaption>C1-C4 success rate per agent{hatched}.</figcaption></figure>
<table id="reb-table">
<thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody></table>
{efficiency}{notes}
</body></html>
"""


def to_html(rows: Sequence[Row], *, title: str = "pytest-reb master table") -> str:
    """A self-contained page: the grouped bar chart (PNG data URI) and the table."""
    from pytest_reb.report import chart  # matplotlib, only when a page is drawn

    series = [chart.Series(r.label, {t: (c.success, c.denom) for t, c in r.tiers.items()},
                           published=r.published) for r in rows]
    png = chart.grouped_bars_png(series, heading="C1-C4 success per agent")
    body = "\n".join(
        f'<tr class="{"published" if r.published else "measured"}">'
        + "".join(f"<td>{escape(c)}</td>" for c in cells(r)) + "</tr>" for r in rows)
    notes = ["C1-C4: successes / applicable targets. C0: missing / imports of the targets "
             "pyright gave a count for (lower is better). C5: hallucinations (lower is better). "
             "Env size: mean of the report interpreters' prefixes that were measured."]
    if any(r.published for r in rows):
        notes.append(f"† published: {PUBLISHED_SOURCE}.")
    notes.append("Prep time: the agent's wall time per repository (the paper's preparation "
                 "time). Tokens: as the agent's CLI reported them; unknown where it did not.")
    measured = [r for r in rows if not r.published]
    points = [(r.label, r.efficiency, {t: r.tiers[t].pct if t in r.tiers else None
                                       for t in ("c3", "c4")})
              for r in measured if r.efficiency is not None]
    eff_figure = ""
    if points:
        eff_figure = ('<figure><img id="reb-efficiency-chart" alt="tokens and preparation time '
                      'against C3/C4 success" src="'
                      + chart.data_uri(efficiency.chart_png(points))
                      + '"><figcaption>Preparation time and tokens against C3/C4 success, '
                        'per agent.</figcaption></figure>\n')
    runs = sorted({run for r in measured for run in r.runs})
    verified = len({r.agent for r in measured if r.runs})  # not one with agent runs alone
    waiting = len({r.agent for r in measured if not r.runs})
    return PAGE.format(
        title=escape(title), chart=chart.data_uri(png),
        subtitle=escape((f"{verified} verified agent(s) from run(s) {', '.join(runs)}"
                         + (f"; {waiting} agent(s) not verified yet" if waiting else ""))
                        if runs else "published figures only"),
        hatched=", hatched: published figures" if any(r.published for r in rows) else "",
        head="".join(f"<th>{escape(h)}</th>" for h in HEADERS), body=body, efficiency=eff_figure,
        notes="\n".join(f'<p class="note">{escape(n)}</p>' for n in notes))


def write(rows: Sequence[Row], outdir: Path, *, stem: str = "reb_table") -> dict[str, Path]:
    """Write CSV, Markdown and HTML under ``outdir``; returns the paths by format."""
    outdir.mkdir(parents=True, exist_ok=True)
    paths = {"csv": outdir / f"{stem}.csv", "md": outdir / f"{stem}.md",
             "html": outdir / f"{stem}.html"}
    paths["csv"].write_text(to_csv(rows), encoding="utf-8")
    paths["md"].write_text(to_markdown(rows), encoding="utf-8")
    paths["html"].write_text(to_html(rows), encoding="utf-8")
    return paths


def official_values(row: Row) -> Mapping[str, str]:
    """The row's cells that the official aggregation computes the same way."""
    rec = record(row)
    return {k: rec[k] for k in OFFICIAL_COLUMNS}
