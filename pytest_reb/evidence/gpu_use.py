"""Host-side evidence that a process of a run really used a GPU.

Two channels, read by the host and never by the target:

* **compute contexts** (the proof): NVML's list of processes with a CUDA
  context on each GPU, with their memory, through ``pynvml`` when the host
  has it, else ``nvidia-smi --query-compute-apps``.  PIDs are the host's, so
  a container's processes match the host pids the target reports.
* **device files** (a hint): ``/dev/nvidiaN`` open in ``/proc/<pid>/fd``.
  Measured on an H200 (docs/gpu.md): a process that only asks NVML or
  ``torch.cuda.is_available()`` opens ``/dev/nvidia0`` without ever running
  a kernel, so an open device file alone proves nothing and is only used
  when the host has no NVML at all (and then the outcome says so).

A context is not computation: ``gpu_compute.ComputeMeter`` runs inside the
same watch and reads what the GPUs did over the command.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pytest_reb.evidence.gpu_compute import ComputeMeter, report

_NVIDIA_DEV = re.compile(r"^/dev/nvidia(\d+)$")
CONTEXTS = "host NVML compute contexts"
DEVICE_FILES = "host /proc fd scan (device files only: weaker)"


def host_gpus() -> list[str]:
    """GPU indices of this machine, from ``nvidia-smi -L`` (empty when there is none)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return gpu_indices(out)


def describe_gpus() -> str:
    """One line about this machine's GPUs for the report header (``reb: host ...``)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return "no NVIDIA GPU on this host"
    return f"{len(out)} GPU(s): {out[0]}" if out else "no NVIDIA GPU on this host"


def gpu_indices(listing: str) -> list[str]:
    """GPU indices from the text of ``nvidia-smi -L`` (one ``GPU n: ...`` line each)."""
    return [str(i) for i, _ in enumerate(ln for ln in listing.splitlines()
                                         if ln.startswith("GPU "))]


class ComputeApps:
    """Which host pids hold a CUDA context on which GPU, and how much memory they use."""

    def __init__(self) -> None:
        self._nvml: Any = None
        self._smi = shutil.which("nvidia-smi")
        with contextlib.suppress(Exception):
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
        self._bus_to_index: dict[str, int] | None = None

    @property
    def available(self) -> bool:
        return self._nvml is not None or self._smi is not None

    def snapshot(self) -> dict[int, dict[int, int]]:
        """pid -> {gpu index: used bytes}; empty when nothing holds a context."""
        if self._nvml is not None:
            return self._from_nvml()
        if self._smi is not None:
            return self._from_smi()
        return {}

    def _from_nvml(self) -> dict[int, dict[int, int]]:
        nv = self._nvml
        found: dict[int, dict[int, int]] = {}
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            for proc in nv.nvmlDeviceGetComputeRunningProcesses(handle):
                found.setdefault(int(proc.pid), {})[index] = int(proc.usedGpuMemory or 0)
        return found

    def _from_smi(self) -> dict[int, dict[int, int]]:
        assert self._smi is not None
        if self._bus_to_index is None:
            gpus = _smi(self._smi, "--query-gpu=index,pci.bus_id")
            self._bus_to_index = {bus.strip(): int(i) for i, bus in gpus}
        found: dict[int, dict[int, int]] = {}
        for pid, bus, mem in _smi(self._smi, "--query-compute-apps=pid,gpu_bus_id,used_memory"):
            if pid.strip().isdigit() and bus.strip() in self._bus_to_index:
                mib = int(mem) if mem.strip().isdigit() else 0
                found.setdefault(int(pid), {})[self._bus_to_index[bus.strip()]] = mib << 20
        return found


def _smi(smi: str, query: str) -> list[list[str]]:
    try:
        out = subprocess.run([smi, query, "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [[f.strip() for f in line.split(",")] for line in out.splitlines() if line.strip()]


def open_device_files(pid: int) -> set[int]:
    """GPU indices whose ``/dev/nvidiaN`` the process has open."""
    found: set[int] = set()
    fd_dir = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fd_dir)
    except OSError:
        return found
    for name in names:
        with contextlib.suppress(OSError):
            m = _NVIDIA_DEV.match(os.readlink(f"{fd_dir}/{name}"))
            if m:
                found.add(int(m.group(1)))
    return found


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip()[:300]


class GpuWatch:
    """Samples, while a command runs, which of its processes held which GPU.

    ``pids`` returns the host pids of the run's processes each round.
    Sampling runs from before the command until after it, so a rank that held
    a GPU for a second is still seen.  ``holders`` comes from compute
    contexts when the host has NVML, else from device files (``channel``
    says which).  ``gpus`` (host indices) are metered for computation
    (``compute``); a process outside the run with a context on one of them
    is kept in ``foreign``, since the GPU's counters are then not the run's alone.
    """

    def __init__(self, pids: Callable[[], Iterable[int]], gpus: Iterable[str] = (),
                 period: float = 0.25) -> None:
        self._pids = pids
        self._period = period
        self._apps = ComputeApps()
        self.channel = CONTEXTS if self._apps.available else DEVICE_FILES
        self._stop = threading.Event()
        self.holders: dict[int, set[int]] = {}
        self.device_files: dict[int, set[int]] = {}
        self.memory: dict[int, int] = {}
        self.cmdlines: dict[int, str] = {}
        self._gpus = {int(g) for g in gpus if str(g).isdigit()}
        self._meter = ComputeMeter(sorted(self._gpus)) if self._gpus else None
        self.foreign: dict[int, set[int]] = {}
        self.compute: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._loop, name="reb-gpuwatch", daemon=True)

    def __enter__(self) -> GpuWatch:
        if self._meter is not None:
            self._meter.start()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._meter is not None:
            self._meter.stop()
            self.compute = {**report(self._meter),
                            "foreign": {str(p): sorted(g) for p, g in self.foreign.items()}}

    def _loop(self) -> None:
        while not self._stop.wait(self._period):
            self.sample()

    def sample(self) -> None:
        try:
            pids = set(self._pids())
            contexts = self._apps.snapshot()
        except Exception:  # the target went away mid-sample; the next round says more
            return
        for pid in pids:
            files = open_device_files(pid)
            if files:
                self.device_files.setdefault(pid, set()).update(files)
            held = contexts.get(pid, {}) if self._apps.available else dict.fromkeys(files, 0)
            if held:
                self.holders.setdefault(pid, set()).update(held)
                self.memory[pid] = max(self.memory.get(pid, 0), sum(held.values()))
            if (files or held) and pid not in self.cmdlines:
                self.cmdlines[pid] = cmdline(pid)
        for pid, held in contexts.items():
            mine = self._gpus.intersection(held)
            if mine and pid not in pids:
                self.foreign.setdefault(pid, set()).update(mine)
        if self._meter is not None:
            self._meter.sample()
