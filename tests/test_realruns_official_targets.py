"""The real runs' official-bundle reader keeps what the pyright stage analysed.

An official C0 count unlike ours (Auto1111SDK: 0 of 211 missing, ours 75 of 213)
cannot be explained from the counts alone: the cause is usually in what the
bundle's pyright ran on (its targets and the reason it chose them, recorded in
``analysis.json``'s ``meta``) or in pyright's own summary (files analysed,
errors) in ``pyright_output.json``.  ``official.stage_verdict`` now keeps both.
"""

from __future__ import annotations

import re

from official import pyright_missing, stage_verdict  # tests/realruns is on the suite's pythonpath


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


def test_pyright_s_own_missing_imports_are_kept_beside_a_broken_count() -> None:
    r"""vllm-omni's bundle counted 0 of 87 while its pyright reported 936 missing imports: its
    regex, ``r'Import\\s+\\"([^\\"]+)\\"'`` in a quoted heredoc, asks for a literal
    backslash.  The record keeps the names the official rule takes from pyright's output."""
    output = {"generalDiagnostics": [
        {"rule": "reportMissingImports", "message": 'Import "vllm.config" could not be resolved'},
        {"rule": "reportMissingImports", "message": 'Import "vllm" could not be resolved'},
        {"rule": "reportMissingImports", "message": 'Import "torch" could not be resolved'},
        {"rule": "reportMissingModuleSource",
         "message": 'Import "yaml" could not be resolved from source'},
        {"rule": "reportAttributeAccessIssue", "message": 'Cannot access attribute "x"'}]}
    names = pyright_missing(output)
    assert names == ["torch", "vllm"]
    broken = re.compile(r'Import\\s+\\"([^\\"]+)\\"')  # the bundle's, as Python reads it
    assert not any(broken.search(d["message"]) for d in output["generalDiagnostics"])
    kept = stage_verdict({"status": "success", "missing_packages": [],
                          "missing_packages_count": 0, "pyright_missing": names})
    assert kept["missing_packages_count"] == 0 and kept["pyright_missing"] == ["torch", "vllm"]


def test_no_pyright_output_gives_no_names() -> None:
    assert pyright_missing({}) is None and pyright_missing("not json") is None
    assert pyright_missing({"generalDiagnostics": []}) == []
