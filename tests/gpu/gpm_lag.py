"""How long after a burst of kernels the GPU's performance monitor (GPM) counts it.

``python tests/gpu/gpm_lag.py [--rounds N]`` on a GPU machine: each round takes a GPM
sample, runs a server request's worth of work (three 256x256 matmuls, synchronised),
waits ``delay`` and takes the end sample, then rests so the next round starts settled.
It prints, per delay, the SM-active time ``ComputeMeter`` would compute (median, minimum,
rounds that read zero).  Where short delays read zero and longer ones do not, GPM's
counters lag the work, and a meter whose end sample follows the command's end at once
misses work done in its last moments (a model server answers, then is stopped):
``gpu_compute.GPM_SETTLE_S`` is set from this table (docs/gpu.md).
"""

from __future__ import annotations

import argparse
import statistics
import time

import pynvml as nv
import torch

DELAYS = (0.0, 0.01, 0.03, 0.1, 0.2, 0.5, 1.0, 2.0)


def sm_active_ms(handle: object, first: object, interval: float) -> float:
    end = nv.nvmlGpmSampleGet(handle, nv.nvmlGpmSampleAlloc())
    got = nv.c_nvmlGpmMetricsGet_t()
    got.version, got.numMetrics = nv.NVML_GPM_METRICS_GET_VERSION, 1
    got.sample1, got.sample2 = first, end
    got.metrics[0].metricId = 2  # SM utilisation, percent of the interval
    nv.nvmlGpmMetricsGet(got)
    for sample in (first, end):
        nv.nvmlGpmSampleFree(sample)
    return float(got.metrics[0].value) / 100 * interval * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rest", type=float, default=1.0, help="seconds between rounds")
    args = parser.parse_args()
    nv.nvmlInit()
    handle = nv.nvmlDeviceGetHandleByIndex(0)
    x = torch.randn(256, 256, device="cuda")
    (x @ x).sum().item()  # context, cuBLAS handle and the first kernels: outside any round
    time.sleep(args.rest)
    print(f"{'delay s':>8} {'median ms':>11} {'min ms':>10} {'zero':>5}")
    for delay in DELAYS:
        got = []
        for _ in range(args.rounds):
            first = nv.nvmlGpmSampleGet(handle, nv.nvmlGpmSampleAlloc())
            start = time.monotonic()
            for _ in range(3):
                y = x @ x
            torch.cuda.synchronize()
            time.sleep(delay)
            got.append(sm_active_ms(handle, first, time.monotonic() - start))
            del y
            time.sleep(args.rest)
        print(f"{delay:>8} {statistics.median(got):>11.3g} {min(got):>10.3g} "
              f"{sum(v == 0 for v in got):>5}", flush=True)


if __name__ == "__main__":
    main()
