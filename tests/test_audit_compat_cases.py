"""Compat C5 against the official validators, from cases the differential ran.

``tools/compat_differential.py`` fed each case (a report, the C1-C4 outcomes
written by our official-layout writer, a real interpreter) to the official
``validate_agent_report.py`` of one bundle and recorded its counts and
verdict; CI cannot fetch the official release, so the cases and those counts
are kept in ``tests/data/compat_cases.json``, with what our observation of the
interpreter was.  Each case is judged again here with the variant the
bundle's ``repos/`` module states, and must give the official counts; a
declared departure (an official bug we do not reproduce) must not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support.repomodules import benchmark

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c5_observe import Invocation, PythonObservation
from pytest_reb.report.official import STAGES, stage_results
from pytest_reb.rules.c5 import audit
from pytest_reb.rules.c5_compat import compat_path
from pytest_reb.selfreport import load_report

DATA = Path(__file__).parent / "data" / "compat_cases.json"
CASES: list[dict[str, Any]] = json.loads(DATA.read_text())["cases"]
KINDS = ("path", "version", "capability")


def observation(data: Mapping[str, Any]) -> PythonObservation:
    fields = dict(data)
    for key in ("official_version", "official_torch", "official_torch_json"):
        if isinstance(fields.get(key), dict):
            fields[key] = Invocation(**fields[key])
    return PythonObservation(**fields)


def judge(case: Mapping[str, Any]) -> dict[str, Any]:
    """Our compat audit of a recorded case: counts and verdict."""
    variant = benchmark()[case["repo"]].c5_compat
    report = case["report"]
    load = load_report(report.encode() if report is not None else None, source="report.json")
    path = compat_path(load.data, variant)
    seen = case["observations"]
    python = observation(seen[path]) if path in seen else None
    outcomes = {t: Outcome(repo=case["repo"], target="t", tier=t, **f)
                for t, f in case["stages"].items()}
    result = audit(load, python, outcomes, compat=True, variant=variant)
    return {**result.counts, "passed": result.passed}


def _id(case: Mapping[str, Any]) -> str:
    return f"{case['bundle']}-{case['id']}"


@pytest.mark.parametrize("case", [c for c in CASES if not c.get("departure")], ids=_id)
def test_compat_counts_what_the_official_validator_counts(case: dict[str, Any]) -> None:
    assert judge(case) == case["official"], case["label"]


@pytest.mark.parametrize("case", [c for c in CASES if c.get("departure")], ids=_id)
def test_a_declared_departure_is_not_reproduced(case: dict[str, Any]) -> None:
    assert judge(case) != case["official"], case["departure"]


def test_the_cases_cover_every_bundle() -> None:
    assert len({c["bundle"] for c in CASES}) == 44
    assert {c["repo"] for c in CASES} <= set(benchmark())


def test_the_cuda_stage_is_written_with_its_observed_block() -> None:
    """The official validators read ``observed`` of the cuda stage; ours always has one."""
    failed = Outcome(repo="a/b", target="t", tier="c2", status="failed", category="infra")
    data = stage_results(failed, "compat")
    assert STAGES["c2"] == data["stage"] == "cuda"
    assert data["observed"] == {"framework": "unknown", "cuda_available": False, "gpu_count": 0}
    seen = {"cuda_available": True, "gpu_count": 2}
    passed = Outcome(repo="a/b", target="t", tier="c2", status="passed",
                     evidence={"observed": seen})
    assert stage_results(passed, "compat")["observed"] == seen


def test_an_empty_report_is_a_missing_python_path_save_in_two_bundles() -> None:
    """``{}`` as the report: 42 validators count one missing ``python_path``; SenseVoice takes
    it for no report (``empty_report_missing``: nothing counted, failed); renderformer checks
    ``python_path`` only under ``if reported:`` (``empty_report_unchecked``: nothing counted,
    and it passes, whatever the stages say)."""
    empty = [c for c in CASES if str(c["id"]).startswith("empty-{}")]
    assert len({c["bundle"] for c in empty}) == 44
    odd = {c["bundle"]: c["official"] for c in empty if c["official"]["path"] != 1}
    assert set(odd) == {"FunAudioLLM@SenseVoice", "microsoft@renderformer"}
    assert all(c["official"]["passed"] == (c["bundle"] == "microsoft@renderformer")
               for c in empty)
    for case in empty:
        assert judge(case) == case["official"], case["bundle"]
