"""A run's name: a new id, or the earlier run ``--reb-resume`` continues.

Apart from ``session.py`` because the ``reb`` command names runs too (``reb agent``,
``reb slurm``, ``reb k8s``) and should not import pytest and the targets to do it.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def resolve_run(outdir: Path, resume: str | None) -> str:
    """The run to write into: a new one, or the one ``--reb-resume`` names (or the latest).

    ValueError, one line, when there is no such run: ``RebSession.open`` makes it a usage error.
    """
    if resume is None:
        return new_run_id()
    if resume != "latest":
        if not (outdir / resume).is_dir():
            raise ValueError(f"--reb-resume: no run {resume!r} under {outdir}")
        return resume
    runs = sorted(p.parent.name for p in outdir.glob("[0-9]*/outcomes.jsonl"))  # not merged-*
    if not runs:
        raise ValueError(f"--reb-resume: no earlier run with outcomes under {outdir}")
    return runs[-1]
