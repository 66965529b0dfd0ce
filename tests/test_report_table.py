"""``reb table``: rows per agent label, official columns, honest C0 and env size, the paper.

Runs are written as a real run writes them (``outcomes.jsonl`` through
``OutcomeLog``, ``summary.json`` through ``summary.build``), so the table
reads exactly what it reads after pytest.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path

import pytest
from support.outcomes import outcome as make_outcome

from pytest_reb.loop import cli
from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.report import summary, table


def oc(tier: str, status: str = "passed", category: str | None = None, *, target: str = "img:a",
       repo: str = "me/mini", agent: str | None = None, duration: float = 1.0,
       **kw: object) -> Outcome:
    return make_outcome(tier, status, category, repo=repo, target=target, duration=duration,
                        agent=agent, **kw)


def pyramid(target: str, *, missing: int | None = 0, total: int = 10, c1: str = "passed",
            c3: str = "failed", env_mib: int | None = 1024,
            counts: tuple[int, int, int] = (0, 0, 0), agent: str | None = None,
            c4_applies: bool = True) -> list[Outcome]:
    """One target's six outcomes."""
    kw = {"target": target, "agent": agent}
    env = ({"status": "measured", "bytes": env_mib << 20, "mib": env_mib} if env_mib is not None
           else {"status": "unknown", "bytes": None, "reason": "probe failed"})
    path, version, capability = counts
    return [
        oc("c0", "passed" if missing == 0 else "failed",
           None if missing == 0 else "deps" if missing else "pyright_failed",
           evidence={"missing_count": missing, "imports_total": total}, duration=2.0, **kw),
        oc("c1", c1, None if c1 == "passed" else "runtime", duration=4.0, **kw),
        oc("c2", "failed", "cuda_unavailable", **kw),
        oc("c3", c3, None if c3 == "passed" else "timeout", **kw),
        (oc("c4", "failed", "insufficient_hardware", **kw) if c4_applies else
         oc("c4", "skipped", "not_applicable", message="repo_not_supported", **kw)),
        oc("c5", "failed" if any(counts) else "passed",
           "capability_hallucination" if any(counts) else None, duration=3.0,
           evidence={"counts": {"path": path, "version": version, "capability": capability},
                     "env_size": env}, **kw),
    ]


def write_run(root: Path, name: str, outcomes: list[Outcome], mode: str = "strict") -> Path:
    folder = root / name
    log = OutcomeLog(folder / "outcomes.jsonl")
    for o in outcomes:
        log.append(o)
    (folder / "summary.json").write_text(json.dumps(summary.build(
        outcomes, run_id=name, compat=mode == "compat")))
    return folder


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    good = write_run(tmp_path, "run-good", pyramid("img:a") + pyramid("img:b", c4_applies=False))
    bad = write_run(tmp_path, "run-bad",
                    pyramid("img:a", missing=3, c1="failed", counts=(1, 0, 2), env_mib=None)
                    + pyramid("img:b", missing=None, env_mib=2048))
    return good, bad


def by_agent(rows: list[table.Row]) -> dict[str, dict[str, str]]:
    return {r.agent: table.record(r) for r in rows}


def test_one_row_per_label_with_the_official_columns(two_runs: tuple[Path, Path]) -> None:
    good, bad = two_runs
    rows = table.measured_rows([(good, "good"), (bad, "bad")])
    got = by_agent(rows)
    g, b = got["good"], got["bad"]
    assert (g["job_count"], g["runs"], g["mode"], g["source"]) == ("2", "run-good", "strict",
                                                                   "measured")
    assert (g["c1_cpu_success_over_all"], g["c2_cuda_success_over_all"]) == ("2/2", "0/2")
    assert (g["c4_multi_gpu_denom"], g["c4_multi_gpu_failed"]) == ("1", "1")  # one n/a
    assert g["c0_missing_over_total"] == "0/20" and g["c0_missing_pct"] == "0.0"
    assert (b["c1_cpu_success"], b["c1_cpu_failed"], b["c1_cpu_skipped"]) == ("1", "1", "0")
    assert (b["c5_path_sum"], b["c5_version_sum"], b["c5_capability_sum"],
            b["c5_total_sum"]) == ("1", "0", "2", "3")
    assert (g["c0_mean_sec"], g["c1_mean_sec"], g["c5_mean_sec"]) == ("2.00", "4.00", "3.00")


