"""The pyramid's first tiers side by side (``pytest_reb/pyramid/lanes.py``): C1 in containers of its
own, C0 and C2 in others, C5's observation in the first free, C3 and C4 after both, alone,
and C5 judged in its turn.

What must hold: the lanes change when things run, never what is decided: the
demo's pyramid gives, tier by tier, the verdicts a serial run (``--reb-serial``)
gives; ``--reb-compat`` keeps the official order; the tiers really overlapped;
every lane ran in containers other than the target's own, all removed; a command that
ran out of time computing, or starved of a core, beside other lanes runs again alone, one
that waited does not.
Ctrl-C in the middle of the lanes is in ``tests/faults/test_interrupt.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.images import demo_module, module_text

from pytest_reb.pyramid.lanes import (
    CROWDED_SHARE,
    LANE_TIERS,
    LANES,
    STARVED_SHARE,
    Plan,
    crowded_why,
    plan,
    spare_cores,
)
from pytest_reb.targets import DockerTarget, InfraError, Limits
from pytest_reb.targets.base import LABEL_RUN, labels
from pytest_reb.targets.docker import BACKGROUND_SHARES


def test_lanes_need_two_cores_a_worker() -> None:
    cores = len(os.sched_getaffinity(0))
    assert spare_cores(cores // 2) if cores >= 2 else not spare_cores(1)
    assert not spare_cores(cores)  # every core has a worker already


def test_the_lanes_keep_their_order_and_need_two_of_them() -> None:
    assert plan({"c0", "c1", "c2"}) == Plan((("c1",), ("c0", "c2")))
    assert plan({"c5", "c2", "c1", "c0"}) == Plan((("c1",), ("c0", "c2")), ("c5",))
    assert plan(["c2", "c1"]) == Plan((("c1",), ("c2",)))
    assert plan({"c0", "c1"}) == Plan((("c1",), ("c0",)))
    # one lane alone is the serial order with a container more, the tail no lane of its own
    assert not plan({"c0", "c2"}) and not plan({"c1", "c5"})
    assert not plan({"c1"}) and not plan(set())
    assert set(LANE_TIERS) == {"c0", "c1", "c2", "c5"}
    assert LANES[0] == ("c1",)


#: (timed out, duration, evidence, why): what the host counted of a lane's run, and whether
#: it may have lost to the lanes beside it.
CROWDED = [
    (True, 10.0, {"cpu_seconds": 6.0}, "timeout"),  # computing
    (True, 10.0, {"cpu_seconds": 1.0}, "timeout"),  # computing on a crowded machine
    (True, 10.0, {"cpu_seconds": 0.0}, None),  # a sleep
    (True, 10.0, {"cpu_seconds": 0.3, "cpu_wait_seconds": 0.2}, None),  # a retried download
    (True, 10.0, {"cpu_seconds": 0.2, "cpu_wait_seconds": 9.5}, "timeout"),  # starved
    (True, 10.0, {"cpu_seconds": 0.0, "cpu_wait_seconds": 2.5}, "timeout"),  # at the line
    (True, 10.0, {"cpu_seconds": 0.0, "cpu_wait_seconds": 2.4}, None),
    (True, 10.0, {"cpu_wait_seconds": 9.5}, "timeout"),  # no CPU counter, but the stall
    # starved over the span the stall was counted; the exec's start and kill took the rest
    (True, 14.0, {"cpu_seconds": 0.1, "cpu_wait_seconds": 2.2, "cpu_wait_window": 4.5},
     "timeout"),
    (True, 10.0, {"cpu_wait_seconds": 2.0, "cpu_wait_window": 0.0}, None),  # no span: duration
    (True, 10.0, {"cpu_wait_seconds": 2.0, "cpu_wait_window": True}, None),  # not a figure
    (True, 10.0, {}, None),  # the host could count nothing: judged as it is
    (True, 10.0, {"cpu_seconds": None, "cpu_wait_seconds": True}, None),  # not a figure
    (True, 0.0, {"cpu_seconds": 1.0, "cpu_wait_seconds": 1.0}, None),
    (False, 10.0, {"cpu_seconds": 9.0, "cpu_wait_seconds": 9.0}, None),  # it ended in time
    (False, 3.0, {"oom_killed": True, "oom_at_own_limit": False}, "memory"),
    (False, 3.0, {"oom_killed": True, "oom_at_own_limit": True}, None),  # its own limit
    (False, 3.0, {"oom_killed": True}, None),  # where the limit was hit is unknown
    (True, 10.0, {"cpu_seconds": 0.0, "oom_killed": True, "oom_at_own_limit": False}, "memory"),
]


@pytest.mark.parametrize(("timed_out", "duration", "evidence", "why"), CROWDED)
def test_what_counts_as_crowded(timed_out: bool, duration: float, evidence: dict[str, Any],
                                why: str | None) -> None:
    assert crowded_why(timed_out, duration, evidence) == why


# --------------------------------------------------------------------------- real containers


def _outcomes(folder: Path) -> dict[str, dict[str, Any]]:
    [log] = folder.glob("*/outcomes.jsonl")
    return {o["tier"]: o for o in map(json.loads, log.read_text().splitlines())}


def _verdicts(outcomes: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {t: (o["status"], o.get("category"), o.get("strict"), o.get("compat"))
            for t, o in outcomes.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, demo_image: str,
         docker_client: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """The demo's whole pyramid three ways: side by side (the default), ``--reb-serial`` and
    ``--reb-compat``; each run's outcomes by tier."""
    import subprocess
    import sys

    commit = docker_client.images.get(demo_image).labels["reb.demo.commit"]
    folder = tmp_path_factory.mktemp("lanes")
    (folder / "test_demo__tinynet.py").write_text(demo_module(commit))
    made: dict[str, dict[str, dict[str, Any]]] = {}
    for name, extra in (("lanes", []), ("serial", ["--reb-serial"]),
                        ("compat", ["--reb-compat"])):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--rootdir", str(folder), "-p", "no:cacheprovider",
             "test_demo__tinynet.py", "--reb-image", demo_image, *extra,
             "--reb-outdir", str(folder / name)],
            cwd=folder, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]  # no GPU here
        made[name] = _outcomes(folder / name)
    return made


