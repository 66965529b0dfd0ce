"""The official layout: recomputed the way the official aggregation reads it, it equals ours.

``m5_summary`` below is written from the harness notes (§7.3, §8.4, §10 of
``official-harness.md``), not from our code: it walks ``jobs/*/job_summary.json``
and ``build_output/<stage>/results.json``, takes applicability from the
categories snapshot, and computes the ``master_summary.csv`` columns per
(run_id, baseline).  Those must equal the same columns of ``reb table``.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from support.outcomes import outcome as make_outcome

from pytest_reb.outcome import Outcome
from pytest_reb.report import official, table
from pytest_reb.report.summary import build

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
STAGE_OF = {"c1": "cpu", "c2": "cuda", "c3": "single_gpu", "c4": "multi_gpu"}
SUPPORTS = {"cpu": "supports_cpu", "single_gpu": "supports_single_gpu",
            "multi_gpu": "supports_multi_gpu"}


# --------------------------------------------------------------------------- the official reading


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for where in (data, data.get("metrics") or {}, (data.get("meta") or {}).get("metrics") or {}):
        for key in keys:
            if where.get(key) not in (None, ""):
                return where[key]
    return None


def _norm(status: Any) -> str:
    s = str(status).lower()
    if s in ("success", "ok", "passed", "pass"):
        return "success"
    if s in ("failed", "failure", "error", "fail"):
        return "failed"
    if s in ("skipped", "skip"):
        return "skipped"
    return "unknown"


def _stage(job: Path, stage: str) -> dict[str, Any] | None:
    path = job / "benchmark" / "build_output" / stage / "results.json"
    return json.loads(path.read_text()) if path.exists() else None


def m5_rows(root: Path) -> list[dict[str, Any]]:
    """``master_table.csv`` rows (the columns the summary needs)."""
    with open(root / official.CATEGORIES_CSV, newline="") as fh:
        categories = list(csv.DictReader(fh))
    rows = []
    for summary_path in sorted(root.rglob("job_summary.json")):
        job, js = summary_path.parent, json.loads(summary_path.read_text())
        full_name = re.sub(r"^https?://github\.com/", "", js["repo_url"]).strip("/")
        cat = next((c for c in categories if c["repo_slug"] == js["script_id"]),
                   next((c for c in categories if c["repo"].lower() == full_name.lower()), {}))
        row: dict[str, Any] = {"run_id": js["run_id"], "baseline": js.get("baseline")
                               or js.get("baseline_backend") or js.get("baseline_input")}
        for column in SUPPORTS.values():
            row[column] = cat.get(column, "")
        pyright = _stage(job, "pyright") or {}
        missing = _first(pyright, ("missing_packages_count", "missing_imports_count"))
        total = _first(pyright, ("total_imported_packages_count", "total_imports_count",
                                 "total_imports", "imports_total",
                                 "total_imported_modules_count", "total_imported_packages"))
        if missing is not None and total and missing > total:
            missing = total
        row["c0_missing_imports"], row["c0_total_imports"] = missing, total
        for tier, stage in STAGE_OF.items():
            data = _stage(job, stage)
            if data is None:
                row[tier] = "missing"
            elif tier == "c2":
                observed = (data.get("observed") or {}).get("cuda_available")
                status = _norm(data.get("status"))
                row[tier] = ("success" if status == "success" and observed in (True, None) else
                             "skipped" if status == "skipped" else
                             "failed" if observed is False else status)
            else:
                row[tier] = _norm(data.get("status"))
        halluc = _stage(job, "hallucination") or {}
        for kind in ("path", "version", "capability"):
            count = ((halluc.get("hallucinations") or {}).get(kind) or {}).get("count")
            if count is None:
                count = (halluc.get("metrics") or {}).get(f"{kind}_hallucinations_count")
            row[f"c5_{kind}"] = count or 0
        env = _stage(job, "env_size") or {}
        row["env_mb"] = (env.get("observed") or {}).get("env_prefix_size_MB")
        rows.append(row)
    return rows


def m5_summary(root: Path) -> dict[tuple[str, str], dict[str, str]]:
    """``master_summary.csv`` columns per (run_id, baseline), as strings like the CSV."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in m5_rows(root):
        groups[(row["run_id"], row["baseline"])].append(row)
    out = {}
    for key, rows in groups.items():
        s: dict[str, Any] = {"job_count": len(rows)}
        s["c0_missing_sum"] = sum(r["c0_missing_imports"] or 0 for r in rows)
        s["c0_total_sum"] = sum(r["c0_total_imports"] or 0 for r in rows)
        s["c0_missing_over_total"] = (f"{s['c0_missing_sum']}/{s['c0_total_sum']}"
                                      if s["c0_total_sum"] else "")
        for tier, name in table.PREFIX.items():
            applicable = rows if tier == "c2" else [
                r for r in rows
                if str(r[SUPPORTS[STAGE_OF[tier]]]).strip().lower() not in ("no", "n", "false",
                                                                             "0")]
            success = sum(r[tier] == "success" for r in applicable)
            skipped = sum(r[tier] == "skipped" for r in applicable)
            s[f"{name}_denom"] = len(applicable)
            s[f"{name}_success"], s[f"{name}_skipped"] = success, skipped
            s[f"{name}_failed"] = len(applicable) - success - skipped
            s[f"{name}_success_over_all"] = f"{success}/{len(applicable)}" if applicable else ""
        for kind in ("path", "version", "capability"):
            s[f"c5_{kind}_sum"] = sum(r[f"c5_{kind}"] for r in rows)
        s["c5_total_sum"] = sum(s[f"c5_{k}_sum"] for k in ("path", "version", "capability"))
        sizes = [r["env_mb"] for r in rows if r["env_mb"] not in (None, "")]
        s["env_size_avg_gb"] = f"{sum(sizes) / len(sizes) / 1024:.3f}" if sizes else ""
        s["env_valid_jobs"] = len(sizes)
        out[key] = {k: str(v) for k, v in s.items()}
    return out


