"""The real runs' recorded outcomes, replayed through ``summary`` and ``table``.

``tests/realruns/build.py`` ran pytest-reb (strict and compat) and the official
bundle on honest environments of real repositories and kept, per repository,
the outcomes (without their output tails) and what ``summary.tally`` and
``table.row_of`` made of them.  Replaying them here catches a later change to
the loading, tallying or table code that would alter a recorded verdict or
figure; the C0 denominators are checked against the repository modules, which
carry the official totals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from build import figures, module_of  # tests/realruns is on the suite's pythonpath
from support.repomodules import module

DATA = Path(__file__).parent / "data" / "realruns"
RECORDS = sorted(DATA.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
@pytest.mark.parametrize("mode", ["strict", "compat"])
def test_replay_gives_the_recorded_verdicts(path: Path, mode: str) -> None:
    data = load(path)
    assert figures(data[mode]) == data["figures"][mode]


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_c0_denominator_is_the_modules(path: Path) -> None:
    """pyright counted the module's total of imports, in both modes, on the real checkout."""
    data = load(path)
    total = module(module_of(data["repo"]).stem).repo.imports_total
    for mode in ("strict", "compat"):
        c0 = next(o for o in data[mode] if o["tier"] == "c0")
        assert c0["evidence"].get("imports_total") == total, (mode, c0["message"])


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_records_hold_no_output(path: Path) -> None:
    """Test data, not the repositories' text: no output tails, no logs of the bundle."""
    data = load(path)
    for o in data["strict"] + data["compat"]:
        assert not {"stdout_tail", "stderr_tail"} & set(o)
    assert set(data.get("official", {})) <= {"run_all_exit", "run_all_lines", "stages"}


def test_there_are_records() -> None:
    assert len(RECORDS) >= 3, [p.name for p in RECORDS]
