"""C4 distributed: the multi-GPU entrypoint ran to its end, its ranks each held a GPU that computed.

Fewer GPUs than the run needs is ``insufficient_hardware`` (a failure, as
officially, never a crash).  The run holds its GPUs' leases until it
ends, so no other worker touches them meanwhile, and their counters are the
run's.  Strict C4 needs two or more processes of the run that can each be
matched to a GPU of their own which did real work; for ``device_map`` runs,
where one process shards a model, that process must have held and used two
GPUs.  Launchers that start one worker per rank (torchrun, accelerate,
deepspeed) must also bring that many workers to the entrypoint (the witness).
It is decided in ``rules/entrypoint_stage.py``.
"""

from __future__ import annotations

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.entrypoint import hardware_gate, run_stage
from pytest_reb.rules.entrypoint_stage import GpuNeed


def probe(ctx: Context) -> Outcome:
    run = ctx.repo.multi_gpu
    if run is None:
        return ctx.outcome("c4", status="skipped", category="not_applicable",
                           message=ctx.repo.skip_reason("c4"))
    need = max(2, run.min_gpus)
    rule = GpuNeed(need, one_process=run.launcher == "device_map")
    return hardware_gate(ctx, "c4", run, 2) or run_stage(ctx, "c4", run, "gpu", rule,
                                                         gpus_needed=need)
