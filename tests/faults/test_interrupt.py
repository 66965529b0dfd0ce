"""Ctrl-C and SIGKILL of pytest itself.

- SIGINT during C1, between tiers, and during teardown of the demo run: each time no
  container of the run is left, ``outcomes.jsonl`` is whole JSON lines holding every
  item pytest reported finished, and ``--reb-resume`` carries on; the run finished by
  resuming has the same verdicts and totals as an uninterrupted run.
- SIGKILL of pytest mid-tier: its container is left (nothing could remove it), and
  ``reb gc`` removes it: its maker is dead.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.faults import HANG, Spawned, logged, process_in
from support.images import demo_module, module_text

from pytest_reb.outcome import OutcomeLog

pytestmark = pytest.mark.container

TIERS = "not c0"  # C1-C5 of the demo: pyright's C0 adds time, not a different path


def finished(run: Spawned) -> set[str]:
    """The tiers pytest reported finished (``-rA`` lines), whatever their verdict."""
    return set(re.findall(r"^(?:PASSED|FAILED|SKIPPED) \S+::test_(c\d)_", run.output, re.M))


def verdicts(summary: dict[str, Any]) -> dict[str, Any]:
    """What two runs of the same work must agree on: per tier, and the totals, sans times.

    ``env_size`` is a measurement, not a verdict, and it differs: in a whole run C5
    measures the venv after C1 wrote its bytecode there (the demo venv is installed
    with ``--no-compile``), in a resumed one before.
    """
    tiers = {f"{t['repo']} {tier}": {k: o.get(k) for k in ("status", "category", "strict",
                                                             "compat")}
             for t in summary["targets"] for tier, o in t["tiers"].items()}
    totals = {tier: {k: v for k, v in row.items() if k not in ("mean_duration", "env_size")}
              for tier, row in summary["totals"].items()}
    return {"tiers": tiers, "totals": totals}


def interrupted(folder: Path, client: Any, args: list[str], when: Any, *,
                may_finish: bool = False) -> Spawned:
    """A demo run interrupted with SIGINT when ``when(run)`` holds, checked as it ends.

    ``may_finish``: teardown lasts a moment, and on a loaded machine the run can end
    before the signal lands; then it must have ended as a whole run does.
    """
    run = Spawned(folder, args)
    run.wait_for(lambda: when(run))
    run.signal(signal.SIGINT)
    rc = run.finish(timeout=180)
    ends = {pytest.ExitCode.INTERRUPTED} | ({pytest.ExitCode.TESTS_FAILED} if may_finish else set())
    assert rc in ends, run.output[-3000:]
    assert run.containers(client) == [], "a container of the interrupted run is left"
    tiers = {o["tier"] for o in logged(folder / "reports")}
    assert finished(run) <= tiers, (finished(run), tiers)
    return run


def test_ctrl_c_at_several_points_then_resume(tmp_path: Path, docker_client: Any,
                                              demo_image: str, image_commit: str) -> None:
    base = ["test_demo__tinynet.py", "--reb-image", demo_image, "-m", TIERS]
    for name in ("uninterrupted", "interrupted"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "test_demo__tinynet.py").write_text(demo_module(image_commit))
    folder = tmp_path / "interrupted"
    args = [*base, "--reb-outdir", str(folder / "reports")]

    def tiers_logged() -> set[str]:  # while a run writes: a line may be half there
        return {o.tier for log in (folder / "reports").glob("*/outcomes.jsonl")
                for o in OutcomeLog(log)}

    # 1. during C1 (train.py running): nothing finished, nothing left
    run = interrupted(folder, docker_client, args,
                      lambda r: process_in(docker_client, r, "train.py")())
    assert tiers_logged() == set()
    # 2. between tiers: the moment C1's outcome is logged
    run = interrupted(folder, docker_client, args, lambda r: "c1" in tiers_logged())
    assert "c1" in tiers_logged()
    # 3. during teardown: every outcome is logged, the module's containers are going
    run = interrupted(folder, docker_client, [*args, "--reb-resume"],
                      lambda r: tiers_logged() >= {"c1", "c2", "c3", "c4", "c5"},
                      may_finish=True)
    # 4. the resumed run completes, running nothing again
    run = Spawned(folder, [*args, "--reb-resume"])
    assert run.finish(timeout=300) == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert run.containers(docker_client) == []
    assert len(logged(folder / "reports")) == 5  # once each: C1 C2 C3 C4 C5
    [resumed] = (folder / "reports").glob("*/summary.json")
    whole = Spawned(tmp_path / "uninterrupted",
                    [*base, "--reb-outdir", str(tmp_path / "uninterrupted" / "reports")])
    assert whole.finish(timeout=600) == pytest.ExitCode.TESTS_FAILED, whole.output[-3000:]
    [expected] = (tmp_path / "uninterrupted" / "reports").glob("*/summary.json")
    assert verdicts(json.loads(resumed.read_text())) == verdicts(json.loads(expected.read_text()))


def test_sigkill_leaves_a_container_that_reb_gc_removes(tmp_path: Path, docker_client: Any,
                                                        demo_image: str,
                                                        image_commit: str) -> None:
    (tmp_path / "test_hang.py").write_text(module_text("reb/hang", image_commit, cpu=HANG))
    run = Spawned(tmp_path, ["--reb-image", demo_image, "--reb-python", "/usr/bin/python3",
                             "-m", "c1", "--reb-outdir", str(tmp_path / "reports")])
    run.wait_for(process_in(docker_client, run, "sleep 300"))
    run.signal(signal.SIGKILL)
    assert run.finish(timeout=60) == -signal.SIGKILL
    assert len(run.containers(docker_client)) == 1  # nothing could remove it
    reb = shutil.which("reb")
    gc = subprocess.run([*([reb] if reb else [sys.executable, "-m", "pytest_reb.loop.cli"]), "gc"],
                        capture_output=True, text=True, timeout=120)
    assert gc.returncode == 0, gc.stderr
    assert re.fullmatch(r"reb gc: removed [1-9]\d* container\(s\)\n", gc.stdout), gc.stdout
    assert run.containers(docker_client) == []


def test_ctrl_c_while_the_lanes_run_leaves_nothing(tmp_path: Path, docker_client: Any,
                                                   demo_image: str, image_commit: str) -> None:
    """SIGINT while C1 runs in one lane and C0 or C2 in the other (``lanes.py``): every
    sibling's containers go, and the outcomes logged are whole lines."""
    (tmp_path / "test_demo__tinynet.py").write_text(demo_module(image_commit))
    args = ["test_demo__tinynet.py", "--reb-image", demo_image, "-m", "c0 or c1 or c2",
            "--reb-outdir", str(tmp_path / "reports")]
    run = Spawned(tmp_path, args)
    run.wait_for(lambda: len(run.containers(docker_client, all=False)) >= 2  # the siblings
                 and process_in(docker_client, run, "train.py")())
    run.signal(signal.SIGINT)
    assert run.finish(timeout=180) == pytest.ExitCode.INTERRUPTED, run.output[-3000:]
    assert run.containers(docker_client) == [], "a lane's container is left"
    assert {o["tier"] for o in logged(tmp_path / "reports")} <= {"c0", "c1", "c2"}
