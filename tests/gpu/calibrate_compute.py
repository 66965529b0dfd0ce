"""Calibrate strict C3's compute floor on a GPU machine: honest micro-workloads and the fakes.

``python tests/gpu/calibrate_compute.py OUT.json [--repeat N]`` runs every honest
micro-workload of ``micro_workloads.py`` (each kind in fp32 and bf16) and the fakes of
``fake_entries.py`` that do no real work (a context, an allocation, one elementwise kernel,
one tiny matmul), each as its own process session under the samplers strict C3 uses
(``measure_compute.run``), and writes what the GPU's counters showed. The JSON is the
test data of the rule (``tests/data/gpu/h200-calibration.json``), replayed by
``tests/test_gpu_compute.py``; the figures are in docs/gpu.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure_compute import DEMO, FAKES, PY, STEPS, run  # noqa: E402

MICRO = HERE / "micro_workloads.py"
KINDS = ("mlp_1step", "mlp_2steps", "mlp_infer_b1", "conv_1step", "transformer_1step",
         "transformer_infer_b1")
NO_WORK = ("context", "alloc", "elementwise", "matmul")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = [(f"honest_{k}_{d}", [PY, str(MICRO), k, d], str(MICRO)) for k in KINDS
             for d in ("fp32", "bf16")]
    cases += [(f"fake_{m}", [PY, str(FAKES), m, *STEPS], str(FAKES)) for m in NO_WORK]
    results = []
    for name, argv, entry in cases:
        for i in range(args.repeat):
            res = run(name, argv, entry, cwd=DEMO)
            gpm = res["compute"].get("0", {}).get("gpm") or {}
            results.append({"name": name, "repeat": i, "exit_code": res["exit_code"],
                            "duration_s": res["duration_s"], "compute": res["compute"],
                            "witness_finished": "finish" in res["witness"]})
            print(f"{name:34s} #{i} exit {res['exit_code']} {res['duration_s']:6.2f}s "
                  f"sm_active {gpm.get('sm_active_ms')} ms sm% {gpm.get('sm_util_pct')} "
                  f"tensor% {gpm.get('tensor_util_pct')}", flush=True)
    Path(args.out).write_text(json.dumps({"results": results}, indent=1))


if __name__ == "__main__":
    main()
