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

from pytest_reb.rules.c2 import CudaEvidence, decide, sweep_wanted
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


PYTORCH = {**GOOD, "framework": "pytorch", "cuda_build": "12.8"}
CPU_BUILD = {"framework": "pytorch", "cuda_build": None, "cuda_available": False, "gpu_count": 0}
NO_CUDA = {**CPU_BUILD, "cuda_build": "12.8"}


@pytest.mark.parametrize(("obs", "holders", "rc", "gpus", "after", "swept", "why"), [
    (PYTORCH, HELD, 0, 1, True, False, "C3 or C4 of this run loads"),
    (PYTORCH, HELD, 0, 1, False, True, "no later tier of this run loads"),
    (CPU_BUILD, {}, 0, 0, True, False, "a CPU-only build"),
    (CPU_BUILD, {}, 0, 1, False, False, "a CPU-only build"),
    (NO_CUDA, {}, 0, 0, False, False, "no GPU on the target"),
    (NO_CUDA, {}, 0, 1, True, True, "a CUDA build found no CUDA"),
    ({**PYTORCH, "arch_list": ["sm_80"]}, HELD, 0, 1, False, False, "(arch_unsupported)"),
    ({**PYTORCH, "spoof": ["device_count() is 0"]}, {}, 0, 1, False, False, "(cuda_spoofed)"),
    (PYTORCH, {}, 0, 1, False, False, "(no_gpu_evidence)"),
    ({"framework": "none", "torch_error": "libc10.so: cannot open"}, {}, 3, 1, True, True,
     "the probe did not reach CUDA"),
    (None, {}, 139, 0, True, True, "the probe did not reach CUDA"),
], ids=["passed-c3-after", "passed-alone", "cpu-build", "cpu-build-gpu-target", "no-gpu",
        "cuda-build-no-cuda", "arch", "spoofed", "no-holder", "no-framework", "crashed"])
def test_the_default_sweep_runs_where_nothing_else_explains(
        obs: dict[str, Any] | None, holders: dict[int, list[int]], rc: int, gpus: int,
        after: bool, swept: bool, why: str) -> None:
    """``--reb-ext-sweep=auto``: a diagnosis, run for a C2 failure its probe cannot name, or
    for a passing C2 with no C3 or C4 of the run to load the code on the GPU."""
    ev = CudaEvidence(obs, exec_result(holders, rc=rc), gpus)
    got, reason = sweep_wanted(ev, "auto", after)
    assert got is swept and why in reason, reason
    assert sweep_wanted(ev, "always", after)[0] and not sweep_wanted(ev, "never", after)[0]


def test_a_probe_past_its_deadline_is_swept() -> None:
    ev = CudaEvidence(None, exec_result({}, rc=-9, timed_out=True), 1)
    assert sweep_wanted(ev, "auto", True) == (
        True, "the probe did not reach CUDA: which compiled module fails to load?")