def test_c0_without_a_count_is_zero_officially_and_left_out_of_ours(
        two_runs: tuple[Path, Path]) -> None:
    b = by_agent(table.measured_rows([(two_runs[1], "bad")]))["bad"]
    # official: the uncounted target adds 0 missing and its whole total
    assert (b["c0_missing_sum"], b["c0_total_sum"], b["c0_missing_over_total"]) == ("3", "20",
                                                                                    "3/20")
    # ours: over the counted target only, with the uncounted one named
    assert (b["c0_unknown"], b["c0_total_known"], b["c0_missing_pct"]) == ("1", "10", "30.0")
    [row] = table.measured_rows([(two_runs[1], "bad")])
    assert table.cells(row)[2] == "3/10 (30.0%), 1 without a count"


def test_an_unmeasured_environment_is_not_averaged_as_zero(two_runs: tuple[Path, Path]) -> None:
    b = by_agent(table.measured_rows([(two_runs[1], "bad")]))["bad"]
    assert (b["env_size_avg_gb"], b["env_valid_jobs"], b["env_unknown_jobs"]) == ("2.000", "1",
                                                                                "1")
    [row] = table.measured_rows([(two_runs[1], "bad")])
    assert table.cells(row)[table.HEADERS.index("Env size")] == "2.000 GiB (1 unknown)"


def test_labels_name_only_runs_without_an_agent(tmp_path: Path) -> None:
    named = write_run(tmp_path, "run-named", pyramid("img:a", agent="codex-x"))
    anonymous = write_run(tmp_path, "run-anon", pyramid("img:a"))
    rows = table.measured_rows([(named, "ignored"), (anonymous, None)])
    assert sorted(r.agent for r in rows) == ["codex-x", "run-anon"]


def test_a_label_over_two_runs_is_one_row_and_the_later_outcome_wins(tmp_path: Path) -> None:
    first = write_run(tmp_path, "r1", pyramid("img:a", c1="failed"))
    rerun = pyramid("img:a")
    for o in rerun:
        o.started += 100
    second = write_run(tmp_path, "r2", rerun + pyramid("img:b"))
    [row] = table.measured_rows([(first, "agent"), (second, "agent")])
    rec = table.record(row)
    assert (rec["runs"], rec["job_count"], rec["c1_cpu_success_over_all"]) == ("r1 r2", "2", "2/2")


def test_a_strict_and_a_compat_run_of_one_agent_are_a_row_each(tmp_path: Path) -> None:
    strict = write_run(tmp_path, "r-strict", pyramid("img:a", agent="codex", c1="failed"))
    later = pyramid("img:a", agent="codex")
    for o in later:
        o.started += 100  # later, but a verdict in another mode: it does not replace the first
    compat = write_run(tmp_path, "r-compat", later, mode="compat")
    rows = table.measured_rows([(strict, None), (compat, None)])
    got = {r.label: table.record(r) for r in rows}
    assert sorted(got) == ["codex (compat)", "codex (strict)"]
    assert got["codex (strict)"]["c1_cpu_success_over_all"] == "0/1"
    assert (got["codex (compat)"]["mode"], got["codex (compat)"]["c1_cpu_success_over_all"]) == \
        ("compat", "1/1")
    assert "codex (strict)" in table.to_markdown(rows)
    [alone] = table.measured_rows([(strict, None)])
    assert alone.label == "codex"  # one mode: no mode in its name


