"""Collection of all 44 ``repos/`` modules (goal: <= 2 s median wall time).

Commands interleaved N times, from the repository root:

* ``pytest --collect-only -q repos/``: what a user waits for before the first probe;
* the same with ``-p no:reb``: pytest alone importing the same 44 modules
  (they import ``pytest_reb``'s spec vocabulary but gain no tier items);
* both again with ``-p no:hypothesispytest``: a user's install.  Hypothesis
  is a test-only dependency of this repository, and its pytest plugin
  imports all of hypothesis at startup, in every pytest run here;
* ``python -c "import pytest"``: the interpreter's and pytest's import floor.

The difference with and without ``-p no:reb`` is pytest-reb's share.

    python bench/collection.py [--repeat N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from common import ROOT, machine, measure, median, table

COLLECT = ["--collect-only", "-q", "repos/"]
NO_HYPOTHESIS = ["-p", "no:hypothesispytest"]
COMMANDS = {
    "pytest --collect-only -q repos/": COLLECT,
    "  the same, -p no:reb (pytest alone)": [*COLLECT, "-p", "no:reb"],
    "  the same, -p no:hypothesispytest (a user's install)": [*COLLECT, *NO_HYPOTHESIS],
    "  the same, both (pytest alone, a user's install)": [*COLLECT, *NO_HYPOTHESIS, "-p",
                                                           "no:reb"],
}


def items(args: list[str]) -> str:
    out = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip().splitlines()
    return out[-1] if out else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    commands = {name: [sys.executable, "-m", "pytest", *cmd] for name, cmd in COMMANDS.items()}
    commands['python -c "import pytest"'] = [sys.executable, "-c", "import pytest"]
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    # pytest exits 5 when it collects nothing (the -p no:reb lines): expected here
    measure(commands[next(iter(COMMANDS))], cwd=ROOT, ok=(0, 5))  # warm caches, __pycache__
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            wall, cpu = measure(cmd, cwd=ROOT, ok=(0, 5))
            walls[name].append(wall)
            cpus[name].append(cpu)
    counts = {name: items(cmd) for name, cmd in COMMANDS.items()}
    rows = [(name, median(walls[name]), min(walls[name]), max(walls[name]), median(cpus[name]),
             counts.get(name, "")) for name in commands]
    print(f"collection of repos/ ({len(list((ROOT / 'repos').glob('test_*.py')))} modules), "
          f"{args.repeat} interleaved runs each; {machine()}")
    print(table(["command", "wall s median", "min", "max", "CPU s median", "pytest says"], rows))
    print()
    names = list(COMMANDS)
    for where, ours, alone in (("this environment", names[0], names[1]),
                               ("a user's install", names[2], names[3])):
        wall = median(walls[ours])
        share = median([a - b for a, b in zip(walls[ours], walls[alone], strict=True)])
        share_cpu = median([a - b for a, b in zip(cpus[ours], cpus[alone], strict=True)])
        print(f"{where}: collection {wall:.2f} s wall median (goal <= 2 s: "
              f"{'met' if wall <= 2 else 'MISSED'}); pytest-reb's share, median of paired "
              f"differences: {share:.2f} s wall, {share_cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
