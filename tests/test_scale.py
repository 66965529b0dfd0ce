"""Scale: xdist scheduling by (module, target), shards, ``reb merge``, matrices, GPU leases.

The claim under test is the issue's: ``-n 2`` over a matrix gives the same
summary as ``-n 0``, and shards merged give it too.  "The same" is
``summary_differences`` (run ids, times, durations and GPU-holder pids
aside).  It is checked twice: on ``local://`` (fast, any machine) and on
the demo images (marked ``container``).  Tiers stay at C1 plus GPU tiers
that a CPU machine decides at once, so the suite stays fast.  Runs of
pytest go through subprocesses: an in-process pytester run drops the
modules it imported (docker, requests) when it ends, and a Docker client
made later in the same worker then fails ("You can only merge into CookieJar").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.cli import main as reb
from pytest_reb.distribute import parse_shard, scope_of, shard_keys
from pytest_reb.lease import GpuLeases
from pytest_reb.matrix import MatrixError, load_matrix
from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.report.merge import (
    MergeError,
    comparable,
    merge,
    summary_differences,
    verdict,
    write,
)
from pytest_reb.scheduling import TargetScheduling
from pytest_reb.target import ImageRef

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
#: ``[gw1] [ 25%] FAILED path::test_c1_cpu[id]`` in ``-v`` output under xdist.
WORKER_LINE = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] (?:PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS) "
                         r"(\S+)")


# --------------------------------------------------------------------------- helpers


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


def outcome(target: str, tier: str = "c1", status: str = "passed", *,
            category: str | None = None, agent: str | None = "alpha", started: float = 1.0,
            duration: float = 1.0) -> Outcome:
    ok = status == "passed"
    return Outcome(repo="me/mini", target=target, tier=tier, status=status,  # type: ignore[arg-type]
                   category=category, strict=ok, compat=ok, agent=agent, started=started,
                   duration=duration)


def write_run(path: Path, outcomes: list[Outcome], mode: str | None = "strict") -> Path:
    log = OutcomeLog(path / "outcomes.jsonl")
    for o in outcomes:
        log.append(o)
    if mode:
        (path / "summary.json").write_text(json.dumps({"mode": mode}))
    return path


# --------------------------------------------------------------------------- scheduling


@pytest.mark.parametrize(("nodeid", "scope"), [
    ("repos/test_a.py::test_c1_cpu[alpha@img:1]", "repos/test_a.py[alpha@img:1]"),
    ("repos/test_a.py::test_c5_audit[alpha@img:1]", "repos/test_a.py[alpha@img:1]"),
    ("repos/test_a.py::test_c1_cpu[ssh://gpu-node]", "repos/test_a.py[ssh://gpu-node]"),
    ("test_x.py::test_c1_cpu[beta@reg:5000/x:y]", "test_x.py[beta@reg:5000/x:y]"),
    ("tests/test_plain.py::test_something", "tests/test_plain.py"),
])
def test_scope_is_module_and_target(nodeid: str, scope: str) -> None:
    assert scope_of(nodeid) == scope


class FakeWorker:
    """Just enough of xdist's ``WorkerController`` for a scheduler."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.queue: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def test_target_scheduling_keeps_each_pair_on_one_worker(pytester: pytest.Pytester) -> None:
    """The scheduler xdist gets (driven as xdist's controller drives it): pairs never split."""
    collection = [f"repos/test_{r}.py::{t}[{a}@img-{r}]" for r in "ab" for a in ("x", "y", "z")
                  for t in ("test_c0_imports", "test_c1_cpu", "test_c2_cuda", "test_c5_audit")]
    sched = TargetScheduling(pytester.parseconfig("--tx", "2*popen", "--dist", "loadscope"))
    workers = [FakeWorker("gw0"), FakeWorker("gw1")]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    ran: dict[str, set[str]] = defaultdict(set)
    while any(w.queue for w in workers):
        for w in workers:  # the workers finish items in turn
            if w.queue:
                index = w.queue.pop(0)
                ran[scope_of(collection[index])].add(w.gateway.id)
                sched.mark_test_complete(w, index)
    assert len(ran) == 6 and all(len(ws) == 1 for ws in ran.values()), ran
    assert set().union(*ran.values()) == {"gw0", "gw1"}
    assert sched.tests_finished


# --------------------------------------------------------------------------- shards


