"""What the witness's host channel adds to one command: the stop at a finish, read and continued.

Since issue 25 a finishing process stops itself (``SIGSTOP``) and waits for the host's
observer (``witness.observe``, a 10 ms poll) to read its state and continue it.  This runs
a Python command that does nothing (so the stop is what is measured, not the load on the
machine) in a real container of the demo image through ``DockerTarget`` both ways,
interleaved N times: with the witness as before (no stop, no observer: the
file-only record) and with the stop and the observer (what a stage now runs), and reports
the medians of the command's own duration (``ExecResult.duration``) and their difference.

    python bench/witness_stop.py [--repeat N] [--image TAG]
"""

from __future__ import annotations

import argparse
import sys
import time

from common import bench_labels, demo_images, machine, median, table

from pytest_reb import witness
from pytest_reb.loop.images import ENV_PYTHON, REPO_DIR
from pytest_reb.targets import DockerTarget, Limits

ENTRY = ["-c", "pass"]


def once(target: DockerTarget, stops: str) -> float:
    lib = target.witness_library()
    assert lib is not None, "no C compiler to build the witness"
    record = f"/tmp/reb-witness-bench-{time.monotonic_ns()}.log"
    env = witness.env_vars(lib, record, [], None, REPO_DIR, stops)
    res = target.exec([ENV_PYTHON, *ENTRY], timeout=120, env=env, cwd=REPO_DIR)
    assert res.exit_code == 0, res.stderr[-300:]
    seen = target.take_observed(record) or {}
    assert bool(seen) == bool(stops), (stops, seen)
    return res.duration


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--image", default=None)
    args = parser.parse_args()
    image = args.image or demo_images("good")[0]
    before: list[float] = []
    after: list[float] = []
    with bench_labels():
        target = DockerTarget(image, run_id="bench-witness", gpus=[], limits=Limits())
        try:
            once(target, "")  # the container's start is nobody's cost
            for _ in range(args.repeat):
                before.append(once(target, ""))
                after.append(once(target, "finish"))
        finally:
            target.close()
    print(machine())
    print(table(["way", "median s", "runs"],
                [["file only (before)", f"{median(before):.3f}", len(before)],
                 ["stop + host read (now)", f"{median(after):.3f}", len(after)]]))
    print(f"added: {median(after) - median(before):+.3f} s per command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
