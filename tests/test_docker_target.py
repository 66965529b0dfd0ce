"""The Docker target and the tiers on real images the suite builds (no mocked client).

Verdicts the core must give on this CPU machine: the demo's C1 passes, the
missing-dependency image fails C1 with ``deps``, a hanging entrypoint is
timed out and killed with nothing left inside, C2 fails ``cuda_unavailable``
and C3/C4 ``insufficient_hardware``.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.outcome import OutcomeLog
from pytest_reb.targets import DockerTarget, Limits, TargetError

pytestmark = pytest.mark.container

PY = "/opt/envs/tinynet/bin/python"


@pytest.fixture
def target(demo_image: str) -> Any:
    t = DockerTarget(demo_image, run_id="tests", gpus=[], limits=Limits(memory="2g", pids=256))
    yield t
    t.close()


def others(target: DockerTarget) -> list[int]:
    """Processes in the CPU container other than its keep-alive."""
    target.container()
    return target._run_pids("cpu")


def test_missing_image_is_one_clear_error_and_nothing_is_pulled(docker_client: Any) -> None:
    with pytest.raises(TargetError, match=r"'no-such/image:1' is not on this Docker engine"):
        DockerTarget("no-such/image:1", run_id="tests")
    assert not docker_client.images.list(name="no-such/image")


def test_cpu_container_is_hardened(target: DockerTarget) -> None:
    ctr = target.container()
    host = ctr.attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == 256 and host["Memory"] == 2 << 30
    assert not host.get("DeviceRequests")
    assert all(m["RW"] is False for m in ctr.attrs["Mounts"])
    assert not any("docker.sock" in m["Source"] for m in ctr.attrs["Mounts"])
    res = target.exec(["sh", "-c", "ls /dev | grep -c nvidia; cat /proc/net/dev | wc -l"],
                      timeout=10)
    assert res.stdout.split() == ["0", "3"]  # no GPU device; only the loopback interface


def test_exec_captures_exit_code_and_bounded_output(target: DockerTarget) -> None:
    res = target.exec([PY, "-c", "import sys; sys.stdout.write('x' * 3_000_000); sys.exit(3)"],
                      timeout=60)
    assert res.exit_code == 3 and not res.timed_out
    assert res.stdout_bytes == 3_000_000
    assert len(res.stdout) < 100_000 and "earlier bytes not kept" in res.stdout


def test_hang_is_killed_at_its_timeout_with_nothing_left(target: DockerTarget) -> None:
    res = target.exec([PY, "-c", "import time; time.sleep(600)"], timeout=2)
    assert res.timed_out and res.exit_code == 124
    assert 2 <= res.duration < 10
    assert others(target) == []


def test_child_sleeping_past_the_timeout_is_killed(target: DockerTarget) -> None:
    code = ("import subprocess, time\n"
            "subprocess.Popen(['sleep', '600'])\n"
            "time.sleep(600)\n")
    res = target.exec([PY, "-c", code], timeout=2)
    assert res.timed_out
    assert others(target) == []


def test_daemon_that_outlives_its_entrypoint_is_killed(target: DockerTarget) -> None:
    code = "import subprocess; subprocess.Popen(['setsid', 'sleep', '600']); print('bye')"
    res = target.exec([PY, "-c", code], timeout=30)
    assert res.exit_code == 0 and "bye" in res.stdout
    assert res.leftovers_killed >= 1
    assert others(target) == []


def test_ignoring_sigterm_does_not_help(target: DockerTarget) -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    res = target.exec([PY, "-c", code], timeout=2)
    assert res.timed_out and res.exit_code == 137
    assert res.duration < 15
    assert others(target) == []


def test_close_removes_the_containers(demo_image: str, docker_client: Any) -> None:
    t = DockerTarget(demo_image, run_id="tests-close", gpus=[])
    t.exec(["true"], timeout=10)
    assert docker_client.containers.list(filters={"label": "reb.run=tests-close"})
    t.close()
    assert not docker_client.containers.list(all=True, filters={"label": "reb.run=tests-close"})


def test_retiring_a_target_retires_every_copy_and_makes_nothing_after(
        demo_image: str, docker_client: Any) -> None:
    """A copy made and used by a thread the run does not wait for (the host's compile reads
    the image in one) goes with its target at the run's end; one made after that is refused,
    so no container outlives the clean-up and keeps its image from being removed."""
    from pytest_reb.targets import InfraError

    run = f"tests-family-{uuid.uuid4().hex[:8]}"
    ours = {"label": f"reb.run={run}"}
    t = DockerTarget(demo_image, run_id=run, gpus=[])
    lane, twin = t.sibling(), t.twin()
    nested = lane.sibling()
    for copy in (t, lane, twin, nested):
        copy.container()
    t.close()  # a close for fresh containers: the copies keep theirs
    assert len(docker_client.containers.list(filters=ours)) == 2  # lane's and nested's
    nested.retire()  # a copy retiring leaves its target and the others alone
    t.container()
    assert len(docker_client.containers.list(filters=ours)) == 2
    t.retire()
    assert not docker_client.containers.list(all=True, filters=ours)
    late = t.sibling()
    with pytest.raises(InfraError, match="retired"):
        late.exec(["true"], timeout=10)
    with pytest.raises(InfraError, match="retired"), late.tar_of("/etc/hostname"):
        pass
    with pytest.raises(InfraError, match="retired"):
        lane.container()
    assert not docker_client.containers.list(all=True, filters=ours)


def test_ctrl_c_during_cleanup_is_held_until_every_container_is_gone(
        demo_image: str, docker_client: Any) -> None:
    """The interrupt lands inside the first removal; the second container goes too."""
    import os
    import signal

    from pytest_reb.plugin.signals import interrupts_deferred

    targets = [DockerTarget(demo_image, run_id="tests-held", gpus=[]) for _ in range(2)]
    for t in targets:
        t.exec(["true"], timeout=10)
    first = targets[0]._remove

    def interrupted_remove(key: str) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        first(key)

    targets[0]._remove = interrupted_remove  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt, match="held until cleanup was done"), \
            interrupts_deferred():
        for t in targets:
            t.close()
    assert not docker_client.containers.list(all=True, filters={"label": "reb.run=tests-held"})


# --------------------------------------------------------------------------- through pytest


DEMO_MODULE = Path(__file__).resolve().parent.parent / "demo" / "test_demo__tinynet.py"


def run_demo(pytester: pytest.Pytester, image: str, *args: str) -> tuple[Any, dict[str, Any]]:
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider", *args)
    [log] = (pytester.path / "reports").glob("*/outcomes.jsonl")
    return result, {o.tier: o for o in OutcomeLog(log)}


def test_demo_pyramid_on_a_cpu_machine(pytester: pytest.Pytester, demo_image: str) -> None:
    result, got = run_demo(pytester, demo_image, "-m", "c1 or c2 or c3 or c4")
    assert got["c1"].status == "passed" and "TRAIN_OK" in got["c1"].stdout_tail
    assert (got["c2"].status, got["c2"].category) == ("failed", "cuda_unavailable")
    assert got["c2"].evidence["observed"]["torch_version"] == "2.13.0+cpu"
    assert (got["c3"].category, got["c4"].category) == ("insufficient_hardware",) * 2
    result.assert_outcomes(passed=1, failed=3, deselected=2)
    summary = json.loads(next((pytester.path / "reports").glob("*/summary.json")).read_text())
    assert summary["totals"]["c1"] == {**summary["totals"]["c1"], "passed": 1, "applicable": 1}


def test_missing_dependency_fails_c1_with_deps(pytester: pytest.Pytester,
                                               missing_dep_image: str) -> None:
    _, got = run_demo(pytester, missing_dep_image, "-m", "c1")
    assert (got["c1"].status, got["c1"].category) == ("failed", "deps")
    assert "No module named 'yaml'" in got["c1"].stderr_tail


def test_report_is_read_from_the_image(pytester: pytest.Pytester, demo_image: str) -> None:
    """Without --agent-report, the interpreter comes from /opt/scimlopsbench/report.json."""
    _, got = run_demo(pytester, demo_image, "-m", "c1")
    assert got["c1"].command is not None and got["c1"].command[0] == PY


@pytest.mark.container
def test_a_remote_target_has_the_remote_machines_gpus(docker_client: Any, demo_image: str,
                                                      tmp_path: Path) -> None:
    """A testinfra target (here ``docker://`` standing in for ``ssh://``) asks its own machine
    for GPUs; its leases are its own lock files, not this host's."""
    import os

    from pytest_reb.plugin.session import RebSession
    from pytest_reb.runs.matrix import TargetSpec
    from pytest_reb.runs.options import RebOptions
    from pytest_reb.targets import TestinfraTarget

    suite = os.environ.get("REB_SUITE", "")
    ctr = docker_client.containers.run(demo_image, ["sleep", "300"], detach=True,
                                       network_mode="none",
                                       labels={"reb.suite": suite} if suite else {})
    try:
        url = f"docker://{ctr.id}"
        assert TestinfraTarget(url).gpus == []  # no nvidia-smi there
        listing = "GPU 0: H200 (UUID: a)\\nGPU 1: H200 (UUID: b)\\n"
        ctr.exec_run(["sh", "-c", f"printf '#!/bin/sh\\nprintf \"{listing}\"\\n' "
                      "> /usr/local/bin/nvidia-smi && chmod +x /usr/local/bin/nvidia-smi"])
        assert TestinfraTarget(url).gpus == ["0", "1"]
        assert TestinfraTarget(url, gpus=["1"]).gpus == ["1"]  # --reb-gpus still decides
        opts = RebOptions(targets=[], agent_report=None, python=None, repo_dir=None, repo=None,
                          outdir=tmp_path, network="none", gpus=None, timeout_scale=1.0,
                          compat=False, resume=None, memory="1g", pids=64)
        session = RebSession(opts, run_id="test-remote", controller=True)
        spec = TargetSpec(url)
        leases = session.leases_for(spec)
        assert leases is not session.leases and leases.pool == []
        session.target(spec)
        assert leases.pool == ["0", "1"] and leases.lock_dir != session.leases.lock_dir
        session.release(spec)
    finally:
        ctr.remove(force=True, v=True)


@pytest.mark.parametrize("size", ["20g", "512m", "200m", "1024", "1.5g", "10K", "7b"])
def test_disk_sizes_read_as_the_engine_reads_them(size: str) -> None:
    """``--reb-disk`` is parsed without the SDK, to the same bytes the SDK's parser gives."""
    from docker.utils import parse_bytes

    from pytest_reb.targets.container import Limits

    assert Limits(disk=size).disk_bytes() == parse_bytes(size)


def test_a_zombie_or_a_gone_process_is_not_alive() -> None:
    """What ``_check_alive`` asks of a container's init: a killed one that is not yet
    reaped (or still in ``exit``) must read as stopped."""
    import os
    import subprocess

    from pytest_reb.pids import alive, stat_fields

    child = subprocess.Popen(["true"])
    for _ in range(200):  # exited, not reaped: a zombie
        if (stat_fields(child.pid) or ["?"])[0] == "Z":
            break
        time.sleep(0.01)
    assert alive(os.getpid()) and not alive(child.pid)
    child.wait()
    assert not alive(child.pid)
