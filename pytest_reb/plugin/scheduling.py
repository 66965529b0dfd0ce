"""The xdist scheduler of pytest-reb: ``loadscope`` over (module, target) pairs.

Kept apart from ``distribute`` so that xdist's scheduler classes are imported
only when a run is distributed, not at every pytest start.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from pytest_reb.runs.shards import scope_of


class TargetScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """``loadscope`` whose scope is the (module, target) pair."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)
