"""``local://``: this machine as the target (the GPU box, where there is no Docker).

A device cannot be taken away from a process on its own host, so the ``cpu``
profile hides GPUs with ``CUDA_VISIBLE_DEVICES=""``, and every command starts
in a session of its own, so the whole tree it made can be found and killed.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_reb import witness
from pytest_reb.evidence.gpu_use import GpuWatch, host_gpus
from pytest_reb.pids import signal_verified, start_time, stat_fields
from pytest_reb.targets import hostview
from pytest_reb.targets.base import (
    EXEC_TAG,
    HOST_SLACK,
    KILL_GRACE,
    Target,
    cuda_visible,
    wrap_timeout,
)
from pytest_reb.targets.mounts import tool_mounts
from pytest_reb.targets.result import ExecResult, TailBuffer, finish
from pytest_reb.witness import observe


class LocalTarget(Target):
    """This machine (``local://``): the GPU box, where there is no Docker.

    Each command starts in a new session so the whole tree can be found and
    killed; the ``cpu`` profile hides GPUs with ``CUDA_VISIBLE_DEVICES=""``
    (a device cannot be taken away from a process on its own host).
    """

    evidence_channel = "host view of the command's session"
    #: each command is a session of its own, killed by its session and tag alone
    side_by_side_commands = True

    def __init__(self, name: str = "local://", gpus: Sequence[str] | None = None) -> None:
        self.name = name
        self.gpus = list(gpus) if gpus is not None else host_gpus()

    def host_path(self, path: str) -> Path | None:
        return Path(path)

    def host_view(self, devices: Sequence[str] = ()) -> hostview.HostView | None:
        return hostview.HostView("/", has_gpu_devices=hostview.gpu_nodes(hostview.HostView("/")))

    def own_env(self, name: str) -> str | None:
        return os.environ.get(name)

    def tool(self, path: str) -> str:
        for mount, source in tool_mounts().items():
            if path == mount or path.startswith(mount + "/"):
                return source + path[len(mount):]
        return path

    def mount(self, host_dir: str, at: str, scratch: Sequence[str] = ()) -> str | None:
        """Nothing to mount on this machine: the host folder itself is what the target sees."""
        for sub in scratch:
            Path(host_dir, sub).mkdir(parents=True, exist_ok=True)
        return host_dir

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                return fh.read(limit)
        except OSError:
            return None

    def witness_library(self) -> str | None:
        return witness.library_path()

    def take_record(self, path: str, devices: Sequence[str]) -> str:
        return witness.read_local(path)

    def witness_observed(self) -> observe.Library | None:
        built = witness.library_path()
        return observe.Library(built, built) if built else None

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        tag = f"{os.getpid()}-{time.monotonic_ns()}"
        full_env = {**os.environ, **env, EXEC_TAG: tag,
                    "CUDA_VISIBLE_DEVICES": cuda_visible(env, devices)}
        out, err = TailBuffer(), TailBuffer()
        start = time.monotonic()
        try:
            cmd = wrap_timeout(argv, timeout) if shutil.which("timeout") else argv
            proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:  # cwd missing, or the program itself
            return ExecResult(argv, 127, "", f"cannot start: {exc}", time.monotonic() - start)
        sid = proc.pid
        readers = [threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
                   threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True)]
        for t in readers:
            t.start()
        killed = False
        watch = GpuWatch(lambda: _session_pids(sid, tag), devices) if devices else None
        with watch or contextlib.nullcontext(), \
                self.observing(env, lambda: observe.tree(sid), lambda: _session_pids(sid, tag)):
            try:
                exited(proc, timeout + KILL_GRACE + HOST_SLACK)
            except subprocess.TimeoutExpired:
                killed = True
                _kill_session(sid, tag)
                exited(proc, 30)
            except BaseException:  # Ctrl-C: nothing of the command stays, stopped or not
                _kill_session(sid, tag)
                raise
        leftovers = _kill_session(sid, tag)
        for t in readers:
            t.join(timeout=5)
        res = ExecResult(argv, proc.returncode, out.text(), err.text(), time.monotonic() - start,
                         killed_by_host=killed, stdout_bytes=out.total, stderr_bytes=err.total,
                         gpu_evidence_channel=self.evidence_channel, leftovers_killed=leftovers)
        return finish(res, timeout, watch)

    @property
    def host(self) -> Any:
        import testinfra

        return testinfra.get_host("local://")


def exited(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """``proc.wait(timeout)``, told of the exit the moment it happens.  Popen's own wait with a
    timeout polls with sleeps of up to 50 ms, and every command's end waited on one (a 0.2 s
    command's end was seen 15 ms late at the median, 3 ms through a pidfd); a pidfd is
    readable as soon as the process exits (Linux 5.3).  ``subprocess.TimeoutExpired`` as
    ``wait`` raises it."""
    if proc.returncode is not None:  # reaped: its pid may be another process's by now
        return proc.returncode
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # an older kernel: Popen's own wait
        return proc.wait(timeout=timeout)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(min(max(0.0, timeout) * 1000, 2**31 - 1)):
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(fd)
    return proc.wait()


def _pump(stream: Any, buf: TailBuffer) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):
        buf.feed(chunk)


def _session_pids(sid: int, tag: str) -> list[int]:
    """Processes of session ``sid``, their descendants, and any process carrying ``tag``.

    A daemon that called ``setsid`` and lost its parent is found by the
    environment variable it inherited; one that also cleared its environment
    is the one case a local run cannot see (a container can: use an image).
    """
    parents: dict[int, int] = {}
    members: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        rest = stat_fields(entry)
        if rest is None:
            continue
        pid, ppid, session = int(entry), int(rest[1]), int(rest[3])
        parents[pid] = ppid
        if session == sid or pid == sid or _has_tag(pid, tag):
            members.add(pid)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in members and pid not in members:
                members.add(pid)
                changed = True
    members.discard(os.getpid())
    return sorted(members)


def _has_tag(pid: int, tag: str) -> bool:
    try:
        return f"{EXEC_TAG}={tag}".encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def _kill_session(sid: int, tag: str) -> int:
    """SIGKILL the session's processes, each only while its pid still names the process the
    listing saw (its start time): a pid freed and handed out again is another's."""
    seen = {pid: start_time(pid) for pid in _session_pids(sid, tag)}
    for pid, started in seen.items():
        if started is not None:
            signal_verified(pid, signal.SIGKILL, lambda p, s=started: start_time(p) == s)
    return len(seen)