def test_the_papers_agents_are_published_figures() -> None:
    got = by_agent(list(table.PAPER_ROWS))
    assert len(got) == 4 and {r["source"] for r in got.values()} == {"published"}
    codex = got["Codex (gpt-5.1-codex)"]
    assert (codex["c0_missing_over_total"], codex["c0_missing_pct"]) == ("675/2858", "23.6")
    assert [codex[f"{p}_success_over_all"] for p in table.PREFIX.values()] == [
        "17/29", "35/44", "19/43", "11/32"]
    assert (codex["c5_total_sum"], codex["c5_capability_sum"], codex["c5_path_sum"]) == ("4", "",
                                                                                         "")
    glm = got["Claude Code (GLM-4.7)"]
    assert (glm["c0_missing_sum"], glm["c0_missing_pct"]) == ("", "26.6")  # no count published
    assert [glm[f"{p}_success"] for p in table.PREFIX.values()] == ["16", "40", "21", "12"]
    assert (glm["c5_total_sum"], glm["c5_capability_sum"]) == ("18", "17")
    sonnet = got["Claude (Sonnet 4.5)"]
    assert [sonnet[f"{p}_success"] for p in table.PREFIX.values()] == ["15", "41", "18", "12"]
    assert (sonnet["c5_path_sum"], sonnet["c5_version_sum"], sonnet["c5_capability_sum"]) == (
        "0", "0", "20")
    nexau = got["NexAU (DeepSeek-V3.1-Nex-N1)"]
    assert [nexau[f"{p}_success"] for p in table.PREFIX.values()] == ["16", "41", "21", "11"]
    assert (nexau["c0_missing_pct"], nexau["c5_total_sum"], nexau["c5_capability_sum"]) == (
        "25.3", "16", "14")
    for rec in got.values():  # nothing published is made up
        assert rec["env_size_avg_gb"] == rec["c0_mean_sec"] == rec["c1_cpu_failed"] == ""


def test_markdown_and_html(two_runs: tuple[Path, Path]) -> None:
    rows = [*table.measured_rows([(two_runs[0], "good"), (two_runs[1], "bad")]),
            *table.PAPER_ROWS]
    md = table.to_markdown(rows).splitlines()
    assert md[0].startswith("| Agent | Targets | C0 missing imports | C1 CPU | C2 CUDA |")
    assert md[2].startswith("| good | 2 | 0/20 (0.0%) | 2/2 (100.0%) | 0/2 (0.0%) |")
    assert "| Codex (gpt-5.1-codex) † | 44 | 675/2858 (23.6%) | 17/29 (58.6%) |" in md[4]
    assert any(line.startswith("† published:") for line in md)
    page = table.to_html(rows)
    assert '<table id="reb-table">' in page and page.count('<tr class="published">') == 4
    chart = re.search(r'<img id="reb-table-chart"[^>]*src="data:image/png;base64,'
                      r'([A-Za-z0-9+/=]+)"', page)
    assert chart and base64.b64decode(chart.group(1)).startswith(b"\x89PNG")


