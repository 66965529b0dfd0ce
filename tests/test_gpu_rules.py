"""The GPU evidence rules that decide C3 and C4 in strict mode (``rules/entrypoint_stage.py``), fed
``ExecResult``s shaped like what the host records (docs/gpu.md has real ones from an H200).
"""

from __future__ import annotations

from functools import partial

import pytest
from support.outcomes import exec_result

from pytest_reb.rules.entrypoint_stage import (
    GpuNeed,
    distinct_ranks,
    gpu_problem,
    held_any_gpu,
)


def test_c3_needs_a_holder() -> None:
    assert held_any_gpu(exec_result({12: [0]})) is None
    assert "silent CPU fallback" in str(held_any_gpu(exec_result({})))
    assert "unproven" in str(held_any_gpu(exec_result({12: [0]}, channel=None)))


@pytest.mark.parametrize(("holders", "ranks"), [
    ({1: [0], 2: [1]}, 2),            # DDP: each rank on its own GPU
    ({1: [0], 2: [0]}, 1),            # two ranks, one GPU: only one can own it
    ({1: [0, 1], 2: [0, 1]}, 2),      # each rank touched both: still a matching of two
    ({1: [0, 1]}, 1),                 # one process, two GPUs
    ({1: [0], 2: [0, 1], 3: [1]}, 2),
    ({}, 0),
])
def test_distinct_ranks_is_a_matching(holders: dict[int, list[int]], ranks: int) -> None:
    assert distinct_ranks(holders, 8) == ranks


#: What the GPU counters show for two GPUs that both did real work (figures as on an H200).
BUSY = {"0": {"interval_s": 9.9, "gpm": {"sm_active_ms": 0.0095}},
        "1": {"interval_s": 9.9, "gpm": {"sm_active_ms": 0.012}}}


def test_c4_rule_for_ddp_and_for_device_map() -> None:
    ddp = partial(gpu_problem, GpuNeed(2))
    device_map = partial(gpu_problem, GpuNeed(2, one_process=True))
    assert ddp(exec_result({1: [0], 2: [1]}, gpu_compute=BUSY)) is None
    assert "only 1 process" in str(ddp(exec_result({1: [0], 2: [0]}, gpu_compute=BUSY)))
    assert "only 1 process" in str(ddp(exec_result({1: [0, 1]}, gpu_compute=BUSY)))
    assert device_map(exec_result({1: [0, 1]}, gpu_compute=BUSY)) is None
    assert "no process held 2 GPUs" in str(device_map(exec_result({1: [0], 2: [1]},
                                                             gpu_compute=BUSY)))
