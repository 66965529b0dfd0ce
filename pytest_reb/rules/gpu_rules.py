"""What strict C3 and C4 require of the GPU beyond exit 0: contexts held, and work done.

Two steps, each with its own category, because they fail for different reasons:

* ``no_gpu_evidence``: no process of the run ever held a CUDA context on the
  GPU (a silent CPU fallback); for C4, fewer ranks than needed held one each.
* ``no_gpu_compute``: contexts were held, but the GPU's SMs did (almost)
  nothing: a context made to look busy, a token kernel, then the CPU.  Read
  from the GPU's own counters (``gpu_compute``), which the target cannot
  write; the threshold and its margins are measured in docs/gpu.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.spec import Run
from pytest_reb.targets import ExecResult

#: SM-active time (ms, averaged over all SMs) a run's GPU must show: a floor against a GPU
#: that did nothing, not a judge of how much work is enough. Calibrated on the H200 on a
#: family of honest micro-workloads not written for the rule (tests/gpu/micro_workloads.py:
#: one and two optimiser steps of an MLP, a conv net and a transformer block, batch-1
#: inference, fp32 and bf16): the smallest, one step of a 16-32-1 MLP in bf16, showed
#: 0.00038 ms, 2.9x the floor; a context alone 0.0000028 ms, one elementwise kernel
#: 0.000029, one cuBLAS matmul 0.000046, 2.8x below it and more (docs/gpu.md). Work that is
#: real but not the entrypoint's (a hundred token kernels, 0.0004 ms, reads like one honest
#: step) is for the startup-hook rule and the integrity verdict to catch, not for volume.
SM_ACTIVE_MIN_MS = 0.00013

#: (category, message) when a rule fails.
Problem = tuple[str, str]
EvidenceRule = Callable[[ExecResult], Problem | None]


def held_any_gpu(res: ExecResult) -> str | None:
    """Some process of the run held a CUDA context (C2's probe and C3's first step)."""
    if res.gpu_evidence_channel is None:
        return "this target gives no host-side view of its processes, so GPU use is unproven"
    if not res.gpu_holders:
        return "exit 0, but no process of the run ever held a GPU (a silent CPU fallback?)"
    return None


def distinct_ranks(holders: Mapping[int, list[int]], need: int) -> int:
    """How many processes can each be given a GPU of their own (a bipartite matching)."""
    owner: dict[int, int] = {}

    def assign(pid: int, seen: set[int]) -> bool:
        for gpu in holders.get(pid, ()):
            if gpu in seen:
                continue
            seen.add(gpu)
            if gpu not in owner or assign(owner[gpu], seen):
                owner[gpu] = pid
                return True
        return False

    count = 0
    for pid in holders:
        if assign(pid, set()):
            count += 1
            if count >= need:
                break
    return count


def computed(compute: Mapping[str, Any]) -> tuple[set[int], dict[int, str]]:
    """GPUs whose counters show the run's work, and why each other one does not."""
    good: set[int] = set()
    why: dict[int, str] = {}
    foreign = compute.get("foreign") or {}
    for key, gpu in compute.items():
        if not key.isdigit() or not isinstance(gpu, Mapping):
            continue
        index = int(key)
        others = sorted(int(p) for p, gpus in foreign.items() if index in gpus)
        gpm = gpu.get("gpm") or {}
        active = gpm.get("sm_active_ms")
        if others:
            why[index] = (f"processes outside the run ({others[:3]}) used GPU {index} at the same "
                          "time, so its counters are not the run's")
        elif active is None:
            why[index] = (f"GPU {index}'s performance counters could not be read "
                          f"({gpu.get('gpm_error') or 'no GPM'}), so its work is unproven")
        elif active < SM_ACTIVE_MIN_MS:
            why[index] = (f"GPU {index}'s SMs were active {active:.2g} ms over "
                          f"{gpu.get('interval_s', 0):.1f} s (a real run shows at least "
                          f"{SM_ACTIVE_MIN_MS} ms)")
        else:
            good.add(index)
    return good, why


def gpu_work(need: int = 1, *, one_process: bool = False) -> EvidenceRule:
    """C3 (``need`` 1) and C4: ``need`` ranks held a GPU each, and those GPUs computed.

    ``one_process``: a ``device_map`` run, where one process must hold and use
    ``need`` GPUs.
    """

    def rule(res: ExecResult) -> Problem | None:
        problem = held_any_gpu(res)
        if problem:
            return "no_gpu_evidence", problem
        holders = res.gpu_holders
        if one_process:
            best = max((len(g) for g in holders.values()), default=0)
            if best < need:
                return "no_gpu_evidence", (f"exit 0, but no process held {need} GPUs (most "
                                           f"held by one: {best})")
        elif distinct_ranks(holders, need) < need:
            return "no_gpu_evidence", (
                f"exit 0, but only {distinct_ranks(holders, need)} process(es) held a GPU of "
                f"their own; {need} ranks were expected")
        if not res.gpu_compute or "error" in res.gpu_compute:
            return "no_gpu_compute", ("exit 0 and a CUDA context, but the host could not read "
                                      "what the GPU computed: "
                                      f"{res.gpu_compute.get('error', 'no counters')}")
        good, why = computed(res.gpu_compute)
        working = {pid: [g for g in gpus if g in good] for pid, gpus in holders.items()}
        got = (max((len(g) for g in working.values()), default=0) if one_process
               else distinct_ranks(working, need))
        if got >= need:
            return None
        held = sorted({g for gpus in holders.values() for g in gpus})
        reasons = "; ".join(why[g] for g in held if g in why) or "no held GPU was metered"
        return "no_gpu_compute", (
            f"exit 0 and a CUDA context on GPU(s) {held}, but only {got} of the {need} needed "
            f"did real work: {reasons}. A context or a token kernel, and the work on the CPU?")

    return rule


def figures(res: ExecResult) -> dict[str, Any]:
    """The compute figures an outcome keeps, with the threshold they were judged against."""
    return {**res.gpu_compute, "sm_active_min_ms": SM_ACTIVE_MIN_MS}


def hardware_gate(ctx: Context, tier: str, run: Run, minimum: int) -> Outcome | None:
    """``insufficient_hardware`` before running, when the target has too few GPUs."""
    need = max(minimum, run.min_gpus)
    have = len(ctx.target.gpus)
    if have >= need:
        return None
    return ctx.verdict(ctx.outcome(
        tier, category="insufficient_hardware", strict=False, compat=False,
        message=f"needs {need} GPU(s), the target has {have}",
        evidence={"gpus_needed": need, "gpus_available": have}))

