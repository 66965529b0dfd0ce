"""``reb merge`` and ``report.merge``: shards joined into the single run's summary, the same
verdict kept once, disagreeing shards, mixed modes and bad folders refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.outcomes import outcome as _outcome

from pytest_reb.loop.cli import main as reb
from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.report.merge import (
    MergeError,
    comparable,
    merge,
    summary_differences,
    write,
)


def outcome(target: str, tier: str = "c1", status: str = "passed", **fields: Any) -> Outcome:
    """One of me/mini's outcomes on ``target``, by agent alpha at t=1 s unless told."""
    return _outcome(tier, status, target=target,
                    **{"agent": "alpha", "started": 1.0, "duration": 1.0, **fields})


def write_run(path: Path, outcomes: list[Outcome], mode: str | None = "strict") -> Path:
    log = OutcomeLog(path / "outcomes.jsonl")
    for o in outcomes:
        log.append(o)
    if mode:
        (path / "summary.json").write_text(json.dumps({"mode": mode}))
    return path


def test_merge_joins_shards_into_the_single_run_summary(tmp_path: Path) -> None:
    everything = [outcome("alpha@a"), outcome("alpha@a", "c2", "failed", category="deps"),
                  outcome("beta@b", agent="beta"), outcome("beta@b", "c2", "skipped",
                                                           category="not_applicable",
                                                           agent="beta")]
    single = write([write_run(tmp_path / "one", everything)], tmp_path / "single")
    s1 = write_run(tmp_path / "s1", [everything[0], everything[1]])
    s2 = write_run(tmp_path / "s2", [outcome("beta@b", "c1", "failed", category="deps",
                                             agent="beta", started=0.5),
                                     everything[2], everything[3]])  # rerun: latest wins
    assert reb(["merge", str(s1), str(s2), "--out", str(tmp_path / "merged")]) == 0
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert summary_differences(single, merged) == []
    assert merged["run_id"] == "merged" and merged["mode"] == "strict"
    assert merged["agents"]["beta"]["c1"]["passed"] == 1
    lines = (tmp_path / "merged" / "outcomes.jsonl").read_text().splitlines()
    assert [json.loads(line)["target"] for line in lines] == ["alpha@a", "alpha@a",
                                                              "beta@b", "beta@b"]


def test_the_same_verdict_twice_is_kept_once(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [outcome("x", started=1.0)])
    b = write_run(tmp_path / "b", [outcome("x", started=2.0, duration=9.0)])
    [kept], mode = merge([a, b])
    assert (kept.started, mode) == (2.0, "strict")


def test_merge_refuses_disagreeing_shards(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [outcome("x"), outcome("y")])
    b = write_run(tmp_path / "b", [outcome("x", "c1", "failed", category="deps")])
    with pytest.raises(MergeError, match=r"(?s)1 outcome\(s\) differ.*me/mini\|x\|c1: .*a has "
                                         r"passed, .*b has failed \(deps\)"):
        merge([a, b])


def test_merge_refuses_strict_with_compat(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    a = write_run(tmp_path / "a", [outcome("x")], mode="strict")
    b = write_run(tmp_path / "b", [outcome("y")], mode="compat")
    assert reb(["merge", str(a), str(b), "--out", str(tmp_path / "m")]) == 2
    assert "cannot merge strict and compat runs" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_a_killed_run_shows_its_mode_by_its_outcomes(tmp_path: Path) -> None:
    passed_only_by_exit_code = _outcome("c3", repo="r", strict=False, compat=True)
    a = write_run(tmp_path / "a", [passed_only_by_exit_code], mode=None)
    b = write_run(tmp_path / "b", [outcome("y")], mode="strict")
    with pytest.raises(MergeError, match="strict and compat"):
        merge([a, b])
    both_agree = write_run(tmp_path / "c", [outcome("z")], mode=None)
    assert merge([both_agree, b])[1] == "strict"


@pytest.mark.parametrize("problem", ["not a run", "named twice", "out is a run", "out exists"])
def test_merge_refuses_bad_folders(tmp_path: Path, problem: str) -> None:
    a = write_run(tmp_path / "a", [outcome("x")])
    write_run(tmp_path / "old", [outcome("x")])
    runs, out = {"not a run": ([a, tmp_path], tmp_path / "m"),
                 "named twice": ([a, tmp_path / "." / "a"], tmp_path / "m"),
                 "out is a run": ([a], a),
                 "out exists": ([a], tmp_path / "old")}[problem]
    with pytest.raises(MergeError):
        write(runs, out)


def test_comparison_ignores_what_runs_never_share() -> None:
    base = {"run_id": "1", "written": "t1", "mode": "strict",
            "targets": [{"target": "t", "repo": "r", "tiers": {"c3": {
                "status": "passed", "duration": 3.0,
                "evidence": {"gpu_holders": {"111": [0], "112": [1]}}}}}],
            "totals": {"c3": {"passed": 1, "mean_duration": 3.0}}}
    other = json.loads(json.dumps(base))
    other.update(run_id="2", written="t2")
    other["targets"][0]["tiers"]["c3"].update(duration=5.0, evidence={"gpu_holders": {
        "9": [1], "8": [0]}})
    other["totals"]["c3"]["mean_duration"] = 5.0
    assert summary_differences(base, other) == []
    other["targets"][0]["tiers"]["c3"]["status"] = "failed"
    other["totals"]["c3"]["passed"] = 0
    assert summary_differences(base, other) == [
        "targets.t (r).tiers.c3.status: 'passed' != 'failed'", "totals.c3.passed: 1 != 0"]
    assert comparable(base)["targets"]["t (r)"]["tiers"]["c3"]["evidence"] == {
        "gpu_holders": [[0], [1]]}
