"""The outcome log across crashes: a line torn by a killed writer costs only that line."""

from __future__ import annotations

from pathlib import Path

from pytest_reb.outcome import Outcome, OutcomeLog


def test_a_torn_line_does_not_swallow_the_next(tmp_path: Path) -> None:
    log = OutcomeLog(tmp_path / "outcomes.jsonl")
    log.append(Outcome("r", "t", "c1", "passed"))
    with open(log.path, "a") as fh:  # SIGKILL (or power loss) in the middle of a line
        fh.write('{"repo": "r", "target": "t", "tier": "c2", "sta')
    log.append(Outcome("r", "t", "c3", "failed"))  # the resumed run goes on writing
    assert sorted(log.latest()) == ["r|t|c1", "r|t|c3"]
    assert log.path.read_text().endswith("\n")