@pytest.mark.container
def test_side_by_side_gives_the_serial_verdicts(runs: dict[str, Any]) -> None:
    assert set(runs["lanes"]) == {"c0", "c1", "c2", "c3", "c4", "c5"}
    assert _verdicts(runs["lanes"]) == _verdicts(runs["serial"])
    assert runs["lanes"]["c1"]["status"] == "passed" and runs["lanes"]["c5"]["status"] == "passed"


@pytest.mark.container
def test_the_lanes_ran_beside_each_other(runs: dict[str, Any]) -> None:
    got = runs["lanes"]
    assert got["c1"]["evidence"]["side_by_side"] == {"lane": ["c1"], "beside": ["c0", "c2"]}
    for tier in ("c0", "c2"):
        assert got[tier]["evidence"]["side_by_side"] == {"lane": ["c0", "c2"], "beside": ["c1"]}
    # C5's observation ran in the first lane done with its own, its audit in its turn
    assert got["c5"]["evidence"]["side_by_side"] in (
        {"lane": ["c1", "c5"], "beside": ["c0", "c2"]},
        {"lane": ["c0", "c2", "c5"], "beside": ["c1"]})
    c1_end = got["c1"]["started"] + got["c1"]["duration"]
    assert got["c0"]["started"] < c1_end and got["c1"]["started"] < got["c0"]["started"] + \
        got["c0"]["duration"], "C0 and C1 did not overlap"
    # the tiers of no lane ran after every lane, alone
    lanes_end = max(got[t]["started"] + got[t]["duration"] for t in ("c0", "c1", "c2"))
    assert all(got[t]["started"] >= lanes_end - 0.5 for t in ("c3", "c4", "c5"))


