"""C4 distributed: the multi-GPU entrypoint exits 0 *and* its ranks each held a GPU.

Fewer GPUs than the run needs is ``insufficient_hardware`` (a failure, as
officially, never a crash).  The run holds its GPUs' leases until it
ends, so no other worker touches them meanwhile.  Strict C4 needs two or more processes of the run
that can each be matched to a GPU of their own; for ``device_map`` runs, where
one process shards a model, that process must have held two GPUs.
"""

from __future__ import annotations

from pytest_reb.context import Context
from pytest_reb.outcome import Outcome
from pytest_reb.tiers.entrypoint import hardware_gate, ranks_on_gpus, run_stage


def probe(ctx: Context) -> Outcome:
    run = ctx.repo.multi_gpu
    if run is None:
        return ctx.outcome("c4", status="skipped", category="not_applicable",
                           message=ctx.repo.skip_reason("c4"))
    need = max(2, run.min_gpus)
    rule = ranks_on_gpus(need, one_process=run.launcher == "device_map")
    return hardware_gate(ctx, "c4", run, 2) or run_stage(ctx, "c4", run, "gpu", rule,
                                                         gpus_needed=need)
