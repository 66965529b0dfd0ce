"""pytest-html integration: run metadata, four columns, per-item evidence, the pyramid chart.

Registered by the plugin only when pytest-html is installed (Hypothesis's
pattern), so pytest-reb runs without it.  Everything per item is read from
the test report (``report.reb_outcome``, set where the report is made), so
it reaches the controller under pytest-xdist like the rest of the report;
the chart is drawn on the controller from the outcomes it recorded.  Every
string from a target is escaped: the image under test is hostile, and
pytest-html inserts extras and environment values as HTML.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Generator
from html import escape
from typing import Any

import pytest

from pytest_reb.evidence.gpu_use import describe_gpus
from pytest_reb.outcome import TIER_TITLES, TIERS, Outcome
from pytest_reb.plugin.session import RebSession
from pytest_reb.report import terminal
from pytest_reb.report.summary import tally
from pytest_reb.spec import OFFICIAL_REPORT_PATH

#: Characters of each output stream and of the evidence shown per item.
TAIL_CHARS = 6000
EVIDENCE_CHARS = 20000
COLUMNS = (("reb_repo", "Repository"), ("reb_target", "Target"), ("reb_tier", "Tier"),
           ("reb_category", "Failure category"))
STYLE = """<style>
.reb-extra pre { white-space: pre-wrap; max-height: 24em; overflow: auto; background: #f6f6f6;
  padding: 4px; }