@pytest.mark.container
def test_c5s_strict_question_is_answered_by_c2s_probe_but_under_compat(
        runs: dict[str, Any]) -> None:
    """One ``import torch`` fewer per pyramid (``answers.py``): in the lanes C5's observation
    waited for C2's answer from the other lane; compat asks as the official order does."""
    for name, by in (("lanes", "c2"), ("serial", "c2"), ("compat", None)):
        assert runs[name]["c5"]["evidence"]["observed"]["answered_by"] == by, name
        assert len(runs[name]["c2"]["command"]) == (3 if by else 2), name  # the nonce


@pytest.mark.container
def test_serial_and_compat_keep_the_official_order(runs: dict[str, Any]) -> None:
    for name in ("serial", "compat"):
        assert not any("side_by_side" in o["evidence"] for o in runs[name].values()), name
        got = runs[name]
        assert got["c0"]["started"] + got["c0"]["duration"] <= got["c1"]["started"] + 0.5


@pytest.mark.container
def test_a_sibling_shares_nothing_and_a_retired_one_makes_nothing(demo_image: str,
                                                                 docker_client: Any) -> None:
    target = DockerTarget(demo_image, run_id="tests-lanes-sibling", gpus=[],
                          limits=Limits(memory="1g", pids=128))
    sibling = target.sibling()
    try:
        assert sibling is not target.sibling() and sibling is not target.twin()
        assert target.container().id != sibling.container().id
        # lane 2 yields the cores to the entrypoint when they are contended
        assert not sibling.container().attrs["HostConfig"]["CpuShares"]
        background = target.sibling(background=True)
        assert background.container().attrs["HostConfig"]["CpuShares"] == BACKGROUND_SHARES
        assert background.limits.memory == target.limits.memory  # only the weight differs
        background.retire()
        target.close()  # the target's close leaves its siblings alone
        assert sibling.exec(["/bin/true"], timeout=30).exit_code == 0
        sibling.retire()
        with pytest.raises(InfraError, match="retired"):
            sibling.exec(["/bin/true"], timeout=30)
        assert docker_client.containers.list(
            all=True, filters={"label": f"{LABEL_RUN}=tests-lanes-sibling"}) == []
    finally:
        sibling.retire()
        target.close()


#: C1 commands that fail for time or memory: one computing the whole time, one waiting, one
#: past its own container's memory limit (``--reb-memory``).
SPIN = 'Run(["{python}", "-c", "while True: pass"], timeout=6)'
WAIT = 'Run(["sleep", "300"], timeout=6)'
HOG = 'Run(["{python}", "-c", "b = [bytearray(64 << 20) for _ in range(64)]"], timeout=120)'


@pytest.fixture(scope="module")
def timed_out(tmp_path_factory: pytest.TempPathFactory, demo_image: str,
              docker_client: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """C0, C1 and C2 side by side with a C1 that runs out of time, computing or waiting, or
    out of its container's memory."""
    import subprocess
    import sys

    commit = docker_client.images.get(demo_image).labels["reb.demo.commit"]
    made: dict[str, dict[str, dict[str, Any]]] = {}
    for name, run, extra in (("spin", SPIN, []), ("wait", WAIT, []),
                             ("hog", HOG, ["--reb-memory", "512m"])):
        folder = tmp_path_factory.mktemp(f"crowded-{name}")
        (folder / f"test_reb__{name}.py").write_text(module_text(f"reb/{name}", commit, cpu=run))
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--rootdir", str(folder), "-p", "no:cacheprovider",
             "--reb-image", demo_image, "-m", "c0 or c1 or c2", *extra,
             "--reb-outdir", str(folder / "out")],
            cwd=folder, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
        made[name] = _outcomes(folder / "out")
        assert set(made[name]) == {"c0", "c1", "c2"}, proc.stdout[-4000:] + proc.stderr[-2000:]
    return made


