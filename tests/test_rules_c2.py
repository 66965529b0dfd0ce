"""How C2 is decided (``rules/c2.decide``), over evidence records: one row per strict rule
in its order of blame (a patched ``is_available()``, a kernel that disagrees, a build
without the card's architecture, no GPU held in the host's sight), and the official check
beside them.  The recorded real runs keep no probe observation to replay; the probe's
parsing and ``judge`` are also covered by tests/test_c2_cuda.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.outcomes import exec_result

from pytest_reb.rules.c2 import CudaEvidence, decide
from pytest_reb.variants import C2Variant

DEVICE = {"index": 0, "name": "H100", "capability": "9.0"}
GOOD = {"framework": "torch", "cuda_available": True, "gpu_count": 1, "devices": [DEVICE],
        "arch_list": ["sm_90"], "kernel": {"ok": True, "op": "matmul"}}
HELD = {7: [0]}


@pytest.mark.parametrize(("obs", "holders", "rc", "strict_category", "compat"), [
    (GOOD, HELD, 0, None, True),
    ({**GOOD, "spoof": ["device_count() is 0"]}, {}, 0, "cuda_spoofed", True),
    ({**GOOD, "kernel": {"ok": False, "error": "bad"}}, HELD, 0, "kernel_mismatch", True),
    ({**GOOD, "arch_list": ["sm_80"]}, HELD, 0, "arch_unsupported", True),
    (GOOD, {}, 0, "no_gpu_evidence", True),
    ({"framework": "torch", "cuda_available": False, "gpu_count": 0}, {}, 0,
     "cuda_unavailable", False),
    ({"framework": "none", "torch_error": "No module named 'torch'"}, {}, 3, "deps", False),
    (None, {}, 1, "runtime", False),
], ids=["honest", "spoofed", "kernel-mismatch", "arch", "no-holder", "unavailable",
        "no-framework", "no-output"])
def test_strict_rules_and_the_official_check(obs: dict[str, Any] | None,
                                             holders: dict[int, list[int]], rc: int,
                                             strict_category: str | None, compat: bool) -> None:
    ev = CudaEvidence(obs, exec_result(holders, rc=rc), 1)
    strict = decide(ev, "strict")
    assert (strict.strict, strict.compat, strict.category) == (
        strict_category is None, compat, strict_category)
    assert decide(ev, "compat").passed is compat


def test_the_repository_own_check_decides_compat() -> None:
    no_device = {**GOOD, "gpu_count": 0, "devices": []}
    ev = CudaEvidence(no_device, exec_result(HELD), 0)
    assert decide(ev, "compat").passed
    strict_variant = CudaEvidence(no_device, exec_result(HELD), 0, C2Variant(no_device="fails"))
    assert not decide(strict_variant, "compat").passed
