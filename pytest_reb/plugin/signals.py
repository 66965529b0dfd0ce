"""Ctrl-C and SIGTERM around cleanup: what keeps an interrupted run from leaving containers.

A run with targets turns SIGTERM into ``KeyboardInterrupt`` (``install_sigterm``), so pytest's
teardown removes what it made; removals themselves hold both signals until they are done
(``interrupts_deferred``), since one interrupted half-way leaves a container behind.  Once
every item has run, the run's end holds them whole (``FinishHold``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


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
    if threading.current_thread() is not threading.main_thread() or FinishHold.current:
        yield  # off the main thread; or the run's end holds them already
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


class FinishHold:
    """Ctrl-C and SIGTERM after the last item ran: held until the run's end is done.

    What is left then is finishing: the summary, the reports, the targets' removal, every
    plugin's terminal summary.  A signal that lands in one of those (another plugin's, whose
    ``KeyboardInterrupt`` pytest does not catch there) ended the run with a traceback and
    death by the signal, its reports half written.  Held, the end completes and the run exits
    ``INTERRUPTED`` (2); a second signal is not held (the person means it).
    """

    current: FinishHold | None = None

    def __init__(self) -> None:
        self.held: list[int] = []
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread() or FinishHold.current:
            return
        self._previous = {sig: signal.signal(sig, self._hold)
                          for sig in (signal.SIGINT, signal.SIGTERM)}
        FinishHold.current = self

    def _hold(self, signum: int, _frame: object) -> None:
        self.held.append(signum)
        if len(self.held) > 1:
            self.release()
            raise KeyboardInterrupt(f"signal {signum} (a second one while the run finished)")

    def release(self) -> bool:
        """Restore the handlers; whether a signal came meanwhile."""
        if FinishHold.current is self:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)
            FinishHold.current = None
        return bool(self.held)