@pytest.mark.container
def test_a_crowded_run_runs_again_alone(timed_out: dict[str, Any]) -> None:
    """The computing C1 timed out in its lane beside C0 and C2, so it ran again after every
    lane, alone, with the same timeout; its first run is kept on the outcome."""
    got = timed_out["spin"]
    c1 = got["c1"]
    assert c1["status"] == "failed" and c1["category"] == "timeout" and c1["timed_out"]
    first = c1["evidence"]["crowded_run"]
    assert first["why"] == "timeout"
    # it wanted a core the whole time: it used a tenth of one, or waited for one (a loaded
    # machine: 0.08 of a core, the rest of the time stalled)
    assert first["cpu_seconds"] >= CROWDED_SHARE * first["duration"] \
        or first["cpu_wait_seconds"] >= STARVED_SHARE * first["duration"], first
    assert first["beside_seconds"] > 0 and set(first["beside"]) & {"scan", "c0", "c2"}
    assert "side_by_side" not in c1["evidence"]  # the judged run was alone
    lanes_end = max(got[t]["started"] + got[t]["duration"] for t in ("c0", "c2"))
    assert c1["started"] >= lanes_end - 0.5
    assert crowded_why(True, c1["duration"], c1["evidence"]) == "timeout", c1["evidence"]


@pytest.mark.container
def test_a_timeout_that_waited_is_judged_in_its_lane(timed_out: dict[str, Any]) -> None:
    """A C1 that slept past its timeout lost nothing to the lanes: one run, in its lane."""
    c1 = timed_out["wait"]["c1"]
    assert c1["category"] == "timeout" and "crowded_run" not in c1["evidence"]
    assert c1["evidence"]["side_by_side"]["lane"] == ["c1"]
    assert c1["evidence"]["cpu_seconds"] < CROWDED_SHARE * c1["duration"]
    assert c1["evidence"]["cpu_wait_seconds"] < STARVED_SHARE * c1["duration"], c1["evidence"]


@pytest.mark.container
def test_a_kill_at_the_containers_own_memory_limit_is_judged_in_its_lane(
        timed_out: dict[str, Any]) -> None:
    """Killed at its own container's limit, the lanes took nothing from it: one run."""
    c1 = timed_out["hog"]["c1"]
    assert c1["status"] == "failed" and c1["evidence"]["oom_killed"] is True
    assert c1["evidence"]["oom_at_own_limit"] is True
    assert "crowded_run" not in c1["evidence"] and "side_by_side" in c1["evidence"]


@pytest.mark.container
def test_a_kill_for_the_machines_memory_runs_again_alone(demo_image: str,
                                                         docker_client: Any) -> None:
    """An OOM kill below the container's own limit is the machine's memory running out, which
    the lanes share: the tier runs again alone.  (Exhausting this machine's memory for real
    would take every other job on it down, so the lane's outcome says what the engine's
    counters would: killed, the container's limit never reached.)"""
    from pytest_reb.outcome import Outcome
    from pytest_reb.pyramid.context import Context
    from pytest_reb.pyramid.lanes import Lanes
    from pytest_reb.selfreport import load_report
    from pytest_reb.spec import OFFICIAL_REPORT_PATH, Repo
    from pytest_reb.targets.housekeeping import sweep

    commit = docker_client.images.get(demo_image).labels["reb.demo.commit"]
    target = DockerTarget(demo_image, run_id="tests-lanes-memory", gpus=[],
                          limits=Limits(memory="1g", pids=128))

    def make(ctx: Context, tier: str) -> Outcome:
        import time

        time.sleep(1.0 if tier == "c1" else 0.5)
        o = ctx.outcome(tier, exit_code=137 if tier == "c1" else 0, duration=1.0,
                        category="oom" if tier == "c1" else None)
        if tier == "c1":
            o.evidence.update(oom_killed=True, oom_at_own_limit=False, cpu_seconds=0.1)
        return o

    ctx = Context(repo=Repo("reb/memory", commit=commit, imports_total=1),
                  target_name=demo_image, connect=lambda: target,
                  read_report=lambda get: load_report(get().read_file(OFFICIAL_REPORT_PATH),
                                                      source=OFFICIAL_REPORT_PATH))
    lanes = Lanes.start(ctx, plan(["c0", "c1", "c2"]), make)
    try:
        assert lanes is not None
        assert lanes.outcome("c1") is None  # to be run again, alone, after both lanes
        again = lanes.ran_again("c1")
        assert again is not None and again["why"] == "memory" and again["beside_seconds"] > 0
        assert lanes.outcome("c2") is not None and lanes.ran_again("c2") is None
    finally:
        if lanes is not None:
            lanes.stop()
        target.close()
        sweep("tests-lanes-memory")  # as a session's end does: a removal the engine dropped
    assert docker_client.containers.list(
        all=True, filters={"label": f"{LABEL_RUN}=tests-lanes-memory"}) == []


