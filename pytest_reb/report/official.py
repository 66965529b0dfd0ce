"""The official layout: a run written the way the ResearchEnvBench harness writes its jobs.

``--reb-official-layout DIR`` writes, for each (repository, target),
``DIR/jobs/<job_id>/job_summary.json`` and
``DIR/jobs/<job_id>/benchmark/build_output/<stage>/results.json`` in the
official envelope, plus ``DIR/scripts_repos_test_categories.snapshot.csv``
(the applicability the official aggregation reads), so the official
``build_master_table`` and anything built on it read our runs.

What is written is what was observed, in the run's mode: a stage that did
not run is not written (the official aggregation then counts it as
``missing``, a failure, as it would its own); a C0 without a count writes the
repository's import total but no missing count (officially that is 0 missing
over the whole total), and an environment size that was not measured writes
no size (officially 22 bundles wrote 0).  The official C5 validators judge
``cuda_available`` and ``gpu_count`` from the cuda stage's ``observed`` block,
so in compat the cuda stage is what the repository's own check, run by its
``run_all.sh``, leaves (``rules.c2_compat``): its block, or, where our probe got
no answer from the interpreter, that bundle's record: no file, a failure of
its category with its block or none, or a stage that never ends, after which
no later stage is written (the official run stops there).  Strict writes our
probe's block.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shlex
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_reb.outcome import Outcome, mib_of, official_stage
from pytest_reb.report.summary import HALLUCINATIONS, applies, imports_total, missing_count

#: tier -> official stage name.
STAGES = {"c0": "pyright", "c1": "cpu", "c2": "cuda", "c3": "single_gpu", "c4": "multi_gpu",
          "c5": "hallucination"}
#: Official stage order (``prepare`` and ``summary`` have no counterpart here).
ORDER = ("pyright", "prepare", "cpu", "cuda", "single_gpu", "multi_gpu", "env_size",
         "hallucination", "summary")
CATEGORIES_CSV = "scripts_repos_test_categories.snapshot.csv"
#: The run's token sums where m5 reads them (``<run dir>/langfuse_tokens.json``).
TOKENS_JSON = "langfuse_tokens.json"
CATEGORY_FIELDS = ("repo_slug", "repo", "git_link", "commit", "supports_cpu",
                   "supports_single_gpu", "supports_multi_gpu", "cpu_skip_reason",
                   "single_gpu_skip_reason", "multi_gpu_skip_reason", "category")
EXCERPT_CHARS = 8000


def job_id(run_id: str, repo: str, commit: str, baseline: str, target: str) -> str:
    """The official slug ``owner__repo__sha8__baseline__hash8`` (our hash adds the target)."""
    digest = hashlib.sha1(f"{run_id}|{repo}|{commit}|{baseline}|{target}".encode()).hexdigest()
    raw = f"{repo.replace('/', '__')}__{commit[:8] or 'nocommit'}__{baseline}__{digest[:8]}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", raw)[:160]


def baseline_of(o: Outcome, run_id: str) -> str:
    """The agent label; a run that names none is its own baseline (as in ``reb table``)."""
    return o.agent or run_id


def write_layout(root: Path, outcomes: list[Outcome], *, run_id: str, mode: str,
                 commits: Mapping[str, str],
                 agents: Mapping[str, Mapping[str, Any]] | None = None) -> list[Path]:
    """Write the jobs of ``outcomes`` under ``root``; returns the job folders.

    ``agents``: per target id, what ``reb agent run`` recorded of the run that made its
    image (``runs.agentfacts.agent_facts``): its start and end become the job's
    ``agent_start``/``agent_end`` (the official preparation time), its tokens the run's
    ``langfuse_tokens.json``.
    """
    jobs: dict[tuple[str, str, str], dict[str, Outcome]] = defaultdict(dict)
    for o in outcomes:
        jobs[(o.repo, o.target, baseline_of(o, run_id))][o.tier] = o
    folders = []
    for (repo, target, baseline), tiers in sorted(jobs.items()):
        commit = commits.get(repo, "")
        folder = root / "jobs" / job_id(run_id, repo, commit, baseline, target)
        written = {STAGES[t]: stage_results(o, mode) for t, o in tiers.items()
                   if t in STAGES and not (mode == "compat" and _after_a_hang(t, tiers))}
        stages = {stage: data for stage, data in written.items() if data is not None}
        if "c5" in tiers and "hallucination" in written:
            stages["env_size"] = env_size_results(tiers["c5"])
        for stage, data in stages.items():
            _write_json(folder / "benchmark" / "build_output" / stage / "results.json", data)
        # run_all.sh reads a stage that wrote no results.json as failed
        unwritten = {stage: {"status": "failure"} for stage, d in written.items() if d is None}
        _write_json(folder / "job_summary.json", job_summary(
            run_id=run_id, job=folder.name, repo=repo, commit=commit, baseline=baseline,
            target=target, tiers=tiers, stages={**stages, **unwritten},
            agent=(agents or {}).get(target)))
        folders.append(folder)
    _merge_categories(root / CATEGORIES_CSV, jobs, commits)
    _write_json(root / TOKENS_JSON, tokens_file(root))
    return folders


def _after_a_hang(tier: str, tiers: Mapping[str, Outcome]) -> bool:
    """Whether the official run would never reach this stage: its cuda check never ends
    (``compat_c2``'s ``hang``), so ``run_all.sh`` stops there at the harness's timeout."""
    c2 = tiers.get("c2")
    cuda = c2.evidence.get("official_cuda") if c2 is not None else None
    return tier in ("c3", "c4", "c5") and isinstance(cuda, dict) and bool(cuda.get("hangs"))


def tokens_file(root: Path) -> dict[str, Any]:
    """``langfuse_tokens.json`` of the layout: the tokens every job's agent reported, summed.

    The official harness writes it once per run folder from a Langfuse query (no filter by
    job or agent) and m5 gives every baseline of the run that sum; summed here over the
    jobs of ``root`` (of every run written there), from each ``job_summary.json``. A job
    whose agent reported none adds nothing and is counted; none reported at all is the
    official stub (``skipped``), never a 0.
    """
    known, unknown = [], 0
    for path in sorted(root.glob("jobs/*/job_summary.json")):
        agent = (json.loads(path.read_text()).get("reb") or {}).get("agent")
        if not agent:
            continue
        tokens = agent.get("tokens")
        if isinstance(tokens, dict) and tokens.get("input") is not None:
            known.append(tokens)
        else:
            unknown += 1
    if not known:
        return {"status": "skipped", "reason": "no agent run of this layout reported tokens",
                "metrics": {}}
    inp = sum(int(t["input"]) for t in known)
    out = sum(int(t.get("output") or 0) for t in known)
    return {"status": "ok", "source": "pytest-reb: reb agent run records",
            "jobs_with_tokens": len(known), "jobs_without_tokens": unknown,
            "metrics": {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}}


def stage_results(o: Outcome, mode: str) -> dict[str, Any] | None:
    """One stage's ``results.json``: the official envelope and the stage's own block.

    None in compat where the official stage writes no file: a cuda check the
    interpreter could not run at all (``compat_c2``).
    """
    view = official_stage(o, official=mode == "compat")
    if view is None:
        return None
    status = view["status"]
    na = not applies(o)
    data: dict[str, Any] = {
        "status": status,
        "skip_reason": (o.message or "not_applicable") if na else "not_applicable",
        "exit_code": view["exit_code"],
        "stage": STAGES[o.tier],
        "task": {"c0": "check", "c2": "check", "c5": "validate"}.get(o.tier, "run"),
        "command": shlex.join(o.command) if o.command else "",
        "timeout_sec": None,
        "framework": "unknown",
        "assets": {},
        "failure_category": view["failure_category"],
        "error_excerpt": (o.stdout_tail + o.stderr_tail)[-EXCERPT_CHARS:],
        "meta": {"decision_reason": f"pytest-reb {mode}: {o.message}"[:2000],
                 "timestamp_utc": _utc(o.started), "duration_sec": o.duration,
                 "command_exit_code": o.exit_code, "timed_out": o.timed_out,
                 "strict": o.strict, "compat": o.compat, "target": o.target},
    }
    if o.tier == "c0":
        # The total is the repository's (the official canonical one); the missing count
        # only when pyright gave one, so officially an uncounted run adds 0 over its total.
        missing, total = missing_count(o), imports_total(o)
        metrics: dict[str, Any] = {"total_imported_packages_count": total}
        if missing is not None:
            metrics |= {"missing_packages_count": missing,
                        "missing_package_ratio": f"{missing}/{total}"}
        data.update(metrics, metrics=metrics)
    elif "observed" in view:
        # Where the official cuda stages put it: the majority at the top, one bundle in meta.
        data["observed"] = data["meta"]["observed"] = view["observed"]
    elif o.tier == "c5":
        counts = o.evidence.get("counts") if isinstance(o.evidence.get("counts"), dict) else {}
        data["hallucinations"] = {
            kind: {"count": counts.get(kind, 0) if type(counts.get(kind, 0)) is int else 0,
                   "items": [f for f in o.findings if f.get("kind") == kind]}
            for kind in HALLUCINATIONS}
        data["report_path"] = o.evidence.get("report_source")
        data["reported"] = o.evidence.get("reported")
        data["observed"] = o.evidence.get("observed")
    return data


def env_size_results(c5: Outcome) -> dict[str, Any]:
    """The ``env_size`` stage from what C5 measured; an unmeasured size is a failure, not 0."""
    evidence = c5.evidence.get("env_size")
    evidence = evidence if isinstance(evidence, dict) else {}
    mib = mib_of(evidence)
    data: dict[str, Any] = {
        "status": "success" if mib is not None else "failure",
        "skip_reason": "not_applicable", "exit_code": 0 if mib is not None else 1,
        "stage": "env_size", "task": "measure", "command": "", "timeout_sec": 120,
        "framework": "unknown", "assets": {},
        "failure_category": None if mib is not None else "env_size_failed",
        "reported_python_path": evidence.get("python"),
        "meta": {"decision_reason": evidence.get("reason") or "measured by pytest-reb",
                 "timestamp_utc": _utc(c5.started)},
    }
    if mib is not None:
        data["observed"] = {"env_prefix": evidence.get("prefix"), "env_prefix_size_MB": mib,
                            "env_prefix_bytes": evidence.get("bytes"),
                            "site_packages": [{"path": p} for p in
                                              evidence.get("site_packages", [])]}
    return data


def job_summary(*, run_id: str, job: str, repo: str, commit: str, baseline: str, target: str,
                tiers: Mapping[str, Outcome], stages: Mapping[str, Mapping[str, Any]],
                agent: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``job_summary.json`` in the official fields; what a verification run cannot know is null.

    ``agent``: the facts of the agent run that made the image (``write_layout``); without
    them the agent is ``skipped``, as in an official job run with ``--skip-agent``.
    """
    statuses = {s: stages[s]["status"] for s in ORDER if s in stages}
    started = min(o.started for o in tiers.values())
    ended = max(o.started + o.duration for o in tiers.values())
    failed = [s for s, v in statuses.items() if v == "failure"]
    ran: tuple[float, float] | None = None
    agent_status = "skipped"
    if agent and agent.get("started") is not None and agent.get("wall_s") is not None:
        ran = (agent["started"], round(agent["started"] + agent["wall_s"], 3))
        agent_status = "timeout" if agent.get("timed_out") else \
            "success" if agent.get("exit_code") == 0 else "failed"
    return {
        "run_id": run_id, "job_id": job, "repo_url": f"https://github.com/{repo}",
        "commit_sha": commit, "baseline": baseline, "baseline_input": baseline,
        "baseline_backend": baseline, "hardware_bucket": "auto",
        "script_id": repo.replace("/", "@"), "gpus": None, "skip_agent": ran is None,
        "timestamps": {"docker_run_start": None, "docker_run_end": None, "clone_start": None,
                       "clone_end": None, "agent_start": ran[0] if ran else None,
                       "agent_end": ran[1] if ran else None,
                       "runall_start": started, "runall_end": ended, "job_end": ended},
        "container": {"id": None, "image_id": None},
        "status": {
            "clone": None, "agent": agent_status, "agent_exit_code": (agent or {}).get(
                "exit_code"),
            "agent_timed_out": bool((agent or {}).get("timed_out")),
            "stub_report_written": False,
            "report_exists_nonempty": None, "report_valid_json_and_keys": None,
            "report_required_keys": None, "report_ok": None,
            "runall": "failed" if failed else "success", "runall_exit_code": 1 if failed else 0,
            "runall_stage_statuses": statuses, "runall_failed_stages": failed,
            "runall_skipped_stages": [s for s, v in statuses.items() if v == "skipped"],
        },
        "reb": {"target": target, "verified_by": "pytest-reb",
                **({"agent": dict(agent)} if agent else {})},
    }


def _merge_categories(path: Path, jobs: Mapping[tuple[str, str, str], Mapping[str, Outcome]],
                      commits: Mapping[str, str]) -> None:
    """Applicability per repository, merged into what earlier runs wrote there.

    A stage is ``no`` when its outcome was not applicable and ``yes`` when it
    applied; a stage that did not run is left blank (the official aggregation
    then treats it as supported).
    """
    rows: dict[str, dict[str, str]] = {}
    if path.exists():
        with open(path, newline="", encoding="utf-8") as fh:
            rows = {r["repo"]: r for r in csv.DictReader(fh)}
    for (repo, _, _), tiers in sorted(jobs.items()):
        row = rows.setdefault(repo, dict.fromkeys(CATEGORY_FIELDS, ""))
        row.update(repo_slug=repo.replace("/", "@"), repo=repo,
                   git_link=f"https://github.com/{repo}", commit=commits.get(repo, row["commit"]))
        for tier, stage in (("c1", "cpu"), ("c3", "single_gpu"), ("c4", "multi_gpu")):
            o = tiers.get(tier)
            if o is not None:
                row[f"supports_{stage}"] = "yes" if applies(o) else "no"
                row[f"{stage}_skip_reason"] = "" if applies(o) else (o.message or "not_applicable")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CATEGORY_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows[k] for k in sorted(rows))


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True, default=str))


def _utc(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
