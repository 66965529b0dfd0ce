"""Scaling over xdist workers: 8 demo targets, ``-n N`` against ``-n 1`` (goal: >= 1.9x at -n 2).

A matrix of 8 rows (agents ``a1``..``a8``, all on the good demo image, so
every C1 really trains) runs ``-m "c1 or c2"`` with one worker and with
each of ``--workers`` (default 2), interleaved N times (order alternating).
``-n 1`` rather than ``-n 0`` so both sides pay xdist's start.  The matrix and
module are the same on every side; only ``-n`` differs.

When ``-n`` helps: each pair runs C1 beside C2 (the side-by-side lanes, docs/tiers.md)
wherever the machine has at least two cores per worker (``lanes.spare_cores``), so ``-n 1``
already keeps two cores busy.  On 2 cores ``-n 2`` turns the lanes off and gains about
nothing; a worker more pays only with cores beyond the two its lanes use, as on a 16-core
GPU host (``--workers 2,4,8``: lanes stay on up to ``-n 8``).  ``--serial`` passes
``--reb-serial`` to every side and measures the workers alone.

The machine's busy cores during each run (``/proc/stat``: the containers' processes too)
show the ceiling: ``-n 1`` keeping 1.3 of 2 cores busy cannot be made more than 2/1.3 =
1.54x faster by a second worker, whatever the harness does.

Needs Docker and builds the demo images on first use (``reb demo`` does the same); it reaches
nothing outside the machine, so it runs as it is on a GPU host without network.

    python bench/scaling.py [--repeat N] [--targets 8] [--workers 2,4,8] [--serial]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from common import (
    DEMO_MODULE,
    bench_labels,
    demo_images,
    machine,
    machine_busy,
    median,
    table,
    timed,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--targets", type=int, default=8)
    parser.add_argument("--workers", default="2",
                        help="comma-separated -n values each compared with -n 1 (default 2)")
    parser.add_argument("--serial", action="store_true",
                        help="each pair's tiers in turn (--reb-serial), no lanes")
    args = parser.parse_args()
    counts = [1, *sorted({int(n) for n in args.workers.split(",")} - {1})]
    [image] = demo_images("good")
    walls: dict[int, list[float]] = {n: [] for n in counts}
    loads: dict[int, list[float]] = {n: [] for n in counts}  # others' jobs show here
    busy: dict[int, list[float]] = {n: [] for n in counts}  # cores the machine kept busy
    with bench_labels(), tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        (where / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
        (where / "matrix.jsonl").write_text("".join(
            json.dumps({"repo": "reb/tinynet", "agent": f"a{i}", "image": image}) + "\n"
            for i in range(1, args.targets + 1)))

        def run(workers: int, tag: str) -> float:
            return timed([sys.executable, "-m", "pytest", "--rootdir", str(where), "-q",
                          "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                          "--reb-matrix", "matrix.jsonl", "-m", "c1 or c2", "-n", str(workers),
                          "--reb-outdir", str(where / tag),
                          *(["--reb-serial"] if args.serial else [])], cwd=where)

        run(counts[-1], "warmup")
        for i in range(args.repeat):
            for n in (counts if i % 2 == 0 else counts[::-1]):
                before = machine_busy()
                walls[n].append(run(n, f"n{n}-{i}"))
                busy[n].append((machine_busy() - before) / walls[n][-1])
                loads[n].append(os.getloadavg()[0])
    cores = len(os.sched_getaffinity(0))
    rows = [(f"-n {n}", "off" if args.serial or cores < 2 * n else "on", median(w), min(w),
             max(w), f"{median(busy[n]):.2f}", ", ".join(f"{x:.1f}" for x in loads[n]))
            for n, w in walls.items()]
    print(f"{args.targets} demo targets x (C1, C2) on {image}, {args.repeat} interleaved runs "
          f"each, {'serial tiers' if args.serial else 'C1 beside C2 where cores allow (lanes)'}; "
          f"{machine()}")
    print(table(["pytest --reb-matrix ... -m 'c1 or c2'", "lanes", "median s", "min s", "max s",
                 "cores busy", "1-min load after each"], rows))
    for n in counts[1:]:
        speedups = [a / b for a, b in zip(walls[1], walls[n], strict=True)]
        speedup = median(speedups)
        goal = f" (goal >= 1.9x: {'met' if speedup >= 1.9 else 'MISSED'})" if n == 2 else ""
        print(f"speed-up -n {n} over -n 1: {speedup:.2f}x median of per-round "
              f"{', '.join(f'{s:.2f}' for s in speedups)}{goal}")
    print(f"on {cores} core(s): the ceiling the busy cores of -n 1 leave is "
          f"{cores / median(busy[1]):.2f}x; -n N helps only with cores beyond what -n 1's "
          f"lanes keep busy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