def assert_same_as_ours(layout: Path, rows: list[table.Row], run_id: str) -> None:
    recomputed = m5_summary(layout)
    assert {key for key in recomputed} == {(run_id, r.agent) for r in rows}
    for row in rows:
        assert recomputed[(run_id, row.agent)] == dict(table.official_values(row)), row.agent


# --------------------------------------------------------------------------- every shape, by hand


def oc(tier: str, status: str, target: str, agent: str | None, category: str | None = None,
       repo: str = "me/mini", **kw: Any) -> Outcome:
    return make_outcome(tier, status, category, repo=repo, target=target, agent=agent, **kw)


def job(target: str, agent: str | None, *, missing: int | None, c1: str, c2: bool,
        env_mib: int | None, counts: tuple[int, int, int], c4_na: bool) -> list[Outcome]:
    """One job's outcomes; applicability belongs to the repository, so C4 n/a is another one."""
    path, version, capability = counts
    repo = "me/other" if c4_na else "me/mini"
    env = ({"status": "measured", "bytes": env_mib << 20, "mib": env_mib} if env_mib is not None
           else {"status": "unknown", "bytes": None, "reason": "timed out"})

    def o(tier: str, status: str, category: str | None = None, **kw: Any) -> Outcome:
        return oc(tier, status, target, agent, category, repo=repo, **kw)

    return [
        o("c0", "passed" if missing == 0 else "failed",
          None if missing == 0 else "deps" if missing else "pyright_failed",
          evidence={"missing_count": missing, "imports_total": 12}),
        o("c1", c1, None if c1 == "passed" else "runtime",
          command=["/venv/bin/python", "main.py"], exit_code=0 if c1 == "passed" else 1),
        o("c2", "passed" if c2 else "failed", None if c2 else "cuda_unavailable",
          evidence={"observed": {"framework": "pytorch", "cuda_available": c2}}),
        o("c3", "failed", "no_gpu_evidence"),
        (o("c4", "skipped", "not_applicable", message="repo_not_supported") if c4_na
         else o("c4", "failed", "insufficient_hardware")),
        o("c5", "failed" if any(counts) else "passed",
          "version_hallucination" if any(counts) else None,
          evidence={"counts": {"path": path, "version": version, "capability": capability},
                    "env_size": env},
          findings=[{"kind": "version", "field": "torch_version"}] * version),
    ]


def test_every_shape_recomputes_to_our_columns(tmp_path: Path) -> None:
    outcomes = (job("img:1", "agent-a", missing=0, c1="passed", c2=True, env_mib=900,
                    counts=(0, 0, 0), c4_na=False)
                + job("img:2", "agent-a", missing=None, c1="failed", c2=False, env_mib=None,
                      counts=(0, 2, 1), c4_na=False)
                + job("img:1", "agent-b", missing=4, c1="passed", c2=False, env_mib=2000,
                      counts=(1, 0, 0), c4_na=True)
                + job("img:3", None, missing=1, c1="passed", c2=True, env_mib=100,
                      counts=(0, 0, 0), c4_na=False))
    # an applicable stage that was skipped (the official c*_skipped) on the unlabelled job
    outcomes[-3] = oc("c3", "skipped", "img:3", None, "timeout", repo="me/mini")
    run = tmp_path / "runs" / "run-x"
    log = run / "outcomes.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(o.to_json()) + "\n" for o in outcomes))
    (run / "summary.json").write_text(json.dumps(build(outcomes, run_id="run-x", compat=False)))
    layout = tmp_path / "official"
    jobs = official.write_layout(layout, outcomes, run_id="run-x", mode="strict",
                                 commits={"me/mini": "ab" * 20, "me/other": "ef" * 20})
    assert len(jobs) == 4
    rows = table.measured_rows([(run, None)])
    assert sorted(r.agent for r in rows) == ["agent-a", "agent-b", "run-x"]
    assert_same_as_ours(layout, rows, "run-x")
    ours = {r.agent: table.record(r) for r in rows}
    # the honest columns differ from the official ones exactly where the official rules bend
    assert ours["agent-a"]["c0_missing_over_total"] == "0/24"  # img:2 had no count: 0 officially
    assert (ours["agent-a"]["c0_unknown"], ours["agent-a"]["c0_missing_pct"]) == ("1", "0.0")
    assert ours["agent-a"]["env_size_avg_gb"] == "0.879"  # img:2 unmeasured: not a 0 sample
    assert ours["run-x"]["c3_single_gpu_skipped"] == "1"


