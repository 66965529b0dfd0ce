"""Ctrl-C and SIGTERM once every item ran: the run's end completes and the run exits 2.

A signal that landed in the run's end (in another plugin's terminal summary, which pytest does
not guard) killed pytest with a traceback and the signal's death (exit -2), its reports half
written: seen in a full suite run, where an interrupt meant for the moment between two tiers
came as the last one ended.  ``signals.FinishHold`` holds it from the last item to the end;
a second signal is not held.  On ``local://`` with a one-command repository (no Docker).
"""

from __future__ import annotations

import json
import sys

import pytest

#: A repository whose C1 runs a quick command; a plugin's terminal summary signals the run.
MODULE = """\
from pytest_reb import Repo, Run

repo = Repo("me/hold", commit="0" * 40, imports_total=1,
            cpu=Run(["{{python}}", "-c", "print('ran')"], timeout=60))
"""
CONFTEST = """\
import os, signal, time

def pytest_terminal_summary(terminalreporter):
    for _ in range(int(os.environ.get("SIGNALS", "1"))):
        os.kill(os.getpid(), getattr(signal, os.environ.get("SIGNAL", "SIGINT")))
        time.sleep(0.2)  # the handler runs here, in a plugin's summary, as in the real run
    terminalreporter.write_line("summary went on")
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, signals: int,
         name: str = "SIGINT") -> pytest.RunResult:
    pytester.makepyfile(test_hold=MODULE)
    pytester.makeconftest(CONFTEST)
    (pytester.path / "checkout").mkdir()
    monkeypatch.setenv("SIGNALS", str(signals))
    monkeypatch.setenv("SIGNAL", name)
    return pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-host", "local://", "--reb-python",
        sys.executable, "--reb-repo-dir", str(pytester.path / "checkout"),
        "--reb-allow-commit-mismatch", "--reb-outdir", str(pytester.path / "reports"),
        "-p", "no:cacheprovider", "-m", "c1")


def _summary(pytester: pytest.Pytester) -> dict[str, object]:
    [summary] = (pytester.path / "reports").glob("*/summary.json")
    return json.loads(summary.read_text())


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_in_the_runs_end_waits_for_it_and_exits_interrupted(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    result = _run(pytester, monkeypatch, 1, name)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["summary went on"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    result.stderr.fnmatch_lines(["pytest-reb: interrupted as the run finished*"])
    assert _summary(pytester)  # the end was done: the summary is written


def test_a_second_signal_is_not_held(pytester: pytest.Pytester,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, 2)
    assert result.ret != 0
    assert "summary went on" not in result.stdout.str()
    assert "a second one while the run finished" in result.stderr.str() + result.stdout.str()
