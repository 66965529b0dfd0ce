"""The real runs' official-bundle reader keeps what the pyright stage analysed.

An official C0 count unlike ours (Auto1111SDK: 0 of 211 missing, ours 75 of 213)
cannot be explained from the counts alone: the cause is usually in what the
bundle's pyright ran on (its targets and the reason it chose them, recorded in
``analysis.json``'s ``meta``) or in pyright's own summary (files analysed,
errors) in ``pyright_output.json``.  ``official.stage_verdict`` now keeps both.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "realruns"))
from official import stage_verdict  # tests/realruns is not a package


def test_targets_reason_and_pyright_summary_are_kept() -> None:
    kept = stage_verdict({
        "status": "success", "missing_packages_count": 0,
        "meta": {"targets": ["auto1111sdk"], "decision_reason": "package dir(s)",
                 "env_vars": {"HF_HOME": "x"}},
        "pyright_summary": {"filesAnalyzed": 0, "errorCount": 0, "timeInSec": 3.1}})
    assert kept["targets"] == ["auto1111sdk"]
    assert kept["decision_reason"] == "package dir(s)"
    assert kept["pyright_summary"] == {"filesAnalyzed": 0, "errorCount": 0}
    assert "meta" not in kept and "env_vars" not in kept


def test_a_stage_without_them_gets_none_invented() -> None:
    kept = stage_verdict({"status": "failure", "failure_category": "deps"})
    assert not {"targets", "decision_reason", "pyright_summary"} & set(kept)


def test_targets_written_as_one_string_are_split_into_names() -> None:
    """VoxCPM's bundle wrote ``"targets": "src scripts"``; its record (made before this test)
    keeps them as the characters ``list()`` made of that string."""
    kept = stage_verdict({"status": "success", "meta": {"targets": "src scripts"}})
    assert kept["targets"] == ["src", "scripts"]
