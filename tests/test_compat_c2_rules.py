"""Compat C2 per repository: the official cuda check's verdict and block, table-driven.

The cases are the runs of ``tools/compat_c2_differential.py`` that the
majority rule got wrong (CI cannot fetch the official release): a patched
``is_available()`` with no device, a probe that printed success and exited 1,
no framework, and an interpreter that gave the check no answer at all, whose
record (no file, a failure of some category and block, a pass, a stage that
never ends) each bundle states per situation.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_reb.outcome import Outcome
from pytest_reb.report.official import stage_results, write_layout
from pytest_reb.rules.c2_compat import official_c2, situation
from pytest_reb.variants import C2Variant, Situation

CU2 = {"framework": "pytorch", "cuda_available": True, "gpu_count": 2}
SPOOF = {"framework": "pytorch", "cuda_available": True, "gpu_count": 0}
NONE = {"framework": "none", "cuda_available": False, "gpu_count": 0}

CASES: list[tuple[str, C2Variant, Any, int | None, bool, Any]] = [
    ("majority_trusts_spoof", C2Variant(), SPOOF, 0, True, (True, 0)),
    ("no_device_fails", C2Variant(no_device="fails"), SPOOF, 0, False, (True, 0)),
    ("no_device_unavailable", C2Variant(no_device="unavailable"), SPOOF, 0, False, (False, 0)),
    ("majority_ignores_exit", C2Variant(), CU2, 1, True, (True, 2)),
    ("failed_exit_fails", C2Variant(failed_exit="fails"), CU2, 1, False, (True, 2)),
    ("failed_exit_unavailable", C2Variant(failed_exit="unavailable"), CU2, 1, False, (False, 0)),
    ("failed_exit_nulls", C2Variant(failed_exit="nulls"), CU2, 1, False, (None, None)),
    ("failed_exit_empty", C2Variant(failed_exit="empty"), CU2, 1, False, ("absent",) * 2),
    ("no_framework_false", C2Variant(), NONE, 3, False, (False, 0)),
    ("no_framework_null", C2Variant(no_framework="null"), NONE, 3, False, (None, None)),
    ("no_framework_absent", C2Variant(no_framework="absent"), NONE, 3, False, ("absent",) * 2),
    ("unrunnable_writes_nothing", C2Variant(), None, 0, False, None),
]


@pytest.mark.parametrize(("variant", "obs", "exit_code", "passed", "block"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_official_c2(variant: C2Variant, obs: Any, exit_code: int | None, passed: bool,
                     block: Any) -> None:
    got = official_c2(obs, exit_code, variant)
    assert got.passed is passed
    o = Outcome(repo="r/x", target="local://", tier="c2", status="passed" if passed else "failed",
                compat=passed, evidence={"observed": obs, "official_cuda": {
                    "written": got.written, "observed": got.observed}})
    data = stage_results(o, "compat")
    if block is None:
        assert data is None  # the official stage leaves no results.json
        return
    assert data is not None and data["status"] == ("success" if passed else "failure")
    seen = tuple(data["observed"].get(k, "absent") for k in ("cuda_available", "gpu_count"))
    assert seen == block


def test_strict_layout_keeps_the_probe_block() -> None:
    """Strict writes what our probe saw, whatever the repository's check would have."""
    got = official_c2(CU2, 1, C2Variant(failed_exit="unavailable"))
    o = Outcome(repo="r/x", target="local://", tier="c2", status="passed", compat=got.passed,
                evidence={"observed": CU2, "official_cuda": {"written": got.written,
                                                             "observed": got.observed}})
    assert stage_results(o, "strict")["observed"]["cuda_available"] is True  # type: ignore[index]


