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
from support.outcomes import replayed_gpu_problem

from pytest_reb.evidence import gpu_compute

sys.path.insert(0, str(Path(__file__).parent / "gpu"))
from workloads_repo import ATTACKS, WORKLOADS  # tests/gpu is not a package

DATA = json.loads((Path(__file__).parent / "data" / "gpu" / "family.json").read_text())
RECORDS = {o["workload"]: o for o in DATA["outcomes"]}
EARLIER = DATA["earlier"]
HONEST = sorted(WORKLOADS)


def replayed(o: dict[str, Any]) -> tuple[str, str] | None:
    return replayed_gpu_problem(o["evidence"])


def test_every_workload_and_attack_has_a_record() -> None:
    assert set(WORKLOADS) | set(ATTACKS) <= set(RECORDS), sorted(set(WORKLOADS) - set(RECORDS))


@pytest.mark.parametrize("name", HONEST)
def test_honest_workload_passed_strict_c3(name: str) -> None:
    o = RECORDS[name]
    assert (o["status"], o["strict"], o["compat"]) == ("passed", True, True), o.get("message")


@pytest.mark.parametrize("name", HONEST)
def test_honest_workloads_counters_replay_to_a_pass(name: str) -> None:
    assert replayed(RECORDS[name]) is None


def test_a_served_request_read_zero_until_the_meter_waited_for_gpm() -> None:
    """The server answers one request to a 16-64-1 MLP and is stopped.  Twice its end GPM
    sample followed the command at once and read 0 ms SM-active, so strict C3 failed it
    ``no_gpu_compute``; with the meter's wait (``GPM_SETTLE_S``) it passes."""
    first = [o for o in EARLIER if o["workload"] == "http_server" and o["status"] == "failed"]
    assert len(first) == 2
    for o in first:
        assert (o["category"], o["compat"]) == ("no_gpu_compute", True)
        assert o["evidence"]["gpu_compute"]["0"]["gpm"]["sm_active_ms"] == 0
        assert (replayed(o) or ("", ""))[0] == "no_gpu_compute"
    assert RECORDS["http_server"]["status"] == "passed"


def test_the_meter_waits_past_the_lag_gpm_showed() -> None:
    """``tests/gpu/gpm_lag.py`` on the H200: every round read 0 until the end sample came
    0.2 s after the work; the meter waits at least twice the shortest delay that read it."""
    table = (Path(__file__).parent / "data" / "gpu" / "gpm_lag.txt").read_text()
    rows = [line.split() for line in table.splitlines()
            if line.strip() and line.split()[0][0].isdigit()]
    seen = min(float(delay) for delay, _median, _min, zero in rows if zero == "0")
    assert all(float(m) == 0 for delay, m, _min, _zero in rows if float(delay) < seen)
    assert 2 * seen <= gpu_compute.GPM_SETTLE_S


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
    # ``earlier`` keeps each workload's replaced records in the order they were made
    first = next(o for o in EARLIER if o["workload"] == "attack_edited_optimizer")
    assert (first["category"], first["strict"], first["compat"], first["exit_code"]) == \
        ("runtime", False, False, 1)
