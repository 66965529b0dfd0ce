"""What pytest-reb costs a project that does not use it (goal: <= 1.05 x ``-p no:reb``).

pytest-reb is a ``pytest11`` plugin, so once installed it is loaded into every
pytest run on the machine.  A small unrelated project (a few files of plain
tests, made in a temporary folder) is run, interleaved N times with the order
alternating, as

* ``pytest -q``: pytest-reb loaded from this tree (``PYTHONPATH``), inactive;
* ``pytest -q -p no:reb``: the same without it.

Both load every other installed plugin.  The figure is the ratio of median
wall times (what a user waits); the ratio of median CPU times (user + system
of the run and its children) is given beside it, as it barely moves when
other jobs share the machine.

    python bench/plugin_cost.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, machine, measure, median, table

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
SIDES = {"pytest -q (pytest-reb installed, unused)": [],
         "pytest -q -p no:reb": ["-p", "no:reb"]}
GOAL = 1.05


def make_project(folder: Path, files: int = 5, tests: int = 8) -> None:
    """A project of its own: plain functions, a fixture, a parametrized test, a conftest."""
    (folder / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef numbers():\n    return list(range(10))\n")
    for f in range(files):
        body = [f"def test_plain_{i}(numbers):\n    assert sum(numbers) == 45\n"
                for i in range(tests)]
        body.append("import pytest\n\n@pytest.mark.parametrize('x', range(5))\n"
                    "def test_param(x):\n    assert x < 5\n")
        (folder / f"test_mod{f}.py").write_text("\n".join(body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40, help="rounds (default 40)")
    args = parser.parse_args()
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                      os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="reb-plugin-cost-") as tmp:
        project = Path(tmp)
        make_project(project)
        helptext = subprocess.run([*PYTEST, "--help"], cwd=project, capture_output=True,
                                  text=True, env={**os.environ, **env}).stdout
        if "--reb-image" not in helptext:
            sys.exit("pytest-reb is not loaded in the project's pytest: install it first")
        walls: dict[str, list[float]] = {side: [] for side in SIDES}
        cpus: dict[str, list[float]] = {side: [] for side in SIDES}
        for rnd in range(args.repeat):
            order = list(SIDES) if rnd % 2 == 0 else list(reversed(SIDES))
            for side in order:
                wall, cpu = measure([*PYTEST, *SIDES[side]], cwd=project, env=env, ok=(0,))
                walls[side].append(wall)
                cpus[side].append(cpu)
    print(f"{machine()}; {args.repeat} rounds, interleaved; medians\n")
    rows = [[side, median(walls[side]), median(cpus[side])] for side in SIDES]
    print(table(["command", "wall s", "CPU s"], rows))
    ours, bare = list(SIDES)
    wall_ratio = median(walls[ours]) / median(walls[bare])
    cpu_ratio = median(cpus[ours]) / median(cpus[bare])
    verdict = "met" if wall_ratio <= GOAL else "NOT met"
    print(f"\nwith / without pytest-reb: {wall_ratio:.3f}x wall, {cpu_ratio:.3f}x CPU "
          f"(goal <= {GOAL:.2f}x wall: {verdict})")


if __name__ == "__main__":
    main()
