"""C5's strict challenge, answered by the interpreter in C2's CUDA probe where that is as good.

C5's strict question (``c5_observe``) runs the report's interpreter with a nonce and reads
its version and ``import torch`` back; C2's probe runs the same interpreter and imports the
same torch.  Asked apart, a first verification pays two interpreter starts and two
``import torch`` (and a container for the strict one, ``Target.twin``) for one answer.

The strict question must see the image as it was, with nothing of an earlier command: only a
fresh container of the image gives that (an entrypoint can plant a torch that says any
version for later commands; ``tests/test_audit_twin.py``).  So strict C2 runs its probe in
that fresh container too (the target's twin, where C5's own probe ran), and is given the
nonce: it prints C5's two lines first (``probes/cuda_probe.py``), which C5 reads as it reads
its own probe's, when both are there (``c5_observe``); anything less, and C5 asks itself, as
before.  ``--reb-compat`` keeps the official order (C2 in the target, after C1) and C5's own
question.

The board is shared by the pair's lane copies of the context.  In the side-by-side lanes
(``lanes.py``) C5's observation may start while C2 is still to come in another lane: the
lanes promise the answer, ``take`` waits for it, and C2's lane settles it however it ends,
so a wait never outlives the lanes.  C5's item waits for C2's outcome anyway.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

#: Printed before each of the answer's JSON lines, by C5's probe and by C2's when given a nonce.
PYTHON_MARKER = "REB_PYTHON_PROBE"
#: The longest ``take`` waits, a bound that no settled board reaches (the lanes settle it).
LONGEST_WAIT = 3600.0


@dataclass(frozen=True)
class Answered:
    """One run of ``path`` that was given ``nonce``: what it printed and how it ended."""

    path: str
    nonce: str
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool


class Answers:
    """The one answer to C5's challenge that C2's probe gives; ``take`` waits for it only
    where it was promised (C2 in a lane, C5's observation in another)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._coming = False
        self._settled = False
        self._given: Answered | None = None

    def promise(self) -> None:
        """C2's probe will run in a lane, and C5's observation may start before it gives its
        answer (``Lanes.start``)."""
        with self._cond:
            self._coming = not self._settled

    def challenge(self) -> str | None:
        """The nonce for C2's probe to pass on, or None once an answer was given (or none
        will come): the first stays."""
        with self._cond:
            return None if self._settled else secrets.token_hex(8)

    def give(self, answered: Answered | None) -> None:
        """Settle the board with ``answered`` (None: nothing will come); the first stays."""
        with self._cond:
            if not self._settled:
                self._given, self._settled, self._coming = answered, True, False
            self._cond.notify_all()

    def take(self, path: str, timeout: float = LONGEST_WAIT) -> Answered | None:
        """The answer given for ``path``, waiting while one is promised; None if none."""
        with self._cond:
            self._cond.wait_for(lambda: not self._coming, timeout)
            given = self._given
        return given if given is not None and given.path == path else None
