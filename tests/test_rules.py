"""Pure rules of the core, on recorded evidence: no Docker, no GPU.

The GPU evidence rules decide C2-C4 in strict mode; they are fed here with
``ExecResult``s shaped like what the host records (see docs/gpu.md for the
real ones from an H200).
"""

from __future__ import annotations

import pytest

from pytest_reb.spec import Retry, Run, torchrun
from pytest_reb.target import ExecResult, TailBuffer, cuda_visible
from pytest_reb.tiers.c2_cuda import judge, parse
from pytest_reb.tiers.ext_sweep import arch_supported
from pytest_reb.tiers.gpu_rules import distinct_ranks, gpu_work, held_any_gpu
from pytest_reb.tiers.stage_messages import categorise

CHANNEL = "host NVML compute contexts"


def result(holders: dict[int, list[int]], *, channel: str | None = CHANNEL, rc: int = 0,
           out: str = "", err: str = "", **kw: object) -> ExecResult:
    return ExecResult(["x"], rc, out, err, 1.0, gpu_holders=holders,
                      gpu_evidence_channel=channel, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- C3 / C4


def test_c3_needs_a_holder() -> None:
    assert held_any_gpu(result({12: [0]})) is None
    assert "silent CPU fallback" in str(held_any_gpu(result({})))
    assert "unproven" in str(held_any_gpu(result({12: [0]}, channel=None)))


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
    ddp, device_map = gpu_work(2), gpu_work(2, one_process=True)
    assert ddp(result({1: [0], 2: [1]}, gpu_compute=BUSY)) is None
    assert "only 1 process" in str(ddp(result({1: [0], 2: [0]}, gpu_compute=BUSY)))
    assert "only 1 process" in str(ddp(result({1: [0, 1]}, gpu_compute=BUSY)))
    assert device_map(result({1: [0, 1]}, gpu_compute=BUSY)) is None
    assert "no process held 2 GPUs" in str(device_map(result({1: [0], 2: [1]},
                                                             gpu_compute=BUSY)))


# --------------------------------------------------------------------------- C2


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


# --------------------------------------------------------------------------- categories


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
    res = result({}, rc=rc, **kw)  # type: ignore[arg-type]
    assert categorise(res) == category


# --------------------------------------------------------------------------- pieces


def test_tail_buffer_keeps_the_end_and_counts_everything() -> None:
    buf = TailBuffer(limit=10)
    for _ in range(1000):
        buf.feed(b"0123456789abc")
    assert buf.total == 13000
    assert buf.text().endswith("456789abc") and "12990 earlier bytes not kept" in buf.text()


@pytest.mark.parametrize(("env", "lease", "visible"), [
    ({}, [], ""),
    ({"CUDA_VISIBLE_DEVICES": "0,1"}, ["3", "5"], "3,5"),
    ({"CUDA_VISIBLE_DEVICES": "1"}, ["3", "5"], "5"),
    ({}, ["2"], "2"),
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, ["4"], "4"),   # asks for more than leased: the lease
])
def test_cuda_visible_maps_logical_ids_through_the_lease(env: dict[str, str], lease: list[str],
                                                          visible: str) -> None:
    assert cuda_visible(env, lease) == visible


def test_run_log_rules_and_retry() -> None:
    run = Run(["x"], expect_log=["TRAIN_OK"], reject_log=["Traceback"],
              retry=Retry(when="mutually exclusive", run=Run(["y"])))
    assert run.judge_log("TRAIN_OK") is None
    assert "expected log marker" in str(run.judge_log("done"))
    assert "failure pattern" in str(run.judge_log("TRAIN_OK\nTraceback (most recent"))
    assert run.retry_for("sampler option is mutually exclusive with shuffle") == Run(["y"])
    assert run.retry_for("other") is None


def test_torchrun_launcher_shape() -> None:
    run = torchrun("train.py", "--x", nproc=4)
    assert list(run.argv) == ["{python}", "-m", "torch.distributed.run", "--standalone",
                              "--nproc_per_node=4", "train.py", "--x"]
    assert (run.launcher, run.nproc, run.min_gpus) == ("torchrun", 4, 4)


def test_values_in_a_shell_script_are_quoted() -> None:
    import shlex

    from pytest_reb.audit.report import ReportLoad
    from pytest_reb.context import Context
    from pytest_reb.spec import Repo
    from pytest_reb.tiers.entrypoint import _command, places

    evil = "/x; touch /tmp/pwned; y/bin/python"
    ctx = Context(repo=Repo("a/b", commit="0" * 40), target_name="t", connect=lambda: None,  # type: ignore[arg-type,return-value]
                  read_report=lambda: ReportLoad("r"), python_override=evil)
    run = Run(["{python}", "-m", "torch.distributed.run", "--no_python", "bash", "-lc",
               "timeout 8s {python} -m x --out {out}/r"])
    argv = _command(run, ctx, places(ctx, "/tmp/o"))
    assert argv[0] == evil  # an argv element: no shell reads it
    assert shlex.split(argv[-1]) == ["timeout", "8s", evil, "-m", "x", "--out", "/tmp/o/r"]


def test_gc_spares_makers_it_cannot_check() -> None:
    import os
    import socket

    from pytest_reb.housekeeping import _owner_alive

    here = socket.gethostname()
    assert _owner_alive(f"{here}:{os.getpid()}")
    assert not _owner_alive(f"{here}:{2**22 + 12345}")   # no such pid: an orphan
    assert _owner_alive("some-other-host:1")             # a shared engine's other client
    assert not _owner_alive("")
