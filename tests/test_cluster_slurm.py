"""``reb slurm``: the plan and its scripts as text, then a real Slurm cluster on this machine.

The first half checks what needs no cluster: which pairs each task gets (the
same ones pytest's ``--reb-shard`` selects), GPUs through GRES from the tiers,
time limits from the stage timeouts, the pass-through sbatch options, the
resubmission of unfinished tasks.  GRES cannot run here (no GPU, and a
``gpu`` GRES without one is a fake): those lines are checked as text only.

The second half starts a one-machine cluster of the suite's own
(``slurmcluster.LocalSlurm``: munged, slurmctld, slurmd under a temp folder)
and runs the demo images' CPU tier through it: the merged summary of the
array equals a one-machine run's, and a task cancelled mid-run, resubmitted,
continues its run without running its finished items again.  Without
``slurm-wlm``/``munge`` installed (``.ci/setup-slurm.sh``) those tests skip and say so;
installed but failing to start is a failure.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.slurmcluster import LocalSlurm, missing_binaries

from pytest_reb.loop.cli import main as reb
from pytest_reb.loop.cluster import gres, slurm
from pytest_reb.loop.cluster.plan import PlanError, make_plan, run_seconds
from pytest_reb.outcome import TIERS, Outcome, OutcomeLog
from pytest_reb.pyramid import c0_imports, ext_sweep
from pytest_reb.report.merge import summary_differences
from pytest_reb.spec import Run

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"

# --------------------------------------------------------------------------- plans

MODULES = {
    "test_me__cpu.py": "cpu=Run(['{python}', 'main.py'], timeout=100)",
    "test_me__ddp.py": ("cpu=Run(['{python}', 'main.py'], timeout=100),\n"
                        "            single_gpu=Run(['{python}', 'main.py'], timeout=200),\n"
                        "            multi_gpu=torchrun('main.py', nproc=4, timeout=300)"),
}


@pytest.fixture
def modules(tmp_path: Path) -> Path:
    """Two repository modules: CPU only (me/cpu), and one with a 4-GPU C4 (me/ddp)."""
    folder = tmp_path / "mods"
    folder.mkdir()
    for name, stages in MODULES.items():
        (folder / name).write_text(
            "from pytest_reb import Repo, Run, torchrun\n"
            f"repo = Repo('me/{name[9:-3]}', commit='0' * 40, imports_total=1,\n"
            f"            {stages})\n")
    return folder


def matrix(path: Path, rows: list[tuple[str, str]], host: str = "local://") -> Path:
    path.write_text("".join(f'[[target]]\nrepo = "{r}"\nagent = "{a}"\nhost = "{host}"\n'
                            for r, a in rows))
    return path


ROWS = [("me/cpu", "x"), ("me/ddp", "x"), ("me/ddp", "y")]


def test_one_task_per_pair_with_gpus_from_the_tiers(tmp_path: Path, modules: Path) -> None:
    plan = make_plan(matrix(tmp_path / "m.toml", ROWS), [modules])
    assert [(t.shard, [p.key for p in t.pairs], t.gpus) for t in plan.tasks] == [
        ("1/3", ["me/cpu|x@local://"], 1),  # C2 needs a GPU to be decided
        ("2/3", ["me/ddp|x@local://"], 4),  # C4: torchrun over 4
        ("3/3", ["me/ddp|y@local://"], 4)]
    only_c3 = make_plan(tmp_path / "m.toml", [modules], tiers=["c1", "c3"])
    assert [t.gpus for t in only_c3.tasks] == [0, 1, 1]
    assert only_c3.marker_expression() == "c1 or c3"
    # C5 compares against every tier, so it needs what C4 needs
    assert [t.gpus for t in make_plan(tmp_path / "m.toml", [modules], tiers=["c5"]).tasks] == [
        1, 4, 4]


def test_time_limits_come_from_the_stage_timeouts(tmp_path: Path, modules: Path) -> None:
    m = matrix(tmp_path / "m.toml", ROWS)
    cpu, ddp, _ = make_plan(m, [modules], tiers=["c1"]).tasks
    # task overhead 120 + pair overhead 180 + the stage, rounded up to whole minutes
    assert (cpu.seconds, ddp.seconds) == (420, 420)
    c1_c4 = make_plan(m, [modules], tiers=["c1", "c4"]).tasks[1]
    assert c1_c4.seconds == 720  # 120 + 180 + 100 + 300, to the minute
    assert make_plan(m, [modules], tiers=["c1", "c4"], timeout_scale=2).tasks[1].seconds == 1440
    # C2 run for C5 alone sweeps no extensions (issue 32), so it costs the sweep less
    c5 = make_plan(m, [modules], tiers=["c5"]).tasks[0].seconds
    c2_c5 = make_plan(m, [modules], tiers=["c2", "c5"]).tasks[0].seconds
    # (twice: C2 runs in a lane, where a crowded timeout runs it again alone, lanes.py)
    assert c2_c5 - c5 == 2 * ext_sweep.TIMEOUT
    # C1 alone has no lanes; beside C0 the worst case runs both twice
    assert make_plan(m, [modules], tiers=["c0", "c1"]).tasks[0].seconds == 60 * math.ceil(
        (120 + 180 + 2 * (100 + c0_imports.SURVEY_TIMEOUT + c0_imports.TIMEOUT
                          + c0_imports.BINDING_TIMEOUT)) / 60)
    retried = Run(["a"], timeout=10, setup=[["s"], ["t"]], retry=None)
    assert run_seconds(retried) == 30


def test_shards_group_pairs_as_pytest_does(pytester: pytest.Pytester) -> None:
    """Each task's ``--reb-shard`` selects exactly the pairs the plan gave it."""
    for name, stages in MODULES.items():
        pytester.makepyfile(**{name[:-3]: "from pytest_reb import Repo, Run, torchrun\n"
                               f"repo = Repo('me/{name[9:-3]}', commit='0' * 40, "
                               f"imports_total=1,\n            {stages})\n"})
    m = matrix(pytester.path / "m.toml", ROWS)
    for plan in (make_plan(m, [pytester.path]), make_plan(m, [pytester.path], shards=2)):
        for task in plan.tasks:
            result = pytester.runpytest_subprocess(
                *map(str, plan.modules), "--rootdir", str(pytester.path), "--reb-matrix", str(m),
                "--reb-shard", task.shard, "--collect-only", "-q", "-p", "no:cacheprovider",
                "--reb-outdir", str(pytester.path / "r"))
            assert result.ret == 0, result.stdout.str()
            got = {(line.split("::")[0][9:-3], line.split("[")[1].rstrip("]"))
                   for line in result.stdout.lines if "::test_c" in line}
            assert got == {(p.repo.name[3:], p.target.id) for p in task.pairs}, task


