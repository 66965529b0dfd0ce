"""A container's processes, found and killed through its cgroup: no process outlives a command.

Listing a container's processes (``docker top``) and SIGKILLing each loses
to a process that forks and exits every millisecond: by the time the kill
lands, its child holds the chain.  Three rounds of that left chains alive
that edited the checkout after the run.  So the sweep freezes the
container's cgroup first (the v1 ``freezer`` controller or v2
``cgroup.freeze``, whichever the host mounts; found from the init's
``/proc/<pid>/cgroup``, so the cgroup driver does not matter), reads every
process of it while none can run, SIGKILLs all but our keep-alive, and
thaws: a frozen process cannot fork, and a killed one dies before it runs
again.  A fresh container per command would also do, at about 0.7 s a
command more (``bench/containment.py`` measures both: 0.86 s against 0.13 s
for a command and its sweep on a loaded 2-core machine); the freeze adds
about 25 ms to a command that left a process, nothing to one that did not,
and keeps one container per profile, so a tier's commands share it.  Of six
runs with sixteen chains, the old ``docker top`` sweep left chains in four,
the freeze in none.

A pid is a number the kernel hands out again: 32768 of them here, and a
fork bomb beside the run wraps them in seconds.  A listing of the cgroup is
history by the time a kill lands (a freeze that timed out on a task in D
state, or a process killed by the OOM killer, leaves a listed pid free), and
a SIGKILL sent by number to a reused pid lands on whatever process holds it
now: another run's, the engine's own.  So no signal is sent by number:
``signal_verified`` opens a pidfd first (it names one process for good),
checks that the process holding the pid is one of ours (in this cgroup, or
the process seen at the listing), and signals through the pidfd: if the
process died meanwhile, the signal fails instead of finding a stranger.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: Where the host mounts its cgroup hierarchies.
ROOT = Path("/sys/fs/cgroup")
#: How long a freeze may take before the sweep kills anyway (a task in D state never freezes).
FREEZE_WAIT = 5.0


class CgroupError(OSError):
    """The container's cgroup cannot be found or frozen from here."""


