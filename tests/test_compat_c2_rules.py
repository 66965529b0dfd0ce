"""Compat C2 per repository: the official cuda check's verdict and block, table-driven.

The cases are the runs of ``tools/compat_c2_differential.py`` that the
majority rule got wrong (CI cannot fetch the official release): a patched
``is_available()`` with no device, a probe that printed success and exited 1,
no framework, and an interpreter that could not run the check at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_reb.outcome import Outcome
from pytest_reb.report.official import stage_results
from pytest_reb.rules.c2_compat import C2Variant, official_c2

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