@pytest.mark.container
def test_a_starved_command_stalls_and_a_sleeping_one_does_not(demo_image: str,
                                                              docker_client: Any) -> None:
    """A command that wants a core but gets next to none (a container of the least CPU weight
    beside a sibling spinning on every core) is counted as waiting for one most of its wall
    time, by its cgroup's CPU pressure stall; a sleeping one next to none.  Orders of
    magnitude only: how much of a core either gets depends on the machine's load."""
    run_id = "tests-lanes-starved"
    starved = DockerTarget(demo_image, run_id=run_id, gpus=[],
                           limits=Limits(memory="256m", pids=64, cpu_shares=2))
    sleeper = DockerTarget(demo_image, run_id=run_id, gpus=[],
                           limits=Limits(memory="256m", pids=64))
    busy = None
    try:
        starved.warm()
        sleeper.warm()
        spin = "while :; do :; done"
        busy = docker_client.containers.run(
            demo_image, ["sh", "-c", f"for i in $(seq {os.cpu_count() or 1}); do "
                                     f"( {spin} ) & done; wait"],
            detach=True, network_mode="none", mem_limit="64m", pids_limit=64,
            labels=labels(run_id))  # with its owner: no other run's orphan
        slept = sleeper.exec(["sleep", "4"], timeout=60, scaled=False)
        spun = starved.exec([*starved.util("sh"), "-c", spin], timeout=4, scaled=False)
        assert slept.exit_code == 0 and spun.timed_out
        if spun.cpu_wait_seconds is None or slept.cpu_wait_seconds is None:
            pytest.skip("this host shows no CPU pressure stall or run-queue wait")
        assert spun.cpu_wait_window is not None and slept.cpu_wait_window is not None
        assert spun.cpu_wait_window <= spun.duration
        assert spun.cpu_wait_seconds >= STARVED_SHARE * spun.cpu_wait_window, spun
        assert slept.cpu_wait_seconds < 0.1 * slept.cpu_wait_window, slept
        assert spun.cpu_wait_seconds > 10 * slept.cpu_wait_seconds
        # what the lanes decide of each, had it timed out beside them
        assert crowded_why(True, spun.duration, {"cpu_seconds": spun.cpu_seconds,
                                                 "cpu_wait_seconds": spun.cpu_wait_seconds,
                                                 "cpu_wait_window": spun.cpu_wait_window})
        assert crowded_why(True, slept.duration, {"cpu_seconds": slept.cpu_seconds,
                                                  "cpu_wait_seconds": slept.cpu_wait_seconds,
                                                  "cpu_wait_window": slept.cpu_wait_window}) \
            is None
    finally:
        if busy is not None:
            busy.remove(force=True)
        starved.close()
        sleeper.close()
    assert docker_client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []
