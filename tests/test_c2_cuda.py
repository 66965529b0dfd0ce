"""C2's verdict from its probe's observation (``pyramid/c2_cuda.py``: ``judge``, ``parse``) and
which GPU architectures a build's cubins and PTX serve (``rules/c2.arch_supported``).
"""

from __future__ import annotations

import pytest

from pytest_reb.pyramid.c2_cuda import parse
from pytest_reb.rules.c2 import arch_supported, judge


@pytest.mark.parametrize(("cap", "archs", "ok"), [
    ("9.0", ["sm_80", "sm_90"], True),
    ("9.0", ["sm_80", "sm_86"], False),        # cubins of another major: no
    ("8.6", ["sm_80"], True),                  # same major, lower minor: yes
    ("8.0", ["sm_86"], False),                 # same major, higher minor: no
    ("9.0", ["sm_70", "compute_70"], True),    # PTX is compiled by the driver
    ("7.5", ["compute_80"], False),
    ("9.0", ["sm_90a"], True),
])
def test_arch_supported(cap: str, archs: list[str], ok: bool) -> None:
    assert arch_supported(cap, archs) is ok


def good_obs(**over: object) -> dict[str, object]:
    obs: dict[str, object] = {
        "framework": "pytorch", "cuda_available": True, "gpu_count": 1,
        "arch_list": ["sm_90"], "devices": [{"index": 0, "name": "H200", "capability": "9.0"}],
        "kernel": {"ok": True, "max_rel_error": 0.0}}
    obs.update(over)
    return obs


def test_c2_judge_orders_its_reasons() -> None:
    assert judge(good_obs(), None)[:2] == (True, None)
    assert judge(None, None)[1] == "runtime"
    assert judge(good_obs(framework="none", torch_error="ModuleNotFoundError"), None)[1] == "deps"
    assert judge(good_obs(cuda_available=False), None)[1] == "cuda_unavailable"
    assert judge(good_obs(kernel={"ok": False, "error": "no kernel image"}), None)[1] == \
        "kernel_mismatch"
    assert judge(good_obs(arch_list=["sm_70"]), None)[1] == "arch_unsupported"
    spoofed = judge(good_obs(), "no process of the run ever held a GPU")
    assert spoofed[:2] == (False, "no_gpu_evidence")


def test_c2_parse_takes_the_last_marker_line() -> None:
    out = 'REB_CUDA_PROBE {"cuda_available": true}\nnoise\nREB_CUDA_PROBE {"cuda_available": false}'
    assert parse(out) == {"cuda_available": False}
    assert parse("REB_CUDA_PROBE not-json\n") is None
    assert parse("REB_CUDA_PROBE [1]") is None
