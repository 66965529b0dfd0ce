"""``bench/c0_checker.py`` end to end on the demo's source with a bare venv as the environment
(the host's node and pyright, no Docker): both ways agree, the checker says it ran as the
import checker, and the bench exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_bench_compares_both_ways_on_the_demo_source(bare_python: str) -> None:
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "c0_checker.py"),
                          str(ROOT / "demo" / "tinynet"), "--python", bare_python],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    [row] = [line for line in res.stdout.splitlines() if line.startswith("| tinynet")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:5] == ["same", "imports"], row
    assert int(cells[2]) > 0  # torch and yaml are not in the bare venv: counted both ways
