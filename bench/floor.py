"""The own-time floor of a pyramid, on any machine, Docker or not (the lent GPU host has none).

``bench/overhead.py`` measures pytest-reb's own time per pyramid against the same commands
by hand, on Docker.  Part of that own time is paid before any tier runs, by any pytest
plugin: the interpreter's start, pytest's import and start, the collection of the module.
This bench measures those steps, interleaved N times, from the repository root:

* ``python -c pass``: the interpreter and its site's ``.pth`` files;
* ``python -c "import pytest"``;
* ``pytest --collect-only demo/test_demo__tinynet.py -p no:reb``: pytest alone collecting
  the demo module (it imports ``pytest_reb``'s spec vocabulary but gains no tier items);
* the same with pytest-reb and ``--reb-host=local://``: the plugin's imports, options and
  its six items, with no engine to ask.

Each has ``-p no:hypothesispytest`` and ``-p no:cacheprovider`` (a user's install; no
cache written into the checkout).  The last line minus the one before is pytest-reb's share
of the floor.

    python bench/floor.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys

from common import DEMO_MODULE, ROOT, machine, measure, median, table
from localmode import importable

QUIET = ["-p", "no:hypothesispytest", "-p", "no:cacheprovider", "-q"]


def commands() -> dict[str, list[str]]:
    from pytest_reb.plugin import load_args  # after ``importable``: a checkout carried as it is

    demo = str(DEMO_MODULE.relative_to(ROOT))
    pytest = [sys.executable, "-m", "pytest", "--collect-only", *QUIET, demo]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import pytest"': [sys.executable, "-c", "import pytest"],
        "pytest --collect-only demo, -p no:reb": [*pytest, "-p", "no:reb"],
        "  the same with pytest-reb (--reb-host=local://)": [*pytest, *load_args(),
                                                             "--reb-host=local://"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    importable()
    steps = commands()
    for cmd in steps.values():  # warm the page cache and __pycache__
        measure(cmd, cwd=ROOT, ok=(0, 5))
    walls: dict[str, list[float]] = {name: [] for name in steps}
    cpus: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.repeat):
        for name, cmd in steps.items():
            wall, cpu = measure(cmd, cwd=ROOT, ok=(0, 5))
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(f"own-time floor, {args.repeat} interleaved runs each; {machine()}")
    print(table(["step", "wall s median", "min", "max", "CPU s median"],
                [(name, median(walls[name]), min(walls[name]), max(walls[name]),
                  median(cpus[name])) for name in steps]))
    alone, ours = list(steps)[-2:]
    share = median([a - b for a, b in zip(walls[ours], walls[alone], strict=True)])
    print(f"\nbefore any tier: {median(walls[ours]):.2f} s wall median, of which "
          f"pytest-reb's share (median of paired differences) {share:.2f} s; goal for the "
          "whole pyramid's own time: <= 0.5 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