def test_parse_shard() -> None:
    assert parse_shard("2/4") == (2, 4) and parse_shard(" 1 / 1 ") == (1, 1)
    for bad in ("0/2", "3/2", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="I/N"):
            parse_shard(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_shards_are_disjoint_covering_balanced_and_stable(count: int) -> None:
    keys = {f"owner/repo{r}|agent{a}@image" for r in range(44) for a in range(3)}
    shards = [shard_keys(keys, (i, count)) for i in range(1, count + 1)]
    assert set().union(*shards) == keys
    assert sum(len(s) for s in shards) == len(keys)  # disjoint
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    # another machine builds the set in another order and gets the same split
    assert [shard_keys(set(sorted(keys, reverse=True)), (i, count))
            for i in range(1, count + 1)] == shards


def test_more_shards_than_pairs_leaves_some_empty() -> None:
    shards = [shard_keys({"a|x", "b|x"}, (i, 3)) for i in (1, 2, 3)]
    assert shards == [{"a|x"}, {"b|x"}, set()]


# --------------------------------------------------------------------------- matrices


def test_matrix_toml_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        '[[target]]\nrepo = "me/mini"\nagent = "alpha"\nimage = "img:1"\nreport = "r.json"\n'
        '[[target]]\nrepo = "me/mini"\nagent = "beta"\nhost = "ssh://gpu"\n')
    alpha, beta = load_matrix(tmp_path / "m.toml")
    assert (alpha.id, alpha.url, alpha.repo) == ("alpha@img:1", ImageRef("img:1"), "me/mini")
    assert alpha.report == str(tmp_path / "r.json")  # relative to the matrix file
    assert (beta.id, beta.url, beta.report) == ("beta@ssh://gpu", "ssh://gpu", None)
    (tmp_path / "m.jsonl").write_text('# agents\n{"repo": "me/mini", "image": "img:1"}\n\n'
                                      '{"repo": "me/mini", "agent": "a", "image": "img:1"}\n')
    assert [s.id for s in load_matrix(tmp_path / "m.jsonl")] == ["img:1", "a@img:1"]


