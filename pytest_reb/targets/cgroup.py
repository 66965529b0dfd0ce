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
``pids.signal_verified`` opens a pidfd first (it names one process for good),
checks that the process holding the pid is one of ours (in this cgroup, or
the process seen at the listing), and signals through the pidfd: if the
process died meanwhile, the signal fails instead of finding a stranger.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from pytest_reb.pids import signal_verified

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
