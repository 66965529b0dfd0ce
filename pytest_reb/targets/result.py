"""What the host records of one command: its output's tail and the figures it read itself.

Every target kind fills the same ``ExecResult`` (``Target.exec``), so the rules
and the reports read one record whatever ran the command.  Output is kept as a
tail (``TailBuffer``): an entrypoint printing a gigabyte must not cost the host a
gigabyte.  ``timed_out`` is decided here from the host's clock (``finish``),
never from an exit code the target chose.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_reb.evidence.gpu_use import GpuWatch

#: Captured output kept per stream; the rest is counted, not stored.
TAIL_BYTES = 64 * 1024


class TailBuffer:
    """Keeps the last ``limit`` bytes of a stream and counts all of it.

    An entrypoint printing a gigabyte must not cost a gigabyte of host memory.
    """

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._buf += chunk[-self.limit:]
        if len(self._buf) > self.limit:
            del self._buf[: len(self._buf) - self.limit]

    def text(self) -> str:
        body = self._buf.decode("utf-8", errors="replace")
        if self.total > len(self._buf):
            return f"[... {self.total - len(self._buf)} earlier bytes not kept ...]\n{body}"
        return body


@dataclass
class ExecResult:
    """What the host saw of one command."""

    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    killed_by_host: bool = False
    oom_killed: bool = False
    #: a fork was refused because the container's pids limit was reached (cgroup counter)
    pids_limited: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    #: pid -> GPU indices that process held (a CUDA context, or see the channel)
    gpu_holders: dict[int, list[int]] = field(default_factory=dict)
    #: pid -> most GPU memory in bytes seen in use by that process
    gpu_memory: dict[int, int] = field(default_factory=dict)
    #: pid -> GPU indices whose /dev/nvidiaN it had open (a hint, not proof)
    device_files: dict[int, list[int]] = field(default_factory=dict)
    #: pid -> command line, for every process above
    holder_cmdlines: dict[int, str] = field(default_factory=dict)
    gpu_evidence_channel: str | None = None
    #: what the GPUs computed over the command (``gpu_compute``), by GPU index
    gpu_compute: dict[str, Any] = field(default_factory=dict)
    leftovers_killed: int = 0
    #: the command was stopped because the container's disk use grew past ``--reb-disk``
    disk_limited: bool = False
    #: bytes it held then (writable layer, volumes' growth, unlinked files held open)
    disk_used: int | None = None
    #: CPU seconds the target's processes used over the command (the container's cgroup;
    #: None where the host cannot count them)
    cpu_seconds: float | None = None
    #: seconds the target's processes were ready to run but waited for a core over the
    #: command (the cgroup's CPU pressure stall; ``counters.cpu_wait_seconds``): a command
    #: starved on a crowded machine, not one that slept (None where the host cannot tell)
    cpu_wait_seconds: float | None = None
    #: the seconds over which ``cpu_wait_seconds`` was counted (from the command's start to
    #: the reading before any kill): the share of waiting is taken over this, not over
    #: ``duration``, which under load holds seconds of the engine starting and ending the exec
    cpu_wait_window: float | None = None
    #: the container's memory use reached its own limit during the command (None: unknown);
    #: an OOM kill without it was the machine's memory running out
    memory_limit_hit: bool | None = None

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr



def finish(result: ExecResult, timeout: float, watch: GpuWatch | None) -> ExecResult:
    """Decide ``timed_out`` from the clock, not from an exit code the target chose."""
    if result.duration >= timeout and result.exit_code in (124, 137, -9, -15, None):
        result.timed_out = True
    if result.killed_by_host:
        result.timed_out = True
    if watch is not None:
        result.gpu_holders = {pid: sorted(g) for pid, g in watch.holders.items()}
        result.gpu_memory = dict(watch.memory)
        result.device_files = {pid: sorted(g) for pid, g in watch.device_files.items()}
        result.holder_cmdlines = dict(watch.cmdlines)
        result.gpu_evidence_channel = watch.channel
        result.gpu_compute = watch.compute
    return result
