"""Measure, on a GPU machine, what the host sees of honest runs and of the GPU fakes.

``python tests/gpu/measure_compute.py OUT.json [--lca DIR]`` runs each scenario
as its own process session with the witness preloaded and, beside it, the
same samplers strict C3 uses (``evidence.ComputeApps`` for per-process memory,
``gpu_compute.ComputeMeter`` for GPM and per-process utilisation, 20 Hz),
then the sampling overhead: the honest demo with and without them,
alternating.  What it wrote is the test data of the rule
(``tests/data/gpu/``) and the figures of docs/gpu.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pytest_reb import witness  # noqa: E402
from pytest_reb.evidence import gpu_compute  # noqa: E402
from pytest_reb.evidence.gpu_use import ComputeApps, GpuWatch  # noqa: E402
from pytest_reb.targets.local import _session_pids  # noqa: E402

PY = sys.executable
DEMO = ROOT / "demo" / "tinynet"
FAKES = ROOT / "tests" / "gpu" / "fake_entries.py"
PROBE = ROOT / "pytest_reb" / "pyramid" / "probes" / "cuda_probe.py"
STEPS = ["--steps", "5", "--out", "/tmp/reb-measure-ckpt"]


def run(name: str, argv: list[str], entry: str, *, cwd: Path, env: dict[str, str] | None = None,
        sample: bool = True) -> dict[str, Any]:
    """One scenario: the command, its samplers, what the host saw."""
    record = Path(tempfile.mkdtemp()) / "reb-witness.log"
    full = {**os.environ, **(env or {}), "CUDA_VISIBLE_DEVICES": "0"}
    if sample:
        full.update(witness.env_vars(str(witness.library_path()), str(record), [entry],
                                     os.environ.get("LD_PRELOAD")))
    apps = ComputeApps() if sample else None
    meter = gpu_compute.ComputeMeter([0]) if sample else None
    memory: dict[int, int] = {}
    series: list[tuple[float, int]] = []
    stop = threading.Event()
    start = time.monotonic()
    if meter:
        meter.start()
    proc = subprocess.Popen(argv, cwd=cwd, env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)

    def loop() -> None:
        while not stop.wait(0.05):
            pids = _session_pids(proc.pid, "-")  # each scenario is its own session
            snap = apps.snapshot()
            total = 0
            for pid in pids:
                used = sum(snap.get(pid, {}).values())
                if used:
                    memory[pid] = max(memory.get(pid, 0), used)
                    total += used
            series.append((round(time.monotonic() - start, 3), total >> 20))
            meter.sample()

    sampler = threading.Thread(target=loop, daemon=True)
    if sample:
        sampler.start()
    out, _ = proc.communicate(timeout=600)
    duration = time.monotonic() - start
    stop.set()
    if sample:
        sampler.join()
        meter.stop()
    res: dict[str, Any] = {"name": name, "argv": argv, "exit_code": proc.returncode,
                           "duration_s": round(duration, 3),
                           "output_tail": out.decode(errors="replace")[-600:]}
    if sample:
        res["gpu_memory_mib"] = {str(p): m >> 20 for p, m in memory.items()}
        res["memory_series_mib"] = series[::4]
        res["compute"] = gpu_compute.report(meter)
        res["witness"] = record.read_text() if record.exists() else ""
    return res


def production(argv: list[str], entry: str, watched: bool) -> float:
    """Seconds one run takes under what strict C3 adds (witness, ``GpuWatch`` with its
    meter, 4 Hz) or bare."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0"}
    record = Path(tempfile.mkdtemp()) / "reb-witness.log"
    if watched:
        env.update(witness.env_vars(str(witness.library_path()), str(record), [entry],
                                    os.environ.get("LD_PRELOAD")))
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=DEMO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    if watched:
        with GpuWatch(lambda: _session_pids(proc.pid, "-"), ["0"]) as watch:
            proc.wait()
        assert watch.compute.get("0", {}).get("gpm"), watch.compute
        assert "reach" in record.read_text()
    else:
        proc.wait()
    return round(time.monotonic() - start, 3)


