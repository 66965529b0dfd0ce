"""``-n 2`` over a matrix gives the same summary as ``-n 0``, and shards merged give it too.

"The same" is ``summary_differences`` (run ids, times, durations and GPU-holder pids
aside).  It is checked twice: on ``local://`` (fast, any machine) and on the demo images
(marked ``container``).  Tiers stay at C1 plus GPU tiers that a CPU machine decides at
once, so the suite stays fast.  Runs of pytest go through subprocesses: an in-process
pytester run drops the modules it imported (docker, requests) when it ends, and a Docker
client made later in the same worker then fails ("You can only merge into CookieJar").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.loop.cli import main as reb
from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.report.merge import (
    summary_differences,
    verdict,
)
from pytest_reb.runs.shards import scope_of

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
#: ``[gw1] [ 25%] FAILED path::test_c1_cpu[id]`` in ``-v`` output under xdist.
WORKER_LINE = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] (?:PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS) "
                         r"(\S+)")


def run_dirs(reports: Path) -> list[Path]:
    return sorted(p.parent for p in reports.glob("*/outcomes.jsonl"))


def only_run(reports: Path) -> tuple[dict[str, Any], dict[str, Outcome]]:
    """The summary and latest outcomes of the one run under ``reports``."""
    [run] = run_dirs(reports)
    return (json.loads((run / "summary.json").read_text()),
            OutcomeLog(run / "outcomes.jsonl").latest())


def verdicts(outcomes: dict[str, Outcome]) -> dict[str, dict[str, Any]]:
    return {key: verdict(o) for key, o in outcomes.items()}


def workers_by_pair(stdout: str) -> dict[str, set[str]]:
    """(module, target) scope -> the xdist workers its items ran on, from ``-v`` output."""
    seen: dict[str, set[str]] = defaultdict(set)
    for line in stdout.splitlines():
        m = WORKER_LINE.match(line)
        if m:
            seen[scope_of(m.group(2))].add(m.group(1))
    return dict(seen)


def make_checkout(root: Path) -> str:
    root.mkdir(parents=True)
    (root / "main.py").write_text("print('hello from main')\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, env=env,
                          capture_output=True, text=True).stdout.strip()


def report(python: str) -> str:
    return json.dumps({"python_path": python, "python_version": None, "torch_version": None,
                       "cuda_available": False, "gpu_count": 0, "ddp_expected_ok": None,
                       "env_tool": "venv", "env_name": None, "notes": None})


@pytest.fixture
def local_matrix(pytester: pytest.Pytester) -> list[str]:
    """Two agents on this machine, each with its own report: alpha's interpreter is real."""
    commit = make_checkout(pytester.path / "checkout")
    pytester.makepyfile(test_mini=(
        "from pytest_reb import Repo, Run, torchrun\n"
        f"repo = Repo('me/mini', commit='{commit}', imports_total=1,\n"
        "            cpu=Run(['{python}', 'main.py'], timeout=60),\n"
        "            single_gpu=Run(['{python}', 'main.py']), multi_gpu=torchrun('main.py'))\n"))
    (pytester.path / "alpha.json").write_text(report(sys.executable))
    (pytester.path / "beta.json").write_text(report("/nonexistent/bin/python"))
    rows = [{"repo": "me/mini", "agent": a, "host": "local://", "report": f"{a}.json"}
            for a in ("alpha", "beta")]
    (pytester.path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ["--rootdir", str(pytester.path), "--reb-matrix", "m.jsonl", "--reb-repo-dir",
            str(pytester.path / "checkout"), "--reb-gpus", "", "-m", "c1 or c3 or c4",
            "-p", "no:cacheprovider"]


def test_local_matrix_n2_and_shards_equal_n0(pytester: pytest.Pytester,
                                             local_matrix: list[str]) -> None:
    p = pytester.path
    single = pytester.runpytest_subprocess(*local_matrix, "--reb-outdir", str(p / "n0"))
    single.assert_outcomes(passed=1, failed=5)
    base, base_outcomes = only_run(p / "n0")
    # each agent's own report: beta's interpreter does not exist, alpha's does
    assert {k: (o.agent, o.status) for k, o in base_outcomes.items() if o.tier == "c1"} == {
        "me/mini|alpha@local://|c1": ("alpha", "passed"),
        "me/mini|beta@local://|c1": ("beta", "failed")}
    assert set(base["agents"]) == {"alpha", "beta"}

    par = pytester.runpytest_subprocess(*local_matrix, "-n", "2", "-v",
                                        "--reb-outdir", str(p / "n2"))
    par.assert_outcomes(passed=1, failed=5)
    got, got_outcomes = only_run(p / "n2")
    assert summary_differences(base, got) == []
    assert verdicts(got_outcomes) == verdicts(base_outcomes)
    placed = workers_by_pair(par.stdout.str())
    assert len(placed) == 2 and all(len(w) == 1 for w in placed.values()), placed

    # sorted pairs: alpha's is shard 1, beta's shard 2
    for i, (passed, failed) in ((1, (1, 2)), (2, (0, 3))):
        shard = pytester.runpytest_subprocess(*local_matrix, "--reb-shard", f"{i}/2",
                                   "--reb-outdir", str(p / f"shard{i}"))
        shard.assert_outcomes(passed=passed, failed=failed, deselected=9)  # 6 by -m
    shards = [run_dirs(p / f"shard{i}")[0] for i in (1, 2)]
    assert reb(["merge", *map(str, shards), "--out", str(p / "merged"),
                "--expect", str(run_dirs(p / "n0")[0] / "summary.json")]) == 0


DEMO_TIERS = "c1 or c2"


@pytest.fixture(scope="module")
def demo_matrix(tmp_path_factory: pytest.TempPathFactory, demo_image: str,
                missing_dep_image: str) -> dict[str, Any]:
    """Two agents x (good, missing-dep) demo images, and the ``-n 0`` run of it: the baseline.

    The suite itself runs under ``-n``, so the tests below may land on two
    workers: the first makes the baseline under a file lock, the other reads it.
    """
    from filelock import FileLock

    rows = "".join(f'[[target]]\nrepo = "reb/tinynet"\nagent = "{agent}"\nimage = "{image}"\n'
                   for agent in ("alpha", "beta") for image in (demo_image, missing_dep_image))
    files = {"test_demo__tinynet.py": DEMO_MODULE.read_text(), "matrix.toml": rows}
    base = tmp_path_factory.getbasetemp()  # under xdist, its parent is this session's
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "reb-baseline"
    shared.mkdir(exist_ok=True)
    with FileLock(str(shared) + ".lock"):
        if not run_dirs(shared / "reports"):
            for name, text in files.items():
                (shared / name).write_text(text)
            proc = subprocess.run([sys.executable, "-m", "pytest", "--rootdir", str(shared),
                                   "--reb-matrix", "matrix.toml", "-m", DEMO_TIERS, "-n", "0",
                                   "-p", "no:cacheprovider", "--reb-outdir",
                                   str(shared / "reports")],
                                  cwd=shared, capture_output=True, text=True, timeout=1200)
            assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # tiers fail
    summary, outcomes = only_run(shared / "reports")
    return {"files": files, "summary": summary, "outcomes": outcomes}


def demo_args(pytester: pytest.Pytester, demo: dict[str, Any], outdir: str) -> list[str]:
    for name, text in demo["files"].items():
        (pytester.path / name).write_text(text)
    return ["--rootdir", str(pytester.path), "--reb-matrix", "matrix.toml", "-m", DEMO_TIERS,
            "-p", "no:cacheprovider", "--reb-outdir", str(pytester.path / outdir)]


@pytest.mark.container
def test_demo_matrix_baseline_verdicts(demo_matrix: dict[str, Any]) -> None:
    """What the equalities below compare: two agents, each with one good and one broken image."""
    summary = demo_matrix["summary"]
    for agent in ("alpha", "beta"):
        c1 = summary["agents"][agent]["c1"]
        assert (c1["passed"], c1["failed"], c1["categories"]) == (1, 1, {"deps": 1})
        assert summary["agents"][agent]["c2"]["categories"] == {"cuda_unavailable": 2}
    assert {o.agent for o in demo_matrix["outcomes"].values()} == {"alpha", "beta"}
    assert len(demo_matrix["outcomes"]) == 8


@pytest.mark.container
def test_demo_matrix_n2_equals_n0(pytester: pytest.Pytester, demo_matrix: dict[str, Any]) -> None:
    result = pytester.runpytest_subprocess(*demo_args(pytester, demo_matrix, "n2"),
                                           "-n", "2", "-v")
    result.assert_outcomes(passed=2, failed=6)
    summary, outcomes = only_run(pytester.path / "n2")
    assert summary_differences(demo_matrix["summary"], summary) == []
    assert verdicts(outcomes) == verdicts(demo_matrix["outcomes"])
    placed = workers_by_pair(result.stdout.str())
    assert len(placed) == 4, placed
    assert all(len(w) == 1 for w in placed.values()), f"a pair was split: {placed}"
    assert set().union(*placed.values()) == {"gw0", "gw1"}, f"one worker did all: {placed}"


@pytest.mark.container
def test_demo_matrix_two_shards_merged_equal_n0(pytester: pytest.Pytester,
                                                demo_matrix: dict[str, Any]) -> None:
    shards, counts = [], []
    for i in (1, 2):
        result = pytester.runpytest_subprocess(*demo_args(pytester, demo_matrix, f"shard{i}"),
                                    "--reb-shard", f"{i}/2")
        counts.append(result.parseoutcomes())
        [run] = run_dirs(pytester.path / f"shard{i}")
        shards.append(run)
    assert [c["deselected"] for c in counts] == [20, 20]  # 16 by -m, 4 by the shard
    assert sum(c.get("passed", 0) for c in counts) == 2
    assert sum(c.get("failed", 0) for c in counts) == 6
    targets = [{o.target for o in OutcomeLog(r / "outcomes.jsonl")} for r in shards]
    assert not targets[0] & targets[1] and len(targets[0] | targets[1]) == 4
    out = pytester.path / "merged"
    assert reb(["merge", *map(str, shards), "--out", str(out)]) == 0
    merged = json.loads((out / "summary.json").read_text())
    assert summary_differences(demo_matrix["summary"], merged) == []
    assert verdicts(OutcomeLog(out / "outcomes.jsonl").latest()) == verdicts(
        demo_matrix["outcomes"])
