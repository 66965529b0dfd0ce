"""The report side of a run, as one hook object: every outcome recorded and told to other
plugins, then the summary, the official layout and the terminal pyramid.

Registered by the plugin on the process that owns the run's files (the xdist
controller under ``-n``, else the only process) and only once pytest-reb is
active, so pytest runs that do not use it never see these hooks.  Workers
send their outcomes on the test reports (``report.reb_outcome``), which is
how every outcome reaches ``pytest_runtest_logreport`` here.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_reb.outcome import TIER_TITLES, Outcome
from pytest_reb.report import official, summary, terminal

if TYPE_CHECKING:
    from pytest_reb.plugin.session import RebSession


class ReportHooks:
    """Records the run's outcomes and writes what is made of them at the end."""

    def __init__(self, session: RebSession, config: pytest.Config) -> None:
        self.session = session
        self.config = config

    @pytest.hookimpl(wrapper=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]
                                  ) -> Generator[None, None, None]:
        """Ctrl-C ends the run as interrupted even where its traceback cannot be shown.

        CPython 3.11 keeps the AST converter's recursion depth interpreter-wide: pytest's
        ``ast.parse`` of the traceback's source, while a thread of the run converts an AST
        too (a module pytest rewrites as it is imported), raises ``SystemError: AST
        constructor recursion depth mismatch`` inside the terminal's report, and the run
        ended as an internal error (exit 1) with its teardown cut short.  The report then
        goes without the traceback; the run ends as every interrupted run does (exit 2).
        """
        try:
            return (yield)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc):
                raise
            return None

    def outcomes(self) -> list[Outcome]:
        """This run's outcomes, a resumed run's earlier ones included."""
        return list({**self.session.resumed, **self.session.outcomes}.values())

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The outcome goes to the durable log before any other plugin sees the report (the
        terminal's counts, ``-rA``): a Ctrl-C between them then leaves a tier logged and not
        shown, never shown as finished and lost to ``--reb-resume``."""
        data = getattr(report, "reb_outcome", None)
        if data is not None:
            outcome = Outcome.from_json(data)
            self.session.record(outcome)
            self.config.hook.pytest_reb_outcome(outcome=outcome, config=self.config)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """``summary.json`` beside ``outcomes.jsonl``; ``--reb-official-layout`` too."""
        reb = self.session
        outcomes = self.outcomes()
        if not outcomes:
            return
        path = reb.run_dir / "summary.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = summary.build(outcomes, run_id=reb.run_id, compat=reb.options.compat)
        path.write_text(json.dumps(data, indent=2, sort_keys=True))
        layout = self.config.getoption("reb_official_layout")
        if layout:
            from pytest_reb.runs.agentfacts import agent_facts

            # the agent run that made each image, from its labels: preparation time, tokens
            agents = {t.id: facts for t in reb.options.targets
                      if (facts := agent_facts(t.image)) is not None}
            official.write_layout(Path(layout), outcomes, run_id=reb.run_id, mode=data["mode"],
                                  commits=reb.commits(session.items), agents=agents)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        outcomes = self.outcomes()
        if not outcomes:
            return
        terminalreporter.section("reb pyramid")
        for line in terminal.pyramid(outcomes, titles=TIER_TITLES):
            terminalreporter.write_line(line)
        lines = summary.integrity_lines(outcomes)
        if lines:
            terminalreporter.section("reb integrity")
            for line in lines:
                terminalreporter.write_line(line)
        terminalreporter.write_line(f"outcomes: {self.session.log.path}")
        terminalreporter.write_line(f"summary:  {self.session.run_dir / 'summary.json'}")
