"""What every tier's decision returns: both verdicts, the mode's status, and what to call it.

Each tier's rule (``rules/c0.py``, ``rules/c2.py``, ``rules/entrypoint_stage.py`` for
C1/C3/C4, ``rules/c5.py``) is a pure function from an evidence record the stage gathered
to a ``Decision``; the stage only copies it onto its ``Outcome``.  Keeping the record of
the decision apart from the outcome is what lets the rules be tested on rows of evidence
(recorded real runs, hand-made hostile cases) with no target, no context and no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_reb.outcome import Outcome

#: The run's mode: strict (the evidence's verdict decides) or compat (the official rule's).
Mode = Literal["strict", "compat"]


def mode_of(compat: bool) -> Mode:
    """The mode of a run from ``--reb-compat``."""
    return "compat" if compat else "strict"


@dataclass(frozen=True)
class Decision:
    """Strict and compat verdicts of one tier, and the category and message of the mode's.

    ``category`` is None when the mode's verdict passed (a failure category names why a
    tier failed); ``message`` may still name why the *other* verdict failed (a compat pass
    that strict refuses says so).  ``diagnosis`` is the root-cause account of a failure.
    """

    strict: bool | None
    compat: bool | None
    mode: Mode
    category: str | None
    message: str
    diagnosis: Sequence[dict[str, Any]] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """The mode's verdict."""
        return bool(self.compat if self.mode == "compat" else self.strict)

    def onto(self, outcome: Outcome) -> Outcome:
        """``outcome`` with this decision's fields; the rest (what was seen) is the stage's."""
        outcome.strict, outcome.compat = self.strict, self.compat
        outcome.status = "passed" if self.passed else "failed"
        outcome.category, outcome.message = self.category, self.message
        outcome.diagnosis = list(self.diagnosis)
        return outcome


def decided(strict: bool | None, compat: bool | None, mode: Mode, category: str | None,
            message: str, diagnosis: Sequence[dict[str, Any]] = ()) -> Decision:
    """A ``Decision`` whose category is dropped when the mode's verdict passed."""
    chosen = compat if mode == "compat" else strict
    return Decision(strict, compat, mode, None if chosen else category, message,
                    tuple(diagnosis))
