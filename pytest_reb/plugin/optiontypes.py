"""Types of the plugin's options: each checks its value when pytest parses the command line.

A bad value (``--reb-timeout-scale=0``, ``--reb-memory=lots``, ``--reb-pids=-5``) is then a
usage error printed by pytest, with the option's name, before any target is touched. The
sizes are read as the Docker engine reads its own (``b``/``k``/``m``/``g``, powers of 1024),
without the Docker SDK: the options are checked where no engine is used (``local://``).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from pytest_reb.sizes import size_bytes


def size(text: str) -> str:
    """An option that is a size: kept as written (the engine takes it), checked here."""
    try:
        size_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def positive_float(text: str) -> float:
    """A factor such as ``--reb-timeout-scale``: a number above 0."""
    return _positive(text, float, "a number")


def positive_int(text: str) -> int:
    """A count such as ``--reb-pids``: a whole number above 0."""
    return _positive(text, int, "a whole number")


def _positive(text: str, convert: type[int] | type[float], kind: str) -> Any:
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be {kind} above 0")
    return value


def gpu_indices(text: str) -> str:
    """``--reb-gpus``: GPU indices as the host numbers them, ``0,1``; empty is none (a Slurm
    task given no GPU passes its empty ``SLURM_JOB_GPUS``). Kept as written."""
    if not all(re.fullmatch(r"\d+", g.strip()) for g in text.split(",") if g.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of GPU indices (e.g. 0,1)")
    return text


def sha256(text: str) -> str:
    """``--reb-trust-hook``: 64 hex digits (``sha256:`` in front is allowed)."""
    digest = text.removeprefix("sha256:").lower()
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise argparse.ArgumentTypeError(f"{text!r} is not a sha256 (64 hex digits)")
    return digest
