"""A target and the copies it made (``twin``, ``sibling``): retired together.

A copy's containers are its own, and the target's ``close`` leaves them alone (a lane's
sibling outlives a ``close`` that only asks for fresh containers).  But a copy may be made
and used by a thread the run does not wait for (the host's compile before the first stage
reads the image in one), so when the run is done with the target (``retire``, at the
session's end) its copies are retired with it: their containers are removed, and one
asked for afterwards is refused instead of made after the run's clean-up, where nothing
would remove it and its image could not be removed either.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol


class Retirable(Protocol):
    """A target copy: ``retire`` removes its containers and refuses new ones."""

    def retire(self) -> None: ...


class Family:
    """The copies of one target still alive, and whether that target is retired."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members: weakref.WeakSet[Retirable] = weakref.WeakSet()
        self.retired = False

    def join(self, member: Retirable) -> bool:
        """Count ``member`` in; False once the family is retired (the member is then born
        retired, and the caller marks it so)."""
        with self._lock:
            if not self.retired:
                self._members.add(member)
            return not self.retired

    def retire(self) -> None:
        """Retire every member; a member joining after this is refused."""
        with self._lock:
            self.retired = True
            members = list(self._members)
            self._members.clear()
        for member in members:
            member.retire()