def test_reb_table_command(two_runs: tuple[Path, Path], tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = two_runs
    out = tmp_path / "table"
    assert cli.main(["table", f"{good}:good", f"{bad / 'summary.json'}:bad", "--out", str(out),
                     "--paper"]) == 0
    printed = capsys.readouterr().out
    assert "| good | 2 |" in printed and "| bad | 2 |" in printed and "Codex" in printed
    with open(out / "reb_table.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    assert [r["agent"] for r in records][:2] == ["good", "bad"] and len(records) == 6
    assert set(table.OFFICIAL_COLUMNS) <= set(records[0])
    assert (out / "reb_table.md").read_text() == table.to_markdown(
        [*table.measured_rows([(good, "good"), (bad, "bad")]), *table.PAPER_ROWS])
    assert (out / "reb_table.html").read_text().startswith("<!DOCTYPE html>")


def test_a_folder_without_outcomes_is_one_clear_error(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["table", str(tmp_path), "--out", str(tmp_path / "t")]) == 2
    assert "no outcomes.jsonl in" in capsys.readouterr().err


def test_a_path_with_a_colon_is_not_split(tmp_path: Path) -> None:
    odd = tmp_path / "run:1"
    odd.mkdir()
    assert table.parse_run_arg(str(odd)) == (odd, None)
    assert table.parse_run_arg(f"{odd}:agent") == (odd, "agent")
    assert table.parse_run_arg(f"{tmp_path}/missing") == (tmp_path / "missing", None)


def test_csv_is_parseable_and_unknown_is_empty(two_runs: tuple[Path, Path]) -> None:
    text = table.to_csv(table.measured_rows([(two_runs[1], "bad")]))
    [rec] = list(csv.DictReader(io.StringIO(text)))
    assert rec["agent_wall_time_avg_sec"] == ""  # never measured here: empty, not 0


def test_agent_runs_add_preparation_time_and_tokens(two_runs: tuple[Path, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``--agent-runs``: the records of ``reb agent run`` beside the verification's rows."""
    good, bad = two_runs
    runs = tmp_path / "agent_runs.jsonl"
    rows = [{"run": "r1", "agent": "good", "repo": "x/a", "task_image": "t",
             "task_image_id": "i", "started": 1.0, "wall_s": 100.0, "timed_out": False,
             "tokens": {"input": 900, "output": 100, "total": 1000}},
            {"run": "r2", "agent": "good", "repo": "x/b", "task_image": "t",
             "task_image_id": "i", "started": 2.0, "wall_s": 300.0, "timed_out": False,
             "tokens": "unknown"},
            {"run": "r3", "agent": "bad", "repo": "x/a", "task_image": "t",
             "task_image_id": "i", "started": 3.0, "wall_s": 3600.5, "timed_out": True,
             "tokens": "unknown"}]
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "table"
    assert cli.main(["table", f"{good}:good", f"{bad}:bad", "--agent-runs", str(runs),
                     "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| 200.0 / 200.0 s | 900 / 100 / 1,000 (1 unknown) |" in printed
    assert "| 3600.5 / 3600.5 s (1 timed out) | unknown (1) |" in printed
    with open(out / "reb_table.csv", newline="") as fh:
        got = {r["agent"]: r for r in csv.DictReader(fh)}
    assert (got["good"]["agent_wall_time_avg_sec"], got["good"]["agent_tokens_total_sum"],
            got["good"]["agent_tokens_unknown_jobs"]) == ("200.00", "1000", "1")
    assert got["bad"]["agent_tokens_total_sum"] == ""  # unknown, never 0
    page = (out / "reb_table.html").read_text()
    assert 'id="reb-efficiency-chart"' in page and "data:image/png;base64," in page


def test_six_agents_on_the_page_a_never_started_one_and_one_not_verified(
        tmp_path: Path) -> None:
    """The header counts the verified agents only; an agent that never started shows no
    tokens (not ``unknown (0)``); the efficiency chart draws the six with distinct colours
    and names the ones it cannot place, under the panels."""
    from pytest_reb.loop.agent.run import AgentRun
    from pytest_reb.report import chart, efficiency

    names = ["codex", "claude-code", "mini", "nexau"]
    runs = [write_run(tmp_path, f"run-{n}", pyramid("img:a", agent=n, c3="passed"))
            for n in names]
    records = [AgentRun(f"r-{n}", n, "x/a", "t", "i", started=1.0, wall_s=100.0 * (i + 1),
                        tokens={"input": 1000 * (i + 1), "output": 10, "total": 0, "raw": {}})
               for i, n in enumerate([*names, "late"])]
    records.append(AgentRun("r-x", "gone", "x/a", "t", "i", started=1.0,
                            status="agent_unreachable"))
    rows = table.measured_rows([(r, None) for r in runs])
    table.add_efficiency(rows, records)
    cells = {r.agent: table.cells(r) for r in rows}
    assert cells["gone"][-1] == "-" and cells["gone"][-2] == "unknown (1 not started)"
    assert len(set(chart.PALETTE)) == len(chart.PALETTE) >= 6
    page = table.to_html(rows)
    assert "4 verified agent(s) from run(s)" in page
    assert "2 agent(s) not verified yet" in page
    points = [(r.label, r.efficiency, {"c3": 100.0, "c4": 0.0} if r.runs else {})
              for r in rows if r.efficiency is not None]
    assert efficiency.chart_png(points).startswith(b"\x89PNG")