class Cgroup:
    """The freezer cgroup of one container, v1 or v2, addressed from the host."""

    def __init__(self, path: Path, v2: bool) -> None:
        self.path, self.v2 = path, v2

    @classmethod
    def of_pid(cls, pid: int) -> Cgroup:
        """The cgroup holding host process ``pid`` (a container's init), for freezing."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError as exc:
            raise CgroupError(f"cannot read the cgroup of pid {pid}: {exc}") from None
        unified = None
        for line in lines:
            _, controllers, rel = line.split(":", 2)
            if "freezer" in controllers.split(","):
                path = ROOT / "freezer" / rel.lstrip("/")
                if (path / "freezer.state").exists():
                    return cls(path, v2=False)
            if controllers == "":
                unified = rel
        for base in (ROOT, ROOT / "unified"):
            if unified is not None and (base / unified.lstrip("/") / "cgroup.freeze").exists():
                return cls(base / unified.lstrip("/"), v2=True)
        raise CgroupError(f"no freezer cgroup found for pid {pid} under {ROOT}")

    def owns(self, pid: int) -> bool:
        """Whether host process ``pid`` is in this cgroup or one below it, now."""
        try:
            held = Cgroup.of_pid(pid).path
        except CgroupError:
            return False
        return held == self.path or self.path in held.parents

    def signal(self, pid: int, sig: int) -> bool:
        """Send ``sig`` to ``pid`` only while that pid is a process of this cgroup."""
        return signal_verified(pid, sig, self.owns)

    def pids(self) -> set[int]:
        """Host pids of every process in the cgroup and its children."""
        found: set[int] = set()
        for folder, _, _ in os.walk(self.path):
            with contextlib.suppress(OSError):
                found.update(int(p) for p in Path(folder, "cgroup.procs").read_text().split())
        return found

    def _write(self, name: str, value: str) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError as exc:
            raise CgroupError(f"cannot write {self.path / name}: {exc}") from None

    def _frozen(self) -> bool:
        with contextlib.suppress(OSError):
            if self.v2:
                return "frozen 1" in (self.path / "cgroup.events").read_text().splitlines()
            return (self.path / "freezer.state").read_text().strip() == "FROZEN"
        return False

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """No process of the cgroup runs inside the block (up to ``FREEZE_WAIT``)."""
        self._write("cgroup.freeze" if self.v2 else "freezer.state", "1" if self.v2 else "FROZEN")
        try:
            deadline = time.monotonic() + FREEZE_WAIT
            while not self._frozen() and time.monotonic() < deadline:
                time.sleep(0.002)
            yield
        finally:
            self._write("cgroup.freeze" if self.v2 else "freezer.state",
                        "0" if self.v2 else "THAWED")

    def signal_all(self, sig: int, keep: set[int]) -> set[int]:
        """Send ``sig`` to every process but ``keep``, all at once while frozen; which ones."""
        sent: set[int] = set()
        with self.frozen():
            for pid in self.pids() - keep:
                if self.signal(pid, sig):
                    sent.add(pid)
        return sent

    def kill_all(self, keep: set[int], wait: float = 5.0) -> int:
        """SIGKILL every process but ``keep`` and wait until they are gone; how many were.

        One frozen round suffices (nothing forks while frozen); the loop waits
        for the kills to land and catches a process the freezer missed in time.
        """
        killed: set[int] = set()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not self.pids() - keep:
                break
            killed |= self.signal_all(signal.SIGKILL, keep)
            time.sleep(0.005)
        return len(killed)


def signal_verified(pid: int, sig: int, belongs: Callable[[int], bool]) -> bool:
    """Send ``sig`` to the process holding ``pid`` only if ``belongs(pid)`` accepts it, and
    only to that very process; whether it was sent.

    The pidfd is opened first, so it names the process that held the pid then; ``belongs``
    reads ``/proc/<pid>`` after it.  If that process lived through the read, the read was
    its own (a pid is not handed out while its process lives) and the signal reaches it; if
    it died, the pidfd says so (``ESRCH``) and nothing is sent, whoever holds the pid now.
    A kernel without pidfds (before 5.3) gets the check and ``kill`` by number: the
    window is then the time between the two calls, not since the listing."""
    try:
        fd = os.pidfd_open(pid)
    except OSError as exc:
        if exc.errno != errno.ENOSYS:
            return False  # gone already
        if not belongs(pid):
            return False
        try:
            os.kill(pid, sig)
        except OSError:
            return False
        return True
    try:
        if not belongs(pid):
            return False
        signal.pidfd_send_signal(fd, sig)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def start_time(pid: int) -> int | None:
    """When host process ``pid`` started (``/proc/<pid>/stat``'s starttime, clock ticks after
    boot): with the pid, the identity of one process, which a reused pid does not share."""
    fields = stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 and fields[19].isdigit() else None


#: ``PF_EXITING`` in ``/proc/<pid>/stat``'s flags: the process is inside ``exit``.
PF_EXITING = 0x4


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first, then
    ppid, pgrp, session, tty, tpgid, flags ...), or None when the process is gone.

    Split after the last ``)``: the command name in parentheses may hold spaces and
    parentheses of its own."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()


def alive(pid: int) -> bool:
    """Whether host process ``pid`` exists, is not a zombie, and is not exiting.

    A container's init killed from outside stays in ``exit`` (not yet a zombie) until
    every other process of its namespace is gone; the command's stream ends meanwhile,
    so "not yet a zombie" is not "alive" (under load the check came in that window and
    a killed container read as the command's own exit 137).
    """
    fields = stat_fields(pid)
    if not fields or fields[0] in ("Z", "X"):
        return False
    return not (len(fields) > 6 and fields[6].isdigit() and int(fields[6]) & PF_EXITING)
