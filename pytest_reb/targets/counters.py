"""What the kernel counts for a container, read from its cgroups on the host.

A command's OOM kills, refused forks, CPU seconds and memory-limit hits are the host's
observations: nothing in the container can write them.  Each reader takes the
container's id and answers None where the host shows no such counter (another cgroup
layout, an engine that is not local), so a caller never mistakes "cannot tell" for 0.
cgroup v1 keeps a hierarchy per controller (``/sys/fs/cgroup/<controller>/docker/<id>``),
v2 one folder per container (systemd's or cgroupfs' driver); a v1 host that also mounts
the unified hierarchy (systemd's "hybrid" layout, ``/sys/fs/cgroup/unified/docker/<id>``)
keeps the container's pressure stall counters there.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

ROOT = Path("/sys/fs/cgroup")


def _v2(cid: str) -> list[Path]:
    return [ROOT / "system.slice" / f"docker-{cid}.scope", ROOT / "docker" / cid]


def _field(paths: list[Path], name: str) -> int | None:
    """The integer after ``name`` in the first of ``paths`` that has it (``key value`` lines)."""
    for path in paths:
        with contextlib.suppress(OSError, ValueError):
            for line in path.read_text().splitlines():
                if line.startswith(name + " "):
                    return int(line.split()[1])
    return None


def grew(before: int | None, after: int | None) -> bool | None:
    """Whether a counter read before and after a command went up; None if either read
    could not be made."""
    return None if before is None or after is None else after > before


def oom_kills(cid: str) -> int | None:
    """Processes of the container the kernel's OOM killer ended, so far."""
    return _field([ROOT / "memory" / "docker" / cid / "memory.oom_control",
                   *(p / "memory.events" for p in _v2(cid))], "oom_kill")


def pids_refusals(cid: str) -> int | None:
    """Forks the container's pids limit refused, so far (``max`` of ``pids.events``)."""
    return _field([ROOT / "pids" / "docker" / cid / "pids.events",
                   *(p / "pids.events" for p in _v2(cid))], "max")


def cpu_seconds(cid: str) -> float | None:
    """CPU seconds every process of the container has used so far (what ran and exited
    counts too)."""
    with contextlib.suppress(OSError, ValueError):
        return int((ROOT / "cpuacct" / "docker" / cid / "cpuacct.usage").read_text()) * 1e-9
    usec = _field([p / "cpu.stat" for p in _v2(cid)], "usage_usec")
    return None if usec is None else usec * 1e-6


def cpu_wait_seconds(cid: str) -> float | None:
    """Seconds the container's processes were runnable but waited for a core, so far.

    The kernel's CPU pressure stall of the container's cgroup (``cpu.pressure``'s ``some
    total``, in microseconds: wall time during which at least one of its tasks was ready
    to run and not running), on v2 or a v1 host's unified hierarchy.  Failing that (plain
    v1), the run-queue wait of every task in the container now (``/proc/<tid>/schedstat``'s
    second field, nanoseconds, summed): tasks that have exited no longer count, so read it
    before a command is killed.  A sleeping process adds nothing; one starved of a core on
    a crowded machine adds nearly its whole wall time.
    """
    for path in [ROOT / "unified" / "docker" / cid / "cpu.pressure",
                 *(p / "cpu.pressure" for p in _v2(cid))]:
        with contextlib.suppress(OSError, ValueError):
            for line in path.read_text().splitlines():
                if line.startswith("some "):
                    total = dict(f.split("=", 1) for f in line.split()[1:])["total"]
                    return int(total) * 1e-6
    for controller in ("cpu", "cpuacct", "pids"):
        try:
            tids = (ROOT / controller / "docker" / cid / "tasks").read_text().split()
        except OSError:
            continue
        waited = 0
        for tid in tids:
            with contextlib.suppress(OSError, ValueError, IndexError):  # exited meanwhile
                waited += int(Path(f"/proc/{tid}/schedstat").read_text().split()[1])
        return waited * 1e-9
    return None


def memory_limit_hits(cid: str, *, begin: bool = False) -> int | None:
    """How often the container's memory use reached its own limit, or None where the host
    cannot tell: an OOM kill with no new hit was the machine's memory running out, not the
    container's limit.

    v2 counts the hits (``memory.events``' ``max``).  v1's ``failcnt`` stays 0 on recent
    kernels even for a kill at the limit (6.18: measured), so there the peak is reset as a
    command begins (``begin``: 0, or None where it cannot be, e.g. without root) and then
    read against the limit (the memory and memory+swap counters).
    """
    hits = _field([p / "memory.events" for p in _v2(cid)], "max")
    if hits is not None:
        return hits
    v1 = ROOT / "memory" / "docker" / cid
    try:
        counters = [c for c in ("", ".memsw") if (v1 / f"memory{c}.limit_in_bytes").exists()]
        if not counters:
            return None
        if begin:
            for c in counters:
                (v1 / f"memory{c}.max_usage_in_bytes").write_text("0")
            return 0
        return int(any(int((v1 / f"memory{c}.max_usage_in_bytes").read_text())
                       >= int((v1 / f"memory{c}.limit_in_bytes").read_text())
                       for c in counters))
    except (OSError, ValueError):
        return None


class Window:
    """A container's counters over one command, each read where its figure settles: all
    as the command begins, the CPU wait before a kill ends its tasks (``stalled``: plain v1
    counts only the living ones), the CPU time once it ended (``ended``), the kills, hits
    and refusals after the sweep (``close``)."""

    def __init__(self, cid: str) -> None:
        self.cid = cid
        self.oom = oom_kills(cid)
        self.pids = pids_refusals(cid)
        self.cpu = cpu_seconds(cid)
        self.wait = cpu_wait_seconds(cid)
        self.began = time.monotonic()
        self.hits = memory_limit_hits(cid, begin=True)
        self.wait_end: float | None = None
        self.wait_span: float | None = None
        self.cpu_end: float | None = None

    def stalled(self) -> None:
        self.wait_end = cpu_wait_seconds(self.cid)
        self.wait_span = time.monotonic() - self.began

    def ended(self) -> None:
        self.cpu_end = cpu_seconds(self.cid)

    def close(self) -> dict[str, Any]:
        """What the command's ``ExecResult`` says of the counters (its field -> value)."""
        oom_after = oom_kills(self.cid)
        hits_after = memory_limit_hits(self.cid)
        pids_after = pids_refusals(self.cid)
        return {"oom_killed": grew(self.oom, oom_after) is True,
                "pids_limited": grew(self.pids, pids_after) is True,
                "cpu_seconds": (None if self.cpu is None or self.cpu_end is None
                                else round(self.cpu_end - self.cpu, 3)),
                "cpu_wait_seconds": (None if self.wait is None or self.wait_end is None
                                     else round(max(0.0, self.wait_end - self.wait), 3)),
                "cpu_wait_window": (None if self.wait_span is None
                                    else round(self.wait_span, 3)),
                "memory_limit_hit": grew(self.hits, hits_after)}
