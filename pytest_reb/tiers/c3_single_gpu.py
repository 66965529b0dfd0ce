"""C3 single GPU: the entrypoint exits 0 on one GPU *and* a process of it held the GPU.

Exit 0 alone (the official rule) passes a silent CPU fallback; strict C3 also
needs the host to have seen a process of the run with a GPU device open.
"""

from __future__ import annotations

from pytest_reb.context import Context
from pytest_reb.outcome import Outcome
from pytest_reb.tiers.entrypoint import hardware_gate, held_any_gpu, run_stage


def probe(ctx: Context) -> Outcome:
    run = ctx.repo.single_gpu
    if run is None:
        return ctx.outcome("c3", status="skipped", category="not_applicable",
                           message=ctx.repo.skip_reason("c3"))
    return hardware_gate(ctx, "c3", run, 1) or run_stage(
        ctx, "c3", run, "gpu", held_any_gpu, gpus_needed=max(1, run.min_gpus))