def test_a_job_folder_has_the_official_files(tmp_path: Path) -> None:
    outcomes = job("img:1", "agent-a", missing=None, c1="failed", c2=False, env_mib=None,
                   counts=(0, 2, 1), c4_na=True)
    [folder] = official.write_layout(tmp_path, outcomes, run_id="r", mode="strict",
                                     commits={"me/other": "cd" * 20})
    assert folder.name.startswith("me__other__cdcdcdcd__agent-a__")
    js = json.loads((folder / "job_summary.json").read_text())
    assert {"run_id", "job_id", "repo_url", "commit_sha", "baseline", "script_id", "timestamps",
            "container", "status"} <= set(js)
    assert js["status"]["runall_stage_statuses"] == {
        "pyright": "failure", "cpu": "failure", "cuda": "failure", "single_gpu": "failure",
        "multi_gpu": "skipped", "env_size": "failure", "hallucination": "failure"}
    stages = {p.parent.name: json.loads(p.read_text())
              for p in (folder / "benchmark" / "build_output").glob("*/results.json")}
    for data in stages.values():
        assert {"status", "skip_reason", "exit_code", "stage", "command", "failure_category",
                "meta"} <= set(data)
    assert "missing_packages_count" not in stages["pyright"]  # no count: none written
    assert stages["pyright"]["total_imported_packages_count"] == 12
    assert stages["env_size"]["failure_category"] == "env_size_failed"
    assert "observed" not in stages["env_size"]  # not measured: no size, never 0
    assert stages["multi_gpu"]["skip_reason"] == "repo_not_supported"
    assert stages["cpu"]["command"] == "/venv/bin/python main.py"
    assert stages["hallucination"]["hallucinations"]["version"]["count"] == 2
    assert len(stages["hallucination"]["hallucinations"]["version"]["items"]) == 2
    with open(tmp_path / official.CATEGORIES_CSV, newline="") as fh:
        [cat] = list(csv.DictReader(fh))
    assert (cat["repo_slug"], cat["supports_cpu"], cat["supports_multi_gpu"],
            cat["multi_gpu_skip_reason"]) == ("me@other", "yes", "no", "repo_not_supported")


# --------------------------------------------------------------------------- a real run


@pytest.mark.container
def test_a_demo_run_in_the_official_layout(pytester: pytest.Pytester, demo_image: str,
                                           missing_dep_image: str) -> None:
    """Two agents' images of the demo repository in one run, written in the official layout."""
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    matrix = pytester.path / "runs.toml"
    matrix.write_text(f'[[target]]\nagent = "good-agent"\nimage = "{demo_image}"\n'
                      f'[[target]]\nagent = "sloppy-agent"\nimage = "{missing_dep_image}"\n')
    layout = pytester.path / "official"
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-matrix", str(matrix),
                                "--reb-outdir", str(pytester.path / "reports"),
                                "--reb-official-layout", str(layout), "-p", "no:cacheprovider",
                                "-p", "no:benchmark")
    assert result.ret in (0, 1), result.stdout.str()[-3000:]
    [run] = list((pytester.path / "reports").glob("*/outcomes.jsonl"))
    rows = table.measured_rows([(run.parent, None)])
    assert sorted(r.agent for r in rows) == ["good-agent", "sloppy-agent"]
    assert len(list(layout.glob("jobs/*/job_summary.json"))) == 2
    assert_same_as_ours(layout, rows, run.parent.name)
    ours = {r.agent: table.record(r) for r in rows}
    assert ours["good-agent"]["c1_cpu_success_over_all"] == "1/1"
    assert ours["sloppy-agent"]["c1_cpu_success_over_all"] == "0/1"
    assert ours["sloppy-agent"]["c0_missing_over_total"] == "1/8"
    assert ours["good-agent"]["env_valid_jobs"] == "1"


# --------------------------------------------------------------------------- the agent's run

