"""How C1, C3 and C4 are decided: one pure function over what their stage saw.

The stage (``pyramid/entrypoint.py``) runs the repository's entrypoint and
gathers an ``EntrypointEvidence`` record; ``decide`` gives strict and compat,
the category and the message, with no target or context in reach.  Compat is
the official rule: exit 0 within the timeout (and the run's log rules).
Strict also needs, in this order of blame:

* ``integrity``: the checkout the run read is the pinned commit's, before and
  after the run (``integrity_verdict.Verdict.stage_problem``);
* ``entrypoint_not_run``: the witness's proof that the entrypoint's own code
  ran, and finished where the run finishes (``pyramid/witnessing.py``);
* C3/C4 only, ``no_gpu_evidence``: a process of the run held a CUDA context on
  the GPU (a silent CPU fallback holds none); for C4, enough ranks each held
  one of their own;
* C3/C4 only, ``no_gpu_compute``: those GPUs' own counters show real work,
  not a context made to look busy or a token kernel (``evidence/gpu_compute.py``
  reads them; the floor and its margins are measured in docs/gpu.md);
* C3/C4 only, ``gpu_work_not_entrypoint``: the witness saw the GPU work
  launched by the entrypoint's code, not by a startup hook.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_reb.rules.decision import Decision, Mode, decided
from pytest_reb.rules.stage_messages import COMMAND_MAX, categorise, clip, diagnosis_of, failed
from pytest_reb.spec import Run

if TYPE_CHECKING:  # records the stage hands over; rules never reach a target
    from pytest_reb.targets.base import Profile
    from pytest_reb.targets.result import ExecResult
    from pytest_reb.witness import Expect

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


@dataclass(frozen=True)
class EntrypointEvidence:
    """What one C1/C3/C4 stage saw, gathered by ``pyramid/entrypoint.run_stage``.

    Every field is an observation made before the decision, read from outside the
    target where that matters; none is a verdict of this tier.  ``run`` is the run
    judged (its retry, when the first attempt asked for one).
    """

    tier: str
    profile: Profile
    run: Run
    #: what the host saw of the command (exit, clock, limits, GPU holders and counters)
    res: ExecResult
    #: a setup step or a run-time value that failed before the command ran: (category, why)
    early: Problem | None = None
    #: why the checkout the run read is not the pinned commit's (before or after the run)
    tampered: str | None = None
    #: why a file the run loaded is not the checkout's, an installed distribution's or the
    #: standard library's (``rules/loaded.py``, on the kernel's report of opened files)
    loaded: str | None = None
    #: why the witness cannot take the run as the entrypoint's own (``StageWitness.problem``)
    witness: str | None = None
    #: why the GPU work was not launched by the entrypoint's code (``StageWitness.gpu_problem``)
    attribution: str | None = None
    #: C3/C4: what the GPUs must show; None for C1
    gpu: GpuNeed | None = None
    #: for a pass's line: what the witness required, the interpreter, the checkout, the
    #: run's scaled timeout and how many setup steps ran
    expect: Expect | None = None
    python: str = "python"
    checkout: str = ""
    timeout: float = 0.0
    setup_steps: int = 0


def decide(ev: EntrypointEvidence, mode: Mode) -> Decision:
    """Strict and compat of a C1/C3/C4 stage, the category that names a failure first, its
    message and diagnosis (see the module's docstring for the order)."""
    res = ev.res
    log_problem = ev.run.judge_log(res.output) if ev.early is None and res.exit_code == 0 \
        else None
    compat = ev.early is None and res.exit_code == 0 and not res.timed_out and log_problem is None
    witness = ev.witness if compat else None
    gpu = gpu_problem(ev.gpu, res) if compat and ev.gpu is not None else None
    if gpu is None and compat and ev.gpu is not None and ev.profile == "gpu" and witness is None \
            and ev.attribution:
        gpu = "gpu_work_not_entrypoint", ev.attribution
    strict = (compat and witness is None and gpu is None and ev.tampered is None
              and ev.loaded is None)
    category: str | None = None
    message = ""
    diagnosis: list[dict[str, Any]] | None = None
    if ev.early is not None:
        category, message = ev.early
    elif not compat:
        category = "runtime" if log_problem else categorise(res)
        diagnosis = diagnosis_of(res, category, ev.tier)
        message = log_problem or failed(res, category, diagnosis)
        if ev.tampered:
            message += f"; also, {ev.tampered}"
    elif ev.tampered:
        category, message = "integrity", ev.tampered
    elif witness:
        category, message = "entrypoint_not_run", f"exit 0, but {witness}"
    elif gpu:
        category, message = gpu
    elif ev.loaded:
        category, message = "integrity", ev.loaded
    if (compat if mode == "compat" else strict):
        if not message:  # passed strict: say what was checked
            message = passed(res, ev.run, python=ev.python, checkout=ev.checkout,
                             timeout=ev.timeout, profile=ev.profile, expect=ev.expect,
                             gpu_checked=ev.gpu is not None, setup_steps=ev.setup_steps)
        return decided(strict, compat, mode, category, message)
    if diagnosis is None:
        diagnosis = diagnosis_of(res, category, ev.tier)
    return decided(strict, compat, mode, category, message, diagnosis)


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


@dataclass(frozen=True)
class GpuNeed:
    """What C3 (``need`` 1) and C4 require of the GPUs: ``need`` ranks each held a GPU that
    computed.  ``one_process``: a ``device_map`` run, where one process must hold and use
    ``need`` GPUs."""

    need: int = 1
    one_process: bool = False


def gpu_problem(want: GpuNeed, res: ExecResult) -> Problem | None:
    """Why the run's GPU use falls short of ``want``, or None (C3/C4's GPU rule)."""
    need, one_process = want.need, want.one_process
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


def too_few_gpus(need: int, have: int) -> Problem | None:
    """``insufficient_hardware``, decided before anything runs: the target has too few GPUs."""
    if have >= need:
        return None
    return "insufficient_hardware", f"needs {need} GPU(s), the target has {have}"


def figures(res: ExecResult) -> dict[str, Any]:
    """The compute figures an outcome keeps, with the threshold they were judged against."""
    return {**res.gpu_compute, "sm_active_min_ms": SM_ACTIVE_MIN_MS}


def passed(res: ExecResult, run: Run, *, python: str, checkout: str, timeout: float,
           profile: Profile, expect: Expect | None, gpu_checked: bool,
           setup_steps: int = 0) -> str:
    """What a stage that passed strict was seen to do, from its outcome's own evidence.

    The line is the same for two runs of the same work (``reb merge`` and the
    shard tests compare summaries): the command is the run's own argv with
    only ``{python}`` and ``{repo}`` filled (a port or an ``{out}`` folder is
    new every run; ``Outcome.command`` holds what really ran), and the
    duration is left to ``Outcome.duration``.  ``timeout`` is the run's scaled
    timeout; ``expect`` what the witness required (and, the stage having
    passed, saw); ``gpu_checked``: the GPU rule of C3/C4 passed, so the GPUs
    that held a context and computed are named.
    """
    argv = [a.replace("{python}", python).replace("{repo}", checkout) for a in run.argv]
    command = clip(shlex.join(argv), COMMAND_MAX)
    ran = (f"stopped with {run.stop_signal} after {run.stop_after:g} s, then exit 0"
           if run.stop_after is not None else "exit 0")
    parts = [f"`{command}`: {ran} within {timeout:.0f} s"]
    if setup_steps:
        parts[0] += f" after {setup_steps} setup step(s)"
    if run.http is not None:
        parts.append(f"the server answered {run.http.request}")
    if run.expect_log or run.reject_log:
        parts.append("its log met the run's rules")
    if profile == "cpu":
        parts.append("no GPU visible")
    elif gpu_checked:
        good, _ = computed(res.gpu_compute)
        held = sorted({g for gpus in res.gpu_holders.values() for g in gpus if g in good})
        parts.append(f"GPU(s) {', '.join(map(str, held))} held a CUDA context of the run and "
                     "computed")
    if expect is not None:
        what = expect.entries[0] if expect.entries else "a main program"
        parts.append(f"the witness saw {what} {'run to its end' if expect.needs_finish else 'run'}"
                     + (f" in {expect.workers} processes" if expect.workers > 1 else ""))
    return "; ".join(parts)