.reb-extra dt { font-weight: bold; } .reb-pyramid img { max-width: min(100%, 760px); }
.reb-pyramid pre { font-size: 12px; }
</style>"""


class HtmlReport:
    """The hooks pytest-html calls, plus the extras added where the report is made."""

    def __init__(self, session: RebSession) -> None:
        self.session = session

    # -- metadata (controller, before pytest-html renders its environment table)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.session.controller:
            return
        try:
            from pytest_metadata.plugin import metadata_key
        except ImportError:
            return
        session.config.stash[metadata_key].update(run_metadata(self.session))

    # -- per item

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        data = getattr(report, "reb_outcome", None)
        if isinstance(data, dict):
            from pytest_html import extras

            report.extras = [*getattr(report, "extras", []),  # type: ignore[attr-defined]
                             extras.html(evidence_html(Outcome.from_json(data)))]
        return report

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells[2:2] = [f'<th class="sortable" data-column-type="{key}">{title}</th>'
                      for key, title in COLUMNS]

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        values = row_values(report)
        data = getattr(report, "reb_outcome", None)
        if isinstance(data, dict):  # the tier's own time, not pytest's item (a cached replay)
            cells[:] = [f'<td class="col-duration">{tier_duration(data.get("duration"))}</td>'
                        if c.startswith('<td class="col-duration">') else c for c in cells]
        cells[2:2] = [f'<td class="col-{key}">{escape(values[key])}</td>' for key, _ in COLUMNS]

    # -- the chart (controller, at the end)

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str],
                                    postfix: list[str], session: pytest.Session) -> None:
        outcomes = list({**self.session.resumed, **self.session.outcomes}.values())
        if outcomes:
            prefix.append(pyramid_html(outcomes, self.session))


def run_metadata(session: RebSession) -> dict[str, Any]:
    """The run's facts for pytest-html's environment table (values escaped: it renders HTML)."""
    opts = session.options
    meta: dict[str, Any] = {
        "reb mode": "compat (official exit-code rules)" if opts.compat else "strict",
        "reb run": str(session.run_dir),
        "reb agent report": opts.agent_report or f"{OFFICIAL_REPORT_PATH} in each target",
        "reb GPUs (this host)": describe_gpus(),
    }
    images = sorted({t.image for t in opts.targets if t.image})
    if images:
        meta["reb images"] = image_facts(images)
    hosts = [t.id for t in opts.targets if t.image is None]
    if hosts:
        meta["reb hosts"] = ", ".join(hosts)
    return {k: ({i: escape(str(v)) for i, v in val.items()} if isinstance(val, dict)
                else escape(str(val))) for k, val in meta.items()}


def image_facts(images: list[str]) -> dict[str, str]:
    """Image -> its id and registry digest, as the local engine knows them (never pulled)."""
    facts: dict[str, str] = {}
    try:
        import docker

        client = docker.from_env()
    except Exception as exc:
        return dict.fromkeys(images, f"unknown ({type(exc).__name__})")
    for name in images:
        try:
            image = client.images.get(name)
        except Exception as exc:
            facts[name] = f"unknown ({type(exc).__name__})"
            continue
        digests = image.attrs.get("RepoDigests") or []
        facts[name] = (f"id {image.id}; digest "
                       + (", ".join(digests) if digests else "none (built locally, never pushed)"))
    return facts


def tier_duration(seconds: Any) -> str:
    """A tier's seconds as pytest-html writes a duration (its sort reads ``ms`` and
    ``HH:MM:SS``): the item pytest times only hands over an outcome decided elsewhere (the
    pair's lanes ran the tier), so its own time is not the tier's."""
    value = float(seconds or 0.0)
    if value < 1:
        return f"{round(value * 1000)} ms"
    whole = round(value)
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def row_values(report: pytest.TestReport) -> dict[str, str]:
    """The four column values of a report; the tier from its marker when it has no outcome."""
    data = getattr(report, "reb_outcome", None)
    if isinstance(data, dict):
        o = Outcome.from_json(data)
        category = o.category or ""
        if o.status == "failed" and o.compat and not o.strict:
            category += " (official rule: pass)"
        return {"reb_repo": o.repo, "reb_target": o.target, "reb_tier": o.tier.upper(),
                "reb_category": category}
    keywords = getattr(report, "keywords", {})  # a collection report has none
    tier = next((t for t in TIERS if t in keywords), "")
    return {"reb_repo": "", "reb_target": "", "reb_tier": tier.upper(), "reb_category": ""}


def evidence_html(o: Outcome) -> str:
    """An item's command, the tail of its output, and its evidence, for the extras row."""
    parts = ['<div class="reb-extra"><dl>',
             f"<dt>{escape(TIER_TITLES.get(o.tier, o.tier))}: {escape(o.status)}"
             f"{' (' + escape(o.category) + ')' if o.category else ''}</dt>",
             f"<dd>{escape(o.message)}</dd>",
             f"<dt>verdicts</dt><dd>strict {_verdict(o.strict)}, official rule "
             f"{_verdict(o.compat)}</dd>"]
    if o.command:
        parts.append(f"<dt>command</dt><dd><code>{escape(shlex.join(o.command))}</code></dd>")
    ran = [f"exit {o.exit_code}" if o.exit_code is not None else "no exit code",
           f"{o.duration:g}s"] + (["timed out"] if o.timed_out else [])
    parts.append(f"<dt>ran</dt><dd>{escape(', '.join(ran))}</dd>")
    for name, text in (("stdout", o.stdout_tail), ("stderr", o.stderr_tail)):
        if text.strip():
            cut = len(text) > TAIL_CHARS
            parts.append(f"<dt>{name} (tail{', last ' + str(TAIL_CHARS) + ' chars' if cut else ''})"
                         f"</dt><dd><pre>{escape(text[-TAIL_CHARS:])}</pre></dd>")
    if o.findings:
        parts.append("<dt>findings</dt><dd><pre>"
                     f"{escape(json.dumps(o.findings, indent=1, default=str))}</pre></dd>")
    evidence = json.dumps(o.evidence, indent=1, sort_keys=True, default=str)
    if len(evidence) > EVIDENCE_CHARS:
        evidence = (evidence[:EVIDENCE_CHARS]
                    + f"\n... ({len(evidence)} chars in all: see outcomes.jsonl)")
    parts.append(f"<dt>evidence</dt><dd><pre>{escape(evidence)}</pre></dd></dl></div>")
    return "".join(parts)


def _verdict(value: bool | None) -> str:
    return {True: "pass", False: "fail", None: "n/a"}[value]


def pyramid_html(outcomes: list[Outcome], session: RebSession) -> str:
    """The run's pyramid chart and totals; the PNG is a data URI (``--self-contained-html``)."""
    from pytest_reb.report import chart  # matplotlib, only when a report is drawn

    totals = tally(outcomes)
    targets = len({(o.target, o.repo) for o in outcomes})
    mode = "compat" if session.options.compat else "strict"
    heading = f"run {session.run_id} ({mode}), {targets} target(s)"
    png = chart.pyramid_png(totals, TIER_TITLES, heading=heading)
    text = "\n".join(terminal.totals(outcomes, titles=TIER_TITLES))
    return (f'{STYLE}<div class="reb-pyramid" id="reb-pyramid"><h3>pytest-reb pyramid</h3>'
            f'<img id="reb-pyramid-chart" alt="{escape(heading)}: pyramid of C0-C5" '
            f'src="{chart.data_uri(png)}"><pre>{escape(text)}</pre></div>')
