"""What every agent backend shares: where its container sees the CLI and the output
folder, the one error a person acts on, and the token counts a CLI reports.

Kept apart from ``backends.py`` so that a backend with a module of its own
(``nexau.py``) and the table of backends that names it import one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Where a backend's CLI folder, and the user's ``--mount`` folders by default, appear.
TOOL_MOUNT = "/opt/reb-agent/tool"
#: The one host folder the agent may write to; never part of the committed image.
OUT_MOUNT = "/opt/reb-agent/out"
#: A tmpfs where the built-in CLIs keep their own state (config, sessions, shell snapshots,
#: caches): a mount, so never part of the commit, and gone with the container.
STATE_MOUNT = "/opt/reb-agent/state"


class BackendError(ValueError):
    """A backend that cannot run as given: one line a person can act on."""


@dataclass(frozen=True)
class Tokens:
    """Token counts the CLI reported; ``raw`` keeps its own fields for the record."""

    input: int
    output: int
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.input + self.output

    def record(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "total": self.total,
                "raw": dict(self.raw)}


def count(value: Any) -> int:
    """A token count as a CLI wrote it: a non-negative int, anything else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