#: What ``runs.agentfacts.agent_facts`` reads from an image ``reb agent run`` committed.
FACTS = {"img:1": {"run": "r1-codex", "agent": "agent-a", "started": 1_800_000_000.0,
                   "wall_s": 123.5, "timed_out": False, "exit_code": 0,
                   "tokens": {"input": 1000, "output": 200, "total": 1200, "raw": {}}},
         "img:2": {"run": "r2-codex", "agent": "agent-a", "started": 1_800_000_500.0,
                   "wall_s": 60.0, "timed_out": True, "exit_code": None, "tokens": "unknown"}}


def _two_jobs() -> list[Outcome]:
    return (job("img:1", "agent-a", missing=0, c1="passed", c2=True, env_mib=900,
                counts=(0, 0, 0), c4_na=False)
            + job("img:2", "agent-a", missing=None, c1="failed", c2=False, env_mib=None,
                  counts=(0, 2, 1), c4_na=False))


def test_the_agents_times_and_tokens_are_carried_into_the_layout(tmp_path: Path) -> None:
    folders = official.write_layout(tmp_path, _two_jobs(), run_id="r", mode="strict",
                                    commits={"me/mini": "ab" * 20}, agents=FACTS)
    summaries = {json.loads((f / "job_summary.json").read_text())["reb"]["target"]:
                 json.loads((f / "job_summary.json").read_text()) for f in folders}
    one = summaries["img:1"]
    assert (one["timestamps"]["agent_start"], one["timestamps"]["agent_end"]) == \
        (1_800_000_000.0, 1_800_000_123.5)
    assert (one["status"]["agent"], one["status"]["agent_exit_code"], one["skip_agent"]) == \
        ("success", 0, False)
    two = summaries["img:2"]
    assert (two["status"]["agent"], two["status"]["agent_timed_out"]) == ("timeout", True)
    tokens = json.loads((tmp_path / official.TOKENS_JSON).read_text())
    assert tokens["metrics"] == {"input_tokens": 1000, "output_tokens": 200,
                                 "total_tokens": 1200}
    assert (tokens["jobs_with_tokens"], tokens["jobs_without_tokens"]) == (1, 1)
    # without agent runs: the agent was skipped, and no token count is made up
    bare = tmp_path / "bare"
    [folder, _] = official.write_layout(bare, _two_jobs(), run_id="r", mode="strict",
                                        commits={"me/mini": "ab" * 20})
    js = json.loads((folder / "job_summary.json").read_text())
    assert (js["timestamps"]["agent_start"], js["status"]["agent"]) == (None, "skipped")
    assert json.loads((bare / official.TOKENS_JSON).read_text())["status"] == "skipped"


def test_the_official_m5_reads_the_layout_as_written(tmp_path: Path) -> None:
    """The release's own ``m5/build_master_table.py`` (``REB_OFFICIAL_RELEASE``: a checkout of
    No-518/ResearchEnvBench, never part of this repository) over our layout: its summary
    equals ``reb table`` on every shared column, and it reads the agent's time and tokens."""
    import os
    import subprocess
    import sys

    release = os.environ.get("REB_OFFICIAL_RELEASE")
    if not release or not (Path(release) / "m5" / "build_master_table.py").is_file():
        pytest.skip("REB_OFFICIAL_RELEASE names no checkout of the official release "
                    "(m5/build_master_table.py)")
    outcomes = _two_jobs()
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "outcomes.jsonl").write_text("".join(json.dumps(o.to_json()) + "\n"
                                                for o in outcomes))
    (run / "summary.json").write_text(json.dumps(build(outcomes, run_id="r", compat=False)))
    layout = tmp_path / "official"
    official.write_layout(layout, outcomes, run_id="r", mode="strict",
                          commits={"me/mini": "ab" * 20},
                          agents=FACTS)
    done = subprocess.run([sys.executable, "-m", "m5.build_master_table", "--results-root",
                           str(layout / "jobs"), "--out-dir", str(layout), "--no-xlsx"],
                          cwd=release, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": release})
    assert done.returncode == 0, done.stdout + done.stderr
    with open(layout / "master_summary.csv", newline="") as fh:
        [m5] = list(csv.DictReader(fh))
    with open(layout / "master_table.csv", newline="") as fh:
        times = sorted(r["agent_wall_time_sec"] for r in csv.DictReader(fh))
    assert times == ["123.5", "60.0"]
    assert (m5["agent_tokens_input_sum"], m5["agent_tokens_output_sum"],
            m5["agent_tokens_total_sum"]) == ("1000", "200", "1200")
    [row] = table.measured_rows([(run, None)])
    ours = table.official_values(row)
    differ = {k: (m5.get(k), v) for k, v in ours.items() if m5.get(k, "") != v}
    assert differ == {}, differ
