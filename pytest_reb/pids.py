"""Host processes named for good: a pid with its start time, and signals sent only to a
process verified ours.

A pid is a number the kernel hands out again, so a listing is history by the time a
signal lands; every signal of the harness and the suite goes through
``signal_verified`` (a pidfd first, then the check), which the cgroup kills, the local
target's session sweep and the witness's continue all use.  It sits at the bottom of
the package because all three layers need it.
"""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Callable
from pathlib import Path


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


#: ``CAP_SYS_PTRACE``'s bit in ``/proc/<pid>/status``'s capability masks.
CAP_SYS_PTRACE = 19


def may_trace() -> bool:
    """Whether this process holds ``CAP_SYS_PTRACE`` in its effective set: only then may it
    read a process that made itself undumpable. Root in a container that dropped the
    capability (a Kubernetes pod running ``local://``) may not."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_PTRACE & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False