@pytest.mark.parametrize(("how", "run"), [
    ("no_python", dict(python=False, exit_code=None, timed_out=False, stdout="", stderr="")),
    ("timeout", dict(python=True, exit_code=None, timed_out=True, stdout="", stderr="")),
    ("missing", dict(python=True, exit_code=127, timed_out=False, stdout="",
                     stderr="cannot start: [Errno 2] No such file or directory: '/x'")),
    ("not_executable", dict(python=True, exit_code=127, timed_out=False, stdout="",
                            stderr="cannot start: [Errno 13] Permission denied: '/x'")),
    ("missing", dict(python=True, exit_code=127, timed_out=False, stdout="",
                     stderr='OCI runtime exec failed: exec failed: unable to start container '
                            'process: exec: "/x": stat /x: no such file or directory')),
    ("crashed", dict(python=True, exit_code=-6, timed_out=False, stdout="", stderr="")),
    ("failed", dict(python=True, exit_code=3, timed_out=False, stdout="", stderr="nope")),
    ("silent", dict(python=True, exit_code=0, timed_out=False, stdout="", stderr="")),
    ("garbage", dict(python=True, exit_code=0, timed_out=False, stdout="3.11.7\n", stderr="")),
], ids=lambda v: v if isinstance(v, str) else "")
def test_how_a_probe_gave_no_answer(how: Situation, run: dict[str, Any]) -> None:
    assert situation(**run) == how


RECORDS: list[tuple[str, C2Variant, Situation, Any]] = [
    ("majority_crash_writes_nothing", C2Variant(), "crashed", None),
    ("majority_no_python_runtime", C2Variant(), "no_python", ("failure", "runtime", False, 0)),
    ("category_and_false", C2Variant(missing="deps"), "missing", ("failure", "deps", False, 0)),
    ("empty_block", C2Variant(silent="runtime:empty"), "silent",
     ("failure", "runtime", "absent", "absent")),
    ("no_block", C2Variant(timeout="timeout:none"), "timeout",
     ("failure", "timeout", "absent", "absent")),
    ("null_block", C2Variant(failed="runtime:null"), "failed", ("failure", "runtime", None, None)),
    ("a_pass_on_nothing", C2Variant(garbage="success:empty"), "garbage",
     ("success", None, "absent", "absent")),
]


@pytest.mark.parametrize(("variant", "how", "written"), [r[1:] for r in RECORDS],
                         ids=[r[0] for r in RECORDS])
def test_the_record_of_an_unanswered_probe(variant: C2Variant, how: Situation,
                                           written: Any) -> None:
    got = official_c2(None, None, variant, how)
    o = Outcome(repo="r/x", target="local://", tier="c2", category="entrypoint_not_found",
                status="passed" if got.passed else "failed", compat=got.passed,
                evidence={"observed": None, "official_cuda": got.evidence()})
    data = stage_results(o, "compat")
    if written is None:
        assert data is None
        return
    assert data is not None
    observed = data.get("observed")
    block = observed if isinstance(observed, dict) else {}
    assert (data["status"], data["failure_category"], block.get("cuda_available", "absent"),
            block.get("gpu_count", "absent")) == written
    assert ("observed" in data) is (observed is not None)


def test_a_cuda_stage_that_never_ends_stops_the_official_run(tmp_path: Any) -> None:
    """The checks that import torch in their own process, with no timeout, never end on an
    interpreter whose import hangs: no stage after cuda is written, the validator's neither."""
    hang = official_c2(None, None, C2Variant(), "timeout")
    assert hang.hangs and not hang.written
    stages = [Outcome(repo="r/x", target="t", tier=t, status="passed", compat=True)
              for t in ("c1", "c3", "c4", "c5")]
    stages.append(Outcome(repo="r/x", target="t", tier="c2", status="failed", compat=False,
                          category="timeout", evidence={"official_cuda": hang.evidence()}))
    [job] = write_layout(tmp_path, stages, run_id="r", mode="compat", commits={})
    written = {p.parent.name for p in (job / "benchmark" / "build_output").glob("*/results.json")}
    assert written == {"cpu"}
    [strict] = write_layout(tmp_path / "s", stages, run_id="r", mode="strict", commits={})
    assert (strict / "benchmark" / "build_output" / "hallucination" / "results.json").exists()