@pytest.mark.parametrize(("name", "text", "error"), [
    ("m.toml", "[[target]\nrepo = 1", r"m\.toml is not TOML"),
    ("m.toml", '[[target]]\nimage = "x"\ngpu = "0"\n', r"row 1: unknown key\(s\) \['gpu'\]"),
    ("m.toml", '[[target]]\nimage = "x"\nhost = "local://"\n', "row 1: give exactly one of"),
    ("m.toml", '[[target]]\nagent = "a"\n', "row 1: give exactly one of image or host"),
    ("m.toml", '[[target]]\nimage = "x"\n[[target]]\nimage = "x"\n', "targets named twice.*x"),
    ("m.toml", '[[target]]\nimage = ""\n', "image must be a non-empty string"),
    ("m.jsonl", '{"image": "x"}\n{"image": "x", "agent": "a"}\n{"image": "x"',
     r"m\.jsonl:3: not JSON"),
    ("m.jsonl", '["image", "x"]\n', "row 1: a row is a table/object, not list"),
    ("m.jsonl", '{"image": "x", "agent": 7}\n', "agent must be a non-empty string"),
])
def test_matrix_errors_name_the_file_and_row(tmp_path: Path, name: str, text: str,
                                             error: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(MatrixError, match=error):
        load_matrix(tmp_path / name)


def test_one_agent_on_one_host_for_two_repositories(tmp_path: Path) -> None:
    """A name is unique per repository; a row without one meets every module, so it clashes."""
    rows = '[[target]]\nrepo = "me/a"\nagent = "x"\nhost = "ssh://gpu"\n' \
           '[[target]]\nrepo = "me/b"\nagent = "x"\nhost = "ssh://gpu"\n'
    (tmp_path / "m.toml").write_text(rows)
    assert [(s.repo, s.id) for s in load_matrix(tmp_path / "m.toml")] == [
        ("me/a", "x@ssh://gpu"), ("me/b", "x@ssh://gpu")]
    (tmp_path / "m.toml").write_text(rows + '[[target]]\nagent = "x"\nhost = "ssh://gpu"\n')
    with pytest.raises(MatrixError, match=r"named twice.*x@ssh://gpu"):
        load_matrix(tmp_path / "m.toml")


def test_each_module_gets_only_its_own_rows(pytester: pytest.Pytester) -> None:
    """Two repositories on one local agent: each module's items carry the one plain id."""
    for name in ("a", "b"):
        pytester.makepyfile(**{f"test_me__{name}": (
            "from pytest_reb import Repo, Run\n"
            f"repo = Repo('me/{name}', commit='0' * 40, imports_total=1,\n"
            "            cpu=Run(['{python}', '-c', 'print(1)'], timeout=60))\n")})
    rows = [{"repo": f"me/{n}", "agent": "x", "host": "local://"} for n in ("a", "b")]
    (pytester.path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-matrix", "m.jsonl", "--reb-python",
        sys.executable, "--reb-repo-dir", str(pytester.path), "-m", "c1", "-p",
        "no:cacheprovider", "--reb-outdir", str(pytester.path / "r"), "--collect-only", "-q")
    assert result.ret == 0
    ids = sorted(line for line in result.stdout.lines if "::test_c1_cpu[" in line)
    assert ids == ["test_me__a.py::test_c1_cpu[x@local://]",
                   "test_me__b.py::test_c1_cpu[x@local://]"]


def test_missing_matrix_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--reb-matrix", "nowhere.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reb-matrix: cannot read nowhere.toml*"])


# --------------------------------------------------------------------------- GPU leases


def test_leases_never_share_a_gpu_and_never_deadlock(tmp_path: Path) -> None:
    leases = GpuLeases(["0", "1", "2"], lock_dir=tmp_path)
    held: dict[str, str] = {}
    guard = threading.Lock()
    clashes: list[str] = []
    done: list[int] = []

    def worker(name: str, sizes: list[int]) -> None:
        for size in sizes:
            with leases.hold(size) as gpus:
                assert len(gpus) == size
                with guard:
                    clashes.extend(f"{g}: {held[g]} and {name}" for g in gpus if g in held)
                    held.update(dict.fromkeys(gpus, name))
                time.sleep(0.005)
                with guard:
                    for g in gpus:
                        held.pop(g, None)
        done.append(1)

    threads = [threading.Thread(target=worker, args=(f"t{i}", [1 + (i + j) % 3 for j in range(12)]),
                                daemon=True) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlock: lease holders never finished"
    assert len(done) == 6 and not clashes, clashes




def test_a_multi_gpu_lease_takes_any_free_set(tmp_path: Path) -> None:
    """GPU 0 is busy: two GPUs are still free, so a C4 runs now on 1 and 2, not after 0."""
    leases = GpuLeases(["0", "1", "2", "3"], lock_dir=tmp_path)
    with leases.hold(1) as busy:
        assert busy == ["0"]
        start = time.monotonic()
        with leases.hold(2) as pair:
            assert pair == ["1", "2"] and time.monotonic() - start < 1
            with leases.hold(1) as last:
                assert last == ["3"]


def test_a_multi_gpu_lease_queues_in_order_once_patience_runs_out(tmp_path: Path) -> None:
    """No two GPUs free: after its patience it queues for the lowest two and gets them when
    they are released (single-GPU tiers cannot starve it)."""
    leases = GpuLeases(["0", "1", "2"], lock_dir=tmp_path, patience=0.3)
    release = threading.Event()
    took: list[list[str]] = []

    def one() -> None:
        with leases.hold(1) as gpus:
            took.append(gpus)
            release.wait(10)

    holders = [threading.Thread(target=one, daemon=True) for _ in range(2)]
    for t in holders:
        t.start()
    while len(took) < 2:
        time.sleep(0.01)
    threading.Timer(1.0, release.set).start()
    start = time.monotonic()
    with GpuLeases(["0", "1", "2"], tmp_path, patience=0.3).hold(2) as pair:
        assert pair == ["0", "1"] and time.monotonic() - start >= 0.9
    for t in holders:
        t.join(timeout=10)


def test_leases_hold_across_processes(tmp_path: Path) -> None:
    """Another process (another xdist worker or run) holding GPU 0 is respected."""
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from pytest_reb.lease import GpuLeases\n"
         f"with GpuLeases(['0', '1'], Path({str(tmp_path)!r})).hold(1) as g:\n"
         "    print(g[0], flush=True); time.sleep(2)\n"],
        stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "0"
    start = time.monotonic()
    with GpuLeases(["0", "1"], tmp_path).hold(1) as mine:
        assert mine == ["1"]
    with GpuLeases(["0", "1"], tmp_path).hold(2) as both:  # waits for the child to end
        assert both == ["0", "1"] and time.monotonic() - start > 1
    assert child.wait(timeout=10) == 0


# --------------------------------------------------------------------------- merge (unit)


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
    passed_only_by_exit_code = Outcome(repo="r", target="t", tier="c3", status="passed",
                                       strict=False, compat=True)
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


# --------------------------------------------------------------------------- local:// matrices


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


# --------------------------------------------------------------------------- the demo images


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
