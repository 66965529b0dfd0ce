"""The official failure category of a stage's result (``rules/stage_messages.categorise``):
timeout, OOM, missing dependency, CUDA, entrypoint, process limit, architecture, runtime.
"""

from __future__ import annotations

import pytest
from support.outcomes import exec_result

from pytest_reb.rules.stage_messages import categorise


@pytest.mark.parametrize(("kw", "category"), [
    ({"timed_out": True, "rc": 124}, "timeout"),
    ({"oom_killed": True, "rc": 137}, "oom"),
    ({"err": "ModuleNotFoundError: No module named 'yaml'", "rc": 1}, "deps"),
    ({"err": "ImportError: x.so: undefined symbol: _ZN3c10", "rc": 1}, "deps"),
    ({"err": "AssertionError: Torch not compiled with CUDA enabled", "rc": 1},
     "cuda_unavailable"),
    ({"err": "python: can't open file '/r/train.py': [Errno 2] No such file or directory",
      "rc": 2}, "entrypoint_not_found"),
    ({"err": "BlockingIOError: [Errno 11] Resource temporarily unavailable", "rc": 1},
     "pids_limit"),
    ({"err": "ValueError: bad shape", "rc": 1}, "runtime"),
    ({"err": "FileNotFoundError: [Errno 2] No such file or directory: 'ffmpeg'", "rc": 1},
     "runtime"),  # a missing tool is the environment's failure; the diagnosis names it
    ({"err": "CUDA error: no kernel image is available for execution on the device", "rc": 1},
     "arch_unsupported"),
    ({"rc": 137}, "oom"),
])
def test_categorise(kw: dict[str, object], category: str) -> None:
    rc = kw.pop("rc")
    res = exec_result({}, rc=rc, **kw)  # type: ignore[arg-type]
    assert categorise(res) == category
