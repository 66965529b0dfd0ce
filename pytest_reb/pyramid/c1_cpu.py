"""C1 CPU: the repository's own entrypoint runs in a container with no GPU devices at all.

Officially only ``CUDA_VISIBLE_DEVICES=""`` hid the GPUs; a container without
device files leaves no way to reach one.  Strict and compat agree here
except for integrity findings: exit 0 within the timeout, and the run's log
rules.  It is decided in ``rules/entrypoint_stage.py``.
"""

from __future__ import annotations

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.entrypoint import run_stage


def probe(ctx: Context) -> Outcome:
    run = ctx.repo.cpu
    if run is None:
        return ctx.outcome("c1", status="skipped", category="not_applicable",
                           message=ctx.repo.skip_reason("c1"))
    return run_stage(ctx, "c1", run, "cpu")
