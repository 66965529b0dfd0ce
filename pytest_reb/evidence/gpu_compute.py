"""Host-side evidence that the GPU *computed* for a run, read by ``rules/entrypoint_stage``.

A CUDA context (what ``evidence.py`` proves a process held) costs one
``torch.zeros(1, device="cuda")``; a token kernel costs one more line.  What
the host can read without touching the target, through NVML:

* **GPM counters** (Hopper and later): the SMs' activity between two samples
  of the GPU's performance monitor, taken when the command starts and when it
  ends.  Under a lease the GPU is the run's alone, so the activity is the
  run's.  It integrates: SM-active time = mean SM activity × the interval, in
  SM-seconds averaged over all SMs, so a 5-step MLP and a single kernel differ
  by the number of kernels they ran, not by a utilisation sample that happened
  to land on one.
* **per-process utilisation samples** (``nvmlDeviceGetProcessUtilization``):
  coarse (the driver's sampling window), recorded on every outcome but too
  weak to decide on (docs/gpu.md: honest 5-step runs and fakes both peak at
  1-6 %).
* **process memory** beyond the bare context (``evidence.py``): recorded; one
  cuBLAS call raises it as far as an honest run, so it decides nothing alone.

The thresholds and the figures behind them are in docs/gpu.md.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: GPM metrics read between the start and end samples: (NVML id, key on the outcome).
GPM_METRICS = ((2, "sm_util_pct"), (3, "sm_occupancy_pct"), (5, "tensor_util_pct"),
               (10, "dram_bw_util_pct"), (12, "fp32_util_pct"), (13, "fp16_util_pct"),
               (20, "pcie_tx_mib_s"), (21, "pcie_rx_mib_s"))
#: Seconds between the command's end and the end GPM sample.  GPM's counters lag the work:
#: a model server that answered its one request and was stopped read 0 SM-active ms where
#: the same run read 0.00037 ms another time (tests/gpu/gpm_lag.py measures the lag).
#: The GPU stays the run's alone until the sample (per-process samples cover the wait).
GPM_SETTLE_S = 0.5


def _nvml() -> Any:
    """``pynvml`` initialised, or None when the host has no NVML."""
    with contextlib.suppress(Exception):
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    return None


@dataclass
class _Gpu:
    index: int
    handle: Any
    gpm: Any = None  # the start sample, when GPM works on this GPU
    gpm_error: str | None = None
    started: float = 0.0
    last_ts: int = 0
    #: pid -> [samples seen, sum of SM %, max SM %, max memory-controller %]
    procs: dict[int, list[int]] = field(default_factory=dict)
    energy_mj: int | None = None


class ComputeMeter:
    """GPM activity and per-process utilisation of some GPUs over one command.

    ``start`` before the command, ``sample`` while it runs (the watch's
    thread does that), ``stop`` after it; ``report`` is the JSON the outcome
    keeps.  Every NVML error is kept as text: a rule that cannot read a
    channel must say so, not guess.
    """

    def __init__(self, gpus: Iterable[int]) -> None:
        self._nv = _nvml()
        self._gpus: list[_Gpu] = []
        self.error: str | None = None if self._nv else "NVML (pynvml) is not available"
        self.result: dict[str, Any] = {}
        if self._nv is None:
            return
        for index in gpus:
            try:
                self._gpus.append(_Gpu(index, self._nv.nvmlDeviceGetHandleByIndex(index)))
            except Exception as exc:
                self.error = f"GPU {index}: {exc}"

    def start(self) -> None:
        nv = self._nv
        for g in self._gpus:
            g.started = time.monotonic()
            g.last_ts = int(time.time() * 1e6)  # NVML's sample clock: microseconds, wall time
            with contextlib.suppress(Exception):
                g.energy_mj = int(nv.nvmlDeviceGetTotalEnergyConsumption(g.handle))
            try:
                if not nv.nvmlGpmQueryDeviceSupport(g.handle).isSupportedDevice:
                    g.gpm_error = "this GPU has no GPM (Hopper and later have it)"
                    continue
                g.gpm = nv.nvmlGpmSampleGet(g.handle, nv.nvmlGpmSampleAlloc())
            except Exception as exc:
                g.gpm_error = f"GPM: {type(exc).__name__}: {exc}"

    def sample(self) -> None:
        """Per-process utilisation samples since the last call (all processes; kept by pid)."""
        nv = self._nv
        for g in self._gpus:
            try:
                samples = nv.nvmlDeviceGetProcessUtilization(g.handle, g.last_ts)
            except Exception:  # NOT_FOUND: no sample since last_ts
                continue
            for s in samples:
                if int(s.timeStamp) <= g.last_ts:
                    continue
                row = g.procs.setdefault(int(s.pid), [0, 0, 0, 0])
                row[0] += 1
                row[1] += int(s.smUtil)
                row[2] = max(row[2], int(s.smUtil))
                row[3] = max(row[3], int(s.memUtil))
            if samples:
                g.last_ts = max(g.last_ts, *(int(s.timeStamp) for s in samples))

    def stop(self) -> None:
        if any(g.gpm is not None for g in self._gpus):
            time.sleep(GPM_SETTLE_S)
        self.sample()
        for g in self._gpus:
            self.result[str(g.index)] = self._finish(g)

    def _finish(self, g: _Gpu) -> dict[str, Any]:
        nv = self._nv
        interval = time.monotonic() - g.started
        out: dict[str, Any] = {"interval_s": round(interval, 3),
                               "process_util": {str(p): {"samples": r[0], "sm_sum": r[1],
                                                         "sm_max": r[2], "mem_max": r[3]}
                                                for p, r in g.procs.items()}}
        with contextlib.suppress(Exception):
            if g.energy_mj is not None:
                out["energy_j"] = round(
                    (int(nv.nvmlDeviceGetTotalEnergyConsumption(g.handle)) - g.energy_mj) / 1e3, 3)
        if g.gpm is None:
            out["gpm_error"] = g.gpm_error
            return out
        try:
            end = nv.nvmlGpmSampleGet(g.handle, nv.nvmlGpmSampleAlloc())
            got = nv.c_nvmlGpmMetricsGet_t()
            got.version = nv.NVML_GPM_METRICS_GET_VERSION
            got.numMetrics = len(GPM_METRICS)
            got.sample1, got.sample2 = g.gpm, end
            for i, (metric, _) in enumerate(GPM_METRICS):
                got.metrics[i].metricId = metric
            nv.nvmlGpmMetricsGet(got)
            raw = {key: (float(got.metrics[i].value) if got.metrics[i].nvmlReturn == 0 else None)
                   for i, (_, key) in enumerate(GPM_METRICS)}
            gpm: dict[str, float | None] = {k: _sig(v) for k, v in raw.items()}
            if raw["sm_util_pct"] is not None:
                gpm["sm_active_ms"] = _sig(raw["sm_util_pct"] / 100 * interval * 1e3)
            out["gpm"] = gpm
            for sample in (g.gpm, end):
                nv.nvmlGpmSampleFree(sample)
        except Exception as exc:
            out["gpm_error"] = f"GPM: {type(exc).__name__}: {exc}"
        return out


def _sig(value: float | None) -> float | None:
    """Four significant digits: the counters resolve a single kernel, a fixed rounding does not."""
    return None if value is None else float(f"{value:.4g}")


def report(meter: ComputeMeter | None) -> Mapping[str, Any]:
    """What a meter saw, for the outcome (empty when there was none)."""
    if meter is None:
        return {}
    if meter.error and not meter.result:
        return {"error": meter.error}
    return dict(meter.result)
