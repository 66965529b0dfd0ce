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

from common import ROOT, machine, median, table, timed

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
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in COMMANDS}
    runs['python -c "import pytest"'] = []
    timed([sys.executable, "-m", "pytest", *COLLECT], cwd=ROOT)  # warm caches, __pycache__
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            runs[name].append(timed([sys.executable, "-m", "pytest", *cmd], cwd=ROOT, ok=(0, 5)))
        runs['python -c "import pytest"'].append(
            timed([sys.executable, "-c", "import pytest"], cwd=ROOT))
    counts = {name: items(cmd) for name, cmd in COMMANDS.items()}
    rows = [(name, median(t), min(t), max(t), counts.get(name, "")) for name, t in runs.items()]
    print(f"collection of repos/ ({len(list((ROOT / 'repos').glob('test_*.py')))} modules), "
          f"{args.repeat} runs each; {machine()}")
    print(table(["command", "median s", "min s", "max s", "pytest says"], rows))
    print()
    for where, ours, alone in (("this environment", rows[0][1], rows[1][1]),
                               ("a user's install", rows[2][1], rows[3][1])):
        print(f"{where}: collection {ours:.2f} s median (goal <= 2 s: "
              f"{'met' if ours <= 2 else 'MISSED'}); pytest-reb's share {ours - alone:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
