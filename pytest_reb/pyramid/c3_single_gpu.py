"""C3 single GPU: the entrypoint ran to its end on one GPU, which held its context and computed.

Exit 0 alone (the official rule) passes a silent CPU fallback and a startup
hook that exits early; strict C3 also needs the witness's proof that the
entrypoint's code ran and finished, a process of the run with a CUDA context
on the GPU, and the GPU's own counters showing real work.  It is decided in
``rules/entrypoint_stage.py``.
"""

from __future__ import annotations

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.entrypoint import hardware_gate, run_stage
from pytest_reb.rules.entrypoint_stage import GpuNeed


def probe(ctx: Context) -> Outcome:
    run = ctx.repo.single_gpu
    if run is None:
        return ctx.outcome("c3", status="skipped", category="not_applicable",
                           message=ctx.repo.skip_reason("c3"))
    return hardware_gate(ctx, "c3", run, 1) or run_stage(
        ctx, "c3", run, "gpu", GpuNeed(1), gpus_needed=max(1, run.min_gpus))
