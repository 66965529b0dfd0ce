"""The honest GPU workload family and the two attribution attacks, replayed from the GPU machine.

``tests/gpu/run_family.py`` ran strict C3 on every workload of
``tests/gpu/workloads_repo.py`` (frameworks and launch patterns research code
uses, written for no rule) and on the two attacks of ``tests/gpu/attacks.py``,
through ``--reb-host=local://`` on a lent H100/H200; ``tests/gpu/keep_records.py``
kept the verdicts and the GPU evidence in ``tests/data/gpu/family.json``
(docs/gpu.md).  Here the recorded evidence goes through the decision again:
the context holders and the GPU's counters through ``gpu_problem``, so a later
change of that rule that would fail an honest workload fails here, without a
GPU; and every workload of the family must have a record.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.rules.entrypoint_stage import GpuNeed, gpu_problem
from pytest_reb.targets import ExecResult

sys.path.insert(0, str(Path(__file__).parent / "gpu"))
from workloads_repo import ATTACKS, WORKLOADS  # tests/gpu is not a package

DATA = json.loads((Path(__file__).parent / "data" / "gpu" / "family.json").read_text())
RECORDS = {o["workload"]: o for o in DATA["outcomes"]}
EARLIER = DATA["earlier"]
HONEST = sorted(WORKLOADS)


def replayed(o: dict[str, Any]) -> tuple[str, str] | None:
    """What ``gpu_problem`` makes of the recorded holders and counters."""
    ev = o["evidence"]
    compute = {k: v for k, v in ev["gpu_compute"].items() if k != "sm_active_min_ms"}
    holders = {int(pid): gpus for pid, gpus in ev["gpu_holders"].items()}
    return gpu_problem(GpuNeed(1), ExecResult(["x"], 0, "", "", 1.0, gpu_holders=holders,
                                  gpu_compute=compute,
                                  gpu_evidence_channel=ev.get("gpu_evidence_channel", "")))


def test_every_workload_and_attack_has_a_record() -> None:
    assert set(WORKLOADS) | set(ATTACKS) <= set(RECORDS), sorted(set(WORKLOADS) - set(RECORDS))


@pytest.mark.parametrize("name", HONEST)
def test_honest_workload_passed_strict_c3(name: str) -> None:
    o = RECORDS[name]
    assert (o["status"], o["strict"], o["compat"]) == ("passed", True, True), o.get("message")


@pytest.mark.parametrize("name", HONEST)
def test_honest_workloads_counters_replay_to_a_pass(name: str) -> None:
    assert replayed(RECORDS[name]) is None


def test_a_served_request_can_read_as_no_gpu_compute() -> None:
    """The server's first run: one request to a 16-64-1 MLP, 0 ms SM-active over 4.6 s, so
    strict C3 failed it ``no_gpu_compute``; its second run passed.  The floor's sampling
    misses a workload that small (docs/gpu.md); the replay gives the recorded verdict."""
    (first,) = [o for o in EARLIER if o["workload"] == "http_server"]
    assert (first["category"], first["compat"]) == ("no_gpu_compute", True)
    assert (replayed(first) or ("", ""))[0] == "no_gpu_compute"


def test_the_borrowed_name_attack_fails_strict_c3_as_foreign_code() -> None:
    """A hook, made to look installed, runs a burst compiled under train.py's name: the
    witness sees code made under the checkout's name by foreign code."""
    o = RECORDS["attack_borrowed_name"]
    assert (o["status"], o["category"], o["strict"], o["compat"]) == \
        ("failed", "entrypoint_not_run", False, True)
    assert "code made under the checkout's name by foreign code" in o["message"]


def test_the_edited_optimizer_attack_fails_strict_c3_as_work_not_the_entrypoints() -> None:
    """The installed sgd.py, edited: CUDA reads absent to the entrypoint (it trains on the CPU)
    and every optimizer step, called from its own code, runs a burst on the GPU.  The burst
    computed (exit 0, the counters show work) and its launches came from an exec'd string."""
    o = RECORDS["attack_edited_optimizer"]
    assert (o["status"], o["category"], o["strict"], o["compat"], o["exit_code"]) == \
        ("failed", "gpu_work_not_entrypoint", False, True, 0)
    assert "<string>" in o["message"]


def test_the_edited_optimizer_attacks_earlier_record_broke_its_own_run() -> None:
    """Its first run (an H200): the burst raised ``invalid argument to exchangeDevice`` with
    CUDA hidden, so it tested nothing; ``attacks.py`` now lets the burst see CUDA as it is."""
    (first,) = [o for o in EARLIER if o["workload"] == "attack_edited_optimizer"]
    assert (first["category"], first["strict"], first["compat"], first["exit_code"]) == \
        ("runtime", False, False, 1)
