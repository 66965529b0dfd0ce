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

``--local [CHECKOUT]`` runs the same matrix on this machine instead, for a host with no
Docker (the GPU machines): every row is ``"host": "local://"``, the interpreter under test
is ``--python`` (default: the one running the bench), ``--reb-repo-dir`` is CHECKOUT, the
demo's checkout at its pinned commit (``python -m pytest_reb.loop.demo checkout DIR``; made
in the bench's temporary folder when not given, with git alone), and each row's report is
written from that interpreter's own facts as docs/gpu_run.sh writes it (no torch: version
None, no CUDA).  Docker is not touched.  The host itself has no sibling to run a lane in
(``Target.sibling``), so on ``local://`` every pair runs its tiers in turn and the lanes
column says ``off``: ``-n N`` there is the workers alone.  C2 holds a lease on every GPU of
the machine while its probe runs, so the workers' C2 probes take turns.

    python bench/scaling.py [--repeat N] [--targets 8] [--workers 2,4,8] [--serial]
    python bench/scaling.py --local [CHECKOUT] [--python PATH] [--workers 2,4,8] ...
"""

from __future__ import annotations

import argparse
import contextlib
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
from localmode import Local, add_arguments, checked, importable, setting

#: The marks every side runs (C0 on ``local://`` needs node, which a GPU host may lack).
MARKS = "c1 or c2"
#: The demo's repository, as its module names it.
REPO = "reb/tinynet"
def matrix_rows(targets: int, *, image: str | None = None,
                local: Local | None = None) -> list[dict[str, str]]:
    """The matrix: agents ``a1``..``a<targets>`` on the demo image, or on ``local://``."""
    if (image is None) == (local is None):
        raise ValueError("give exactly one of image or local")
    where = ({"image": image} if image is not None
             else {"host": "local://", "report": local.report})  # type: ignore[union-attr]
    return [{"repo": REPO, "agent": f"a{i}", **where} for i in range(1, targets + 1)]


def pytest_argv(where: Path, workers: int, tag: str, *, serial: bool = False,
                local: Local | None = None, plugin: list[str] | None = None) -> list[str]:
    """One side's command: the same matrix and module on every side, only ``-n`` differs."""
    return [sys.executable, "-m", "pytest", "--rootdir", str(where), "-q",
            "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *(plugin or []),
            "--reb-matrix", "matrix.jsonl", "-m", MARKS, "-n", str(workers),
            "--reb-outdir", str(where / tag),
            *(local.pytest_args() if local is not None else []),
            *(["--reb-serial"] if serial else [])]


def lanes(workers: int, cores: int, *, serial: bool = False, local: bool = False) -> str:
    """Whether the pairs ran C1 beside C2 (``lanes.spare_cores``, ``fixtures._lanes``): never
    under ``--reb-serial``, nor on ``local://`` (no ``Target.sibling``), nor with fewer than
    two cores a worker."""
    return "off" if serial or local or cores < 2 * workers else "on"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--targets", type=int, default=8)
    parser.add_argument("--workers", default="2",
                        help="comma-separated -n values each compared with -n 1 (default 2)")
    parser.add_argument("--serial", action="store_true",
                        help="each pair's tiers in turn (--reb-serial), no lanes")
    add_arguments(parser, "rows")
    args = parser.parse_args()
    counts = [1, *sorted({int(n) for n in args.workers.split(",")} - {1})]
    importable()
    local_mode = args.local is not None
    checked(parser, args.local)
    image = None if local_mode else demo_images("good")[0]
    from pytest_reb.plugin import load_args  # after ``importable``

    plugin = load_args()
    walls: dict[int, list[float]] = {n: [] for n in counts}
    loads: dict[int, list[float]] = {n: [] for n in counts}  # others' jobs show here
    busy: dict[int, list[float]] = {n: [] for n in counts}  # cores the machine kept busy
    labels = contextlib.nullcontext() if local_mode else bench_labels()
    with labels, tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        local = setting(args.local, args.python, where) if local_mode else None
        (where / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
        (where / "matrix.jsonl").write_text("".join(
            json.dumps(row) + "\n"
            for row in matrix_rows(args.targets, image=image, local=local)))

        def run(workers: int, tag: str) -> float:
            return timed(pytest_argv(where, workers, tag, serial=args.serial, local=local,
                                     plugin=plugin), cwd=where)

        run(counts[-1], "warmup")
        for i in range(args.repeat):
            for n in (counts if i % 2 == 0 else counts[::-1]):
                before = machine_busy()
                walls[n].append(run(n, f"n{n}-{i}"))
                busy[n].append((machine_busy() - before) / walls[n][-1])
                loads[n].append(os.getloadavg()[0])
    cores = len(os.sched_getaffinity(0))
    rows = [(f"-n {n}", lanes(n, cores, serial=args.serial, local=local_mode), median(w),
             min(w), max(w), f"{median(busy[n]):.2f}", ", ".join(f"{x:.1f}" for x in loads[n]))
            for n, w in walls.items()]
    if local is not None:
        on = f"local:// (this machine, no Docker; {local.python}, checkout {local.checkout})"
        how = "tiers in turn (no lanes on local://)"
    else:
        on = f"Docker image {image}"
        how = ("serial tiers" if args.serial
               else "C1 beside C2 where cores allow (lanes)")
    print(f"{args.targets} demo targets x (C1, C2) on {on}, {args.repeat} interleaved runs "
          f"each, {how}; {cores} core(s) for the bench; {machine()}")
    print(table([f"pytest --reb-matrix ... -m '{MARKS}'", "lanes", "median s", "min s", "max s",
                 "cores busy", "1-min load after each"], rows))
    for n in counts[1:]:
        speedups = [a / b for a, b in zip(walls[1], walls[n], strict=True)]
        speedup = median(speedups)
        goal = f" (goal >= 1.9x: {'met' if speedup >= 1.9 else 'MISSED'})" if n == 2 else ""
        print(f"speed-up -n {n} over -n 1: {speedup:.2f}x median of per-round "
              f"{', '.join(f'{s:.2f}' for s in speedups)}{goal}")
    kept = ("each pair's tiers in turn keep busy" if local_mode or args.serial
            else "lanes keep busy")
    print(f"on {cores} core(s): the ceiling the busy cores of -n 1 leave is "
          f"{cores / median(busy[1]):.2f}x; -n N helps only with cores beyond what -n 1's "
          f"{kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
