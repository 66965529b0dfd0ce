"""Sizes as the Docker engine reads its own (``b``/``k``/``m``/``g``, powers of 1024).

Read without the Docker SDK, by the options' types (a bad ``--reb-memory`` is a
usage error before any engine is asked, and where none is used: ``local://``) and
by the Docker target's limits; standard library only, so an inactive plugin that
checks its options' types loads nothing more.
"""

from __future__ import annotations

UNITS = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size_bytes(text: str) -> int:
    """``20g``, ``512m``, ``1024`` in bytes; ValueError if it is not a size."""
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in UNITS else "b"
    number = value[:-1] if value[-1:] in UNITS else value
    try:
        size = float(number)
    except ValueError:
        size = -1.0
    if not number or size <= 0 or size != size or size == float("inf"):
        raise ValueError(f"{text!r} is not a size (e.g. 20g, 512m)")
    return int(size * UNITS[unit])
