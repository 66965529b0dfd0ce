"""Ctrl-C and SIGTERM around cleanup: what keeps an interrupted run from leaving containers.

A run with targets turns SIGTERM into ``KeyboardInterrupt`` (``install_sigterm``), so pytest's
teardown removes what it made; removals themselves hold both signals until they are done
(``interrupts_deferred``), since one interrupted half-way leaves a container behind.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block is done, then raise KeyboardInterrupt.

    Cleanup interrupted half-way is what leaves a container behind: a
    ``KeyboardInterrupt`` raised inside a removal skips the rest of the loop, and
    the engine may still be removing the one it was asked about.  The block is
    bounded (``housekeeping.sweep`` waits at most ``SWEEP_WAIT`` seconds), so a held signal is
    late by that much at worst.  Off the main thread signals cannot be handled
    there, and the block just runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _frame: held.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if held:
        raise KeyboardInterrupt(f"signal {held[0]} (held until cleanup was done)")


def install_sigterm() -> None:
    """SIGTERM becomes KeyboardInterrupt, so pytest's teardown removes the containers."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGTERM, handler)