def scenarios(lca: Path | None) -> list[tuple[str, list[str], str, Path, dict[str, str]]]:
    train = str(DEMO / "train.py")
    fakes = [(f"fake_{m}", [PY, str(FAKES), m, *STEPS], str(FAKES), DEMO, {})
             for m in ("context", "elementwise", "matmul", "alloc", "loop100")]
    found = [
        ("idle", ["sleep", "2"], "", DEMO, {}),
        ("c2_probe", [PY, str(PROBE)], str(PROBE), DEMO, {}),
        ("demo_5", [PY, train, *STEPS, "--device", "cuda"], train, DEMO, {}),
        ("demo_200", [PY, train, "--steps", "200", "--out", "/tmp/reb-measure-ckpt",
                      "--device", "cuda"], train, DEMO, {}),
        *fakes,
    ]
    if lca is not None:
        bench = str(lca / "benchmark" / "benchmark_longctx.py")
        shim = ROOT / "repos" / "shims" / "test_feifeibear__long_context_attention"
        found.append(("lca_c3", [PY, "-m", "torch.distributed.run", "--nproc_per_node=1",
                                 "--master_addr=127.0.0.1", "--master_port=29511", bench,
                                 "--ring_impl_type", "basic", "--nheads", "2", "--group_num",
                                 "1", "--head_size", "32", "--seq_len", "32", "--batch_size",
                                 "1", "--fwd_only", "--ulysses_degree", "1", "--attn_type",
                                 "torch", "--no_causal"], bench, lca,
                      {"PYTHONPATH": f"{shim}:{lca}", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": "29511", "NCCL_SHM_DISABLE": "1", "OMP_NUM_THREADS": "1"}))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--lca", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--overhead-only", action="store_true",
                        help="only the with/without timing, through the production watch")
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    for name, argv, entry, cwd, env in [] if args.overhead_only else scenarios(args.lca):
        for i in range(1 if name == "idle" else args.repeat):
            res = run(name, argv, entry, cwd=cwd, env=env)
            res["repeat"] = i
            results.append(res)
            comp = res["compute"].get("0", {})
            gpm = comp.get("gpm") or {}
            procs = comp.get("process_util", {})
            print(f"{name:18s} #{i} exit {res['exit_code']} {res['duration_s']:6.2f}s "
                  f"mem {max(res['gpu_memory_mib'].values(), default=0):5d} MiB "
                  f"sm_active {gpm.get('sm_active_ms')} ms sm% {gpm.get('sm_util_pct')} "
                  f"occ% {gpm.get('sm_occupancy_pct')} dram% {gpm.get('dram_bw_util_pct')} "
                  f"pcie_rx {gpm.get('pcie_rx_mib_s')} procutil_max "
                  f"{max((p['sm_max'] for p in procs.values()), default=None)} "
                  f"gpm_err {comp.get('gpm_error')} energy {comp.get('energy_j')} J "
                  f"witness {res['witness'].count(chr(10))} lines "
                  f"{'reach' in res['witness']} {'finish' in res['witness']}", flush=True)
    overhead: dict[str, list[float]] = {"with": [], "without": []}
    train = str(DEMO / "train.py")
    for _ in range(args.repeat + 2):
        for mode in ("without", "with"):
            argv = [PY, train, *STEPS, "--device", "cuda"]
            if args.overhead_only:
                overhead[mode].append(production(argv, train, mode == "with"))
            else:
                res = run("overhead", argv, train, cwd=DEMO, sample=mode == "with")
                overhead[mode].append(res["duration_s"])
    ratio = statistics.median(overhead["with"]) / statistics.median(overhead["without"])
    print(f"overhead: with {overhead['with']} without {overhead['without']} "
          f"median ratio {ratio:.3f}", flush=True)
    Path(args.out).write_text(json.dumps({"results": results, "overhead": overhead,
                                          "overhead_ratio": round(ratio, 4)}, indent=1))


if __name__ == "__main__":
    main()