@pytest.mark.parametrize(("rows", "error"), [
    ([("me/none", "x")], "no module for me/none"),
    ([], "no rows"),
])
def test_plan_errors(tmp_path: Path, modules: Path, rows: list[tuple[str, str]],
                     error: str) -> None:
    with pytest.raises(PlanError, match=error):
        make_plan(matrix(tmp_path / "m.toml", rows), [modules])


def test_a_row_without_repo_and_bad_tiers_are_refused(tmp_path: Path, modules: Path) -> None:
    (tmp_path / "m.toml").write_text('[[target]]\nhost = "local://"\n')
    with pytest.raises(PlanError, match="has no repo"):
        make_plan(tmp_path / "m.toml", [modules])
    with pytest.raises(PlanError, match="tiers must be among"):
        make_plan(matrix(tmp_path / "m.toml", ROWS), [modules], tiers=["c9"])


# --------------------------------------------------------------------------- scripts as text


def test_slurm_time() -> None:
    assert [slurm.slurm_time(s) for s in (1, 60, 3661, 90000)] == [
        "0-00:01:00", "0-00:01:00", "0-01:01:01", "1-01:00:00"]


def test_scripts_carry_gres_time_and_passthrough(tmp_path: Path, modules: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    m = matrix(tmp_path / "m.toml", ROWS)
    out = tmp_path / "out"
    assert reb(["slurm", str(m), "--modules", str(modules), "--tiers", "c1,c3,c4", "--out",
                str(out), "--partition", "gpu", "--account", "lab", "--qos", "high",
                "--constraint", "h100", "--sbatch-arg=--mem=64G", "--dry-run", "--node-gpus", "8",
                "--pytest-args=-p no:cacheprovider"]) == 0
    assert "not submitted (--dry-run)" in capsys.readouterr().out
    submit = (out / "submit.sh").read_text()
    # a CPU-only task and two 4-GPU tasks: two requests, so two arrays, then one merge
    assert "sbatch --parsable --array=0 --time=0-00:07:00 array.sbatch" in submit
    assert "sbatch --parsable --array=1,2 --time=0-00:15:00 --gres=gpu:4 array.sbatch" in submit
    assert 'sbatch --parsable --dependency="afterany$ids" merge.sbatch' in submit
    for script in ("array.sbatch", "merge.sbatch"):
        text = (out / script).read_text()
        for line in ("--partition=gpu", "--account=lab", "--qos=high", "--constraint=h100",
                     "--mem=64G"):
            assert f"#SBATCH {line}\n" in text, (script, line)
    array = (out / "array.sbatch").read_text()
    assert "#SBATCH --requeue\n" in array
    assert ' --reb-shard "$((task + 1))/3" --reb-outdir "$out" --reb-gpus "$gpus"' in array
    assert "gpus=${SLURM_JOB_GPUS:-}" in array and '-m "${marks[$task]}"' in array
    assert "marks=([0]='c1 or c3 or c4' [1]='c1 or c3 or c4' [2]='c1 or c3 or c4')" in array
    assert "-p no:cacheprovider" in array
    plan = json.loads((out / "plan.json").read_text())
    assert [(t["gpus"], t["pairs"]) for t in plan["tasks"]] == [
        (0, ["me/cpu|x@local://"]), (4, ["me/ddp|x@local://"]), (4, ["me/ddp|y@local://"])]
    assert reb(["slurm", str(m), "--modules", str(modules), "--out", str(out),
                "--dry-run"]) == 2  # one submission per folder
    assert "already holds a submission" in capsys.readouterr().err


def test_the_cluster_gres_from_sinfo_lines() -> None:
    assert gres.parse(["(null)"]).gpus == 0 and gres.parse(["(null)"]).describe() == "no GRES"
    nodes = gres.parse(["gpu:a100:4(S:0-1),gpu:t4:2,shard:8", "gpu:2", "(null)"])
    assert (nodes.gpus, nodes.most["shard"], nodes.typed) == (6, 8, {"gpu:a100": 4, "gpu:t4": 2})
    assert gres.refusal(["gpu:6", "gpu:a100:4", "gpu:t4", "shard:8"], nodes) is None
    assert gres.refusal(["gpu:h100:1"], nodes) == (
        "--gres=gpu:h100:1 asks for 1 gpu:h100 per node, but the cluster's nodes have at most 0 "
        "(GRES gpu:2, gpu:a100:4(S:0-1),gpu:t4:2,shard:8)")
    assert "asks for 7 gpu" in (gres.refusal(["gpu:7"], nodes) or "")
    assert gres.requests_of(["--mem=1G", "--gres=gpu:1", "--gres", "shard:2"]) == [
        "gpu:1", "shard:2"]


def test_tiers_a_node_has_too_few_gpus_for_end_as_on_one_such_machine(
        tmp_path: Path, modules: Path) -> None:
    m = matrix(tmp_path / "m.toml", ROWS)
    none = make_plan(m, [modules], node_gpus=0)
    # every tier is planned, no task asks for a GPU; C5 needs none of its own
    assert [(t.tiers, t.gpus) for t in none.tasks] == [(TIERS, 0)] * 3
    short = "ends insufficient_hardware (as on one machine of 0 GPU(s)) for"
    assert none.skipped == (
        f"C2 needs 1 GPU(s), a node has 0: {short} me/cpu|x@local://, me/ddp|x@local://, "
        "me/ddp|y@local://",
        f"C3 needs 1 GPU(s), a node has 0: {short} me/ddp|x@local://, me/ddp|y@local://",
        f"C4 needs 4 GPU(s), a node has 0: {short} me/ddp|x@local://, me/ddp|y@local://")
    # the time limit counts the tiers that run: a short one ends before it starts anything
    cpu_only = make_plan(m, [modules], tiers=["c0", "c1"], node_gpus=0)
    assert [t.tiers for t in cpu_only.tasks] == [("c0", "c1")] * 3
    assert cpu_only.tasks[1].seconds < none.tasks[1].seconds
    two = make_plan(m, [modules], node_gpus=2)
    assert [(t.tiers, t.gpus) for t in two.tasks] == [(TIERS, 1), (TIERS, 2), (TIERS, 2)]
    assert two.skipped == (f"C4 needs 4 GPU(s), a node has 2: {short.replace('0 GPU', '2 GPU')}"
                           " me/ddp|x@local://, me/ddp|y@local://",)
    with pytest.raises(PlanError, match="no selected tier can run on this cluster: C3 needs 1"):
        make_plan(matrix(tmp_path / "d.toml", ROWS[1:]), [modules], tiers=["c3"], node_gpus=0)


def test_a_missing_matrix_is_said_before_the_cluster_is_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no sinfo: asking the cluster would fail
    assert reb(["slurm", str(tmp_path / "nonexistent.toml"), "--dry-run"]) == 2
    assert capsys.readouterr().err == (
        f"reb slurm: no such run matrix: {tmp_path / 'nonexistent.toml'}\n")


def test_a_gres_the_cluster_lacks_is_refused_before_anything_is_written(
        tmp_path: Path, modules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = matrix(tmp_path / "m.toml", ROWS)
    out = tmp_path / "out"
    assert reb(["slurm", str(m), "--modules", str(modules), "--out", str(out), "--node-gpus",
                "0", "--sbatch-arg=--gres=gpu:1", "--dry-run"]) == 2
    assert capsys.readouterr().err == (
        "reb slurm: not submitted: --gres=gpu:1 asks for 1 gpu per node, but the cluster's "
        "nodes have at most 0 (GRES --node-gpus 0)\n")
    assert not out.exists()
    assert reb(["slurm", str(m), "--modules", str(modules), "--out", str(out), "--node-gpus",
                "0", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "reb slurm: C4 needs 4 GPU(s), a node has 0: ends insufficient_hardware" in printed
    assert "task 1: c0,c1,c2,c3,c4,c5, 0 GPU" in printed
    assert "--gres" not in (out / "submit.sh").read_text()


def test_resubmit_takes_only_the_tasks_not_done(tmp_path: Path, modules: Path) -> None:
    out = tmp_path / "out"
    plan = make_plan(matrix(tmp_path / "m.toml", ROWS), [modules], tiers=["c1", "c4"])
    slurm.write(plan, out, slurm.SlurmOptions())
    (out / "tasks" / "1").mkdir()
    (out / "tasks" / "1" / "done").write_text("0\n")
    assert slurm.unfinished(out) == [0, 2]
    text = slurm.resubmit_script(out).read_text()
    assert "--array=0 --time=0-00:07:00 array.sbatch" in text
    assert "--array=2 --time=0-00:12:00 --gres=gpu:4 array.sbatch" in text
    assert "--array=1 " not in text and "afterany$ids" in text
    assert slurm.resubmit_script(out).name == "resubmit-2.sh"
    for i in (0, 2):
        (out / "tasks" / str(i)).mkdir(exist_ok=True)
        (out / "tasks" / str(i) / "done").write_text("1\n")
    with pytest.raises(slurm.SlurmError, match="every task is done"):
        slurm.resubmit_script(out)


def test_the_merge_joins_what_there_is_and_names_the_tasks_not_done(
        tmp_path: Path, modules: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    plan = make_plan(matrix(tmp_path / "m.toml", ROWS), [modules], tiers=["c1"])
    slurm.write(plan, out, slurm.SlurmOptions())
    for task, status in ((0, "passed"), (1, "failed")):  # task 2 never ran
        log = OutcomeLog(out / "tasks" / str(task) / f"2026010{task}-000000-abcdef" /
                         "outcomes.jsonl")
        [pair] = plan.tasks[task].pairs
        log.append(Outcome(repo=pair.repo.name, target=pair.target.id, tier="c1",
                           status=status, strict=status == "passed",  # type: ignore[arg-type]
                           compat=status == "passed", agent=pair.target.agent))
    (out / "tasks" / "0" / "done").write_text("0\n")
    assert reb(["slurm", "--merge", str(out)]) == 1
    printed = capsys.readouterr()
    assert "merged 2 outcome(s) of 2 target(s)" in printed.out
    assert "task(s) [1, 2] not done; `reb slurm --resubmit" in printed.err
    merged = json.loads((out / "merged" / "latest" / "summary.json").read_text())
    assert merged["totals"]["c1"]["passed"] == 1 and merged["totals"]["c1"]["failed"] == 1


# --------------------------------------------------------------------------- a real cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalSlurm]:
    missing = missing_binaries()
    if missing:
        pytest.skip(f"Slurm not installed (no {', '.join(missing)}): bash .ci/setup-slurm.sh")
    local = LocalSlurm()
    try:
        local.start()
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="module")
def demo(cluster: LocalSlurm, demo_image: str, missing_dep_image: str) -> dict[str, Any]:
    """Two agents' demo images (good, missing PyYAML) and the one-machine run of their C1."""
    work = cluster.path("work")
    work.mkdir()
    (work / DEMO_MODULE.name).write_text(DEMO_MODULE.read_text())
    (work / "m.toml").write_text(
        f'[[target]]\nrepo = "reb/tinynet"\nagent = "alpha"\nimage = "{demo_image}"\n'
        f'[[target]]\nrepo = "reb/tinynet"\nagent = "beta"\nimage = "{missing_dep_image}"\n')
    env = {**cluster.env, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--rootdir", str(work),
                           DEMO_MODULE.name, "--reb-matrix", "m.toml", "-m", "c1", "-p",
                           "no:cacheprovider", "--reb-outdir", "single"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout[-3000:]  # beta's C1 fails: deps
    [run] = (work / "single").glob("*/summary.json")
    return {"work": work, "env": env, "summary": json.loads(run.read_text())}


def reb_slurm(demo: dict[str, Any], *args: str, timeout: float = 900
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_reb.loop.cli", "slurm", *args],
                          cwd=demo["work"], env=demo["env"], capture_output=True, text=True,
                          timeout=timeout)


def submit_demo(demo: dict[str, Any], out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reb_slurm(demo, "m.toml", "--modules", DEMO_MODULE.name, "--tiers", "c1",
                     "--out", str(out), "--pytest-args=-p no:cacheprovider", *args)


def same_as_one_machine(demo: dict[str, Any], out: Path) -> None:
    """The merged summary equals the one-machine run's; else the differences and task logs."""
    merged = json.loads((out / "merged" / "latest" / "summary.json").read_text())
    diffs = summary_differences(demo["summary"], merged)
    logs = "\n".join(p.read_text()[-3000:] for p in sorted(out.glob("logs/task-*.out")))
    assert diffs == [], "\n".join(diffs) + "\n" + logs


@pytest.mark.container
def test_a_matrix_through_slurm_equals_one_machine(cluster: LocalSlurm,
                                                   demo: dict[str, Any]) -> None:
    out = cluster.path("per-pair")
    proc = submit_demo(demo, out, "--wait")
    assert proc.returncode == 0, proc.stdout + proc.stderr + cluster.logs()
    print(proc.stdout)  # the squeue lines docs/scaling.md quotes
    [sub] = [json.loads(line) for line in (out / "submissions.jsonl").read_text().splitlines()]
    states = {line.split()[0]: line.split()[2] for line in proc.stdout.splitlines()
              if line.split()[0][:1].isdigit()}
    jobs = [f"{sub['arrays'][0]}_0", f"{sub['arrays'][0]}_1", sub["merge"]]
    assert states == dict.fromkeys(jobs, "COMPLETED"), proc.stdout
    same_as_one_machine(demo, out)
    assert sorted(p.parent.name for p in out.glob("tasks/*/done")) == ["0", "1"]
    [record] = [line for line in cluster.path("log", "jobcomp.txt").read_text().splitlines()
                if f"JobId={sub['merge']} " in line]
    print(record)
    assert "Name=reb-merge JobState=COMPLETED" in record


@pytest.mark.container
def test_a_cancelled_task_resubmitted_resumes(cluster: LocalSlurm, demo: dict[str, Any],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """One task of both pairs, cancelled after its first outcome; resubmitted, it finishes."""
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))  # for slurm.wait here
    out = cluster.path("cancelled")
    proc = submit_demo(demo, out, "--shards", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [first] = [json.loads(line) for line in (out / "submissions.jsonl").read_text().splitlines()]
    task = f"{first['arrays'][0]}_0"
    deadline = time.monotonic() + 600
    while not any(p.stat().st_size for p in out.glob("tasks/0/*/outcomes.jsonl")):
        assert time.monotonic() < deadline, "the task recorded no outcome in 600 s"
        time.sleep(0.2)
    cluster.run("scancel", task)
    [log] = out.glob("tasks/0/*/outcomes.jsonl")
    assert slurm.wait(first["merge"], timeout=300) == "FAILED"  # it merged one task not done
    before = log.read_text().splitlines()
    assert len(before) == 1, f"the task finished before it was cancelled: {before}"
    assert not (out / "tasks" / "0" / "done").exists()
    assert "CANCELLED" in cluster.run("squeue", "-h", "-t", "all", "-j", task, "-o", "%T")

    again = reb_slurm(demo, "--resubmit", str(out), "--wait")
    assert again.returncode == 0, again.stdout + again.stderr + cluster.logs()
    after = log.read_text().splitlines()
    assert after[0] == before[0] and len(after) == 2  # the finished item did not run again
    assert len(OutcomeLog(log).latest()) == 2
    task_log = "\n".join(p.read_text() for p in out.glob("logs/task-0-*.out"))
    assert "--reb-resume" in task_log
    same_as_one_machine(demo, out)
    assert os.readlink(out / "merged" / "latest") == again.stdout.split("merge job ")[1].split()[0]


@pytest.mark.container
def test_a_gpu_less_cluster_runs_every_tier_as_one_gpu_less_machine(
        cluster: LocalSlurm, demo: dict[str, Any]) -> None:
    """The test cluster has no GRES: a --gres is refused; with the default tiers every tier
    is planned (C5 too), GPU tiers end as on one GPU-less machine, and the merged summary
    equals that machine's run of the same tiers."""
    assert cluster.run("sinfo", "-h", "-o", "%G").strip() == "(null)"
    refused = cluster.path("refused")
    proc = reb_slurm(demo, "m.toml", "--modules", DEMO_MODULE.name, "--out", str(refused),
                     "--sbatch-arg=--gres=gpu:1")
    assert proc.returncode == 2 and proc.stderr == (
        "reb slurm: not submitted: --gres=gpu:1 asks for 1 gpu per node, but the cluster's "
        "nodes have at most 0 (no GRES)\n"), proc.stderr
    assert not refused.exists()
    # generous timeouts on both sides: this shared machine is slow, and a probe killed at
    # its timeout on one side only would be a difference of load, not of the plan
    single = subprocess.run([sys.executable, "-m", "pytest", "--rootdir", str(demo["work"]),
                             DEMO_MODULE.name, "--reb-matrix", "m.toml", "-p",
                             "no:cacheprovider", "--reb-outdir", "single-all",
                             "--reb-timeout-scale=4"],
                            cwd=demo["work"], env=demo["env"], capture_output=True, text=True,
                            timeout=2400)
    assert single.returncode in (0, 1), single.stdout[-3000:]
    [run] = (demo["work"] / "single-all").glob("*/summary.json")
    out = cluster.path("gpu-less")
    proc = reb_slurm(demo, "m.toml", "--modules", DEMO_MODULE.name, "--out", str(out),
                     "--timeout-scale", "4", "--pytest-args=-p no:cacheprovider", "--wait",
                     timeout=2400)
    assert proc.returncode == 0, proc.stdout + proc.stderr + cluster.logs()
    print(proc.stdout)  # the lines docs/scaling.md quotes
    assert "task 0: c0,c1,c2,c3,c4,c5, 0 GPU" in proc.stdout, proc.stdout
    assert "merge job COMPLETED" in proc.stdout
    assert "--gres" not in (out / "submit.sh").read_text()
    merged = json.loads((out / "merged" / "latest" / "summary.json").read_text())
    diffs = summary_differences(json.loads(run.read_text()), merged)
    # the one machine measured the environments' sizes first; the tasks read the same
    # figures from the size cache both share, which their evidence says (``cached``)
    diffs = [d for d in diffs if not d.endswith(".env_size.cached: only in the second")]
    assert diffs == [], "\n".join(diffs)
    assert merged["totals"]["c5"]["applicable"] == 2, merged["totals"]["c5"]
