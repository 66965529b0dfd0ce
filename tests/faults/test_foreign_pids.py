"""No path of the harness or the suite signals a process outside the run.

A pid is a number the kernel hands out again (32768 of them on this machine, wrapped in
seconds by a fork bomb beside the run): a listing of a container's cgroup, of a local
command's session or of a test daemon's children is history by the time a kill lands.
Every signal now goes through ``pids.signal_verified``: a pidfd first, then the check
that the process holding the pid is ours, then the signal through the pidfd.

- the source: no ``os.kill``, ``os.killpg`` or ``pidfd_send_signal`` on the host side but
  in ``signal_verified`` (or to this process itself); code that runs inside a target
  (``pyramid/probes``) signals only what it started there;
- a pid of a container's listing, freed and handed to a process outside the container,
  is not killed by the sweep's per-pid signal; the container's own process is;
- a process whose start time is not the one the listing saw (a local session's member
  whose pid was reused) is not killed; a pidfd of a process that is gone sends nothing.
"""

from __future__ import annotations

import ast
import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hostile import demo_target

from pytest_reb.pids import alive, signal_verified, start_time
from pytest_reb.targets import DockerTarget

ROOT = Path(__file__).resolve().parents[2]
#: Code that runs inside a target, signalling only what it started there.
IN_TARGET = ("pytest_reb/pyramid/probes/",)
SENDERS = {("os", "kill"), ("os", "killpg"), ("signal", "pidfd_send_signal"),
           ("signal", "pthread_kill")}


def _signal_calls(tree: ast.AST) -> Iterator[tuple[ast.Call, str | None]]:
    """Each call that sends a signal by the host's means, with its enclosing function."""
    def walk(node: ast.AST, where: str | None) -> Iterator[tuple[ast.Call, str | None]]:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef) else where
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and isinstance(child.func.value, ast.Name)
                    and (child.func.value.id, child.func.attr) in SENDERS):
                yield child, where
            yield from walk(child, inner)
    yield from walk(tree, None)


def test_no_signal_is_sent_by_number_on_the_host_side() -> None:
    by_number = []
    for folder in ("pytest_reb", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(IN_TARGET):
                continue
            for call, where in _signal_calls(ast.parse(path.read_text())):
                text = ast.unparse(call)
                if where == "signal_verified" and rel == "pytest_reb/pids.py":
                    continue
                if "os.getpid()" in text or text.endswith(", 0)"):  # itself; existence only
                    continue
                by_number.append(f"{rel}:{call.lineno}: {text}")
    assert by_number == []


def test_a_gone_or_foreign_process_is_never_signalled() -> None:
    proc = subprocess.Popen(["sleep", "300"])
    try:
        started = start_time(proc.pid)
        assert started is not None
        assert not signal_verified(proc.pid, signal.SIGKILL, lambda p: start_time(p) == started + 1)
        assert proc.poll() is None  # another start time: another process, left alone
        assert signal_verified(proc.pid, signal.SIGKILL, lambda p: start_time(p) == started)
        assert proc.wait(30) == -signal.SIGKILL
        assert not signal_verified(proc.pid, signal.SIGKILL, lambda p: True)  # gone: nothing
    finally:
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait(30)


@pytest.fixture
def target(demo_image: str) -> Iterator[DockerTarget]:
    yield from demo_target(demo_image, "foreign-pids")


def _spawn_at(pid: int, tries: int = 200) -> subprocess.Popen[bytes] | None:
    """A host process holding ``pid`` (free by now), through the pid counter: the reuse a
    wrapped counter brings about, made at once.  None if other forks kept taking it."""
    last = Path("/proc/sys/kernel/ns_last_pid")
    for _ in range(tries):
        try:
            last.write_text(str(pid - 1))
        except OSError:
            return None
        proc = subprocess.Popen(["sleep", "300"])
        if proc.pid == pid:
            return proc
        proc.kill()
        proc.wait(30)
    return None


@pytest.mark.container
def test_a_process_outside_the_container_holding_a_listed_pid_survives(
        target: DockerTarget) -> None:
    ctr = target.container()
    ctr.exec_run(["sleep", "300"], detach=True, user="0:0")
    cgroup = target._cgroups["cpu"]
    deadline = time.monotonic() + 30
    while not target._run_pids("cpu") and time.monotonic() < deadline:
        time.sleep(0.05)
    [listed] = target._run_pids("cpu")  # the listing
    assert cgroup.signal(listed, signal.SIGKILL)  # ours: killed
    while alive(listed) and time.monotonic() < deadline:
        time.sleep(0.02)
    stranger = _spawn_at(listed)
    if stranger is None:  # the counter could not be steered here: a pid outside, all the same
        stranger = subprocess.Popen(["sleep", "300"])
    try:
        assert not cgroup.owns(stranger.pid)
        assert not cgroup.signal(stranger.pid, signal.SIGKILL)  # the stale listing's pid
        assert cgroup.kill_all(target._keep["cpu"]) == 0
        time.sleep(0.2)
        assert stranger.poll() is None, "a process outside the run was killed"
    finally:
        stranger.kill()
        stranger.wait(30)


