"""``--reb-disk`` while a command runs: what its container holds on disk, watched from the host.

What the container holds is its writable layer (the engine's ``SizeRw``), what
its volumes (an image ``VOLUME``) gained, and unlinked files its processes hold
open (``diskuse``), looked at with the container frozen whenever its
filesystems' used bytes say it may have passed the limit (``diskuse.Bound``),
so the target can neither pace nor see those looks.  A command that grows it
past the limit is stopped; the Docker target then removes its container (layer
and volumes with it) and the result says ``disk_limited``.  A quota
(``storage_opt``) would bound the layer in the kernel, but only overlay2 on xfs
with ``pquota`` supports one.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from pytest_reb.targets import diskuse
from pytest_reb.targets.cgroup import Cgroup

#: Seconds between two looks at the writable layer while a command runs (at least).
DISK_POLL = 1.0


def disk_used(client: Any, ctr: Any, volumes: Mapping[str, int],
              cgroup: Cgroup | None) -> int | None:
    """Bytes ``ctr`` holds on disk, or None: its writable layer (the engine's ``SizeRw``),
    its volumes' growth past ``volumes`` (dir -> bytes at its start) and the unlinked files
    the processes of its ``cgroup`` hold."""
    with contextlib.suppress(Exception):
        rows = client.api.containers(all=True, filters={"id": ctr.id}, size=True)
        if not rows:
            return None
        return (int(rows[0].get("SizeRw") or 0)
                + diskuse.volumes_growth(volumes)
                + diskuse.unlinked_bytes(cgroup.pids() if cgroup else ()))
    return None


def anchored(bound: diskuse.Bound, settled: int | None,
             look: Callable[[], int | None]) -> diskuse.Bound:
    """``bound`` anchored while no process of the container but the keep-alive runs: at
    ``settled`` (the figure its last command ended with), else at a ``look`` taken now."""
    if settled is None:
        settled = look()
    if settled is not None:
        bound.anchor(settled)
    return bound


def watch(reader: threading.Thread, deadline: float, bound: diskuse.Bound,
          cgroup: Cgroup | None, look: Callable[[], int | None]) -> int | None:
    """Wait for the command (its output's ``reader``) until ``deadline``, bounding its disk
    use meanwhile; the bytes it holds once past the limit (the caller then stops it), else
    None.  ``look`` is the exact figure (``disk_used``).

    Every ``diskuse.TICK`` the filesystems holding its files are read (O(1)); when
    they say it may be past the limit, the exact look is taken with it frozen.  A
    periodic exact look, unfrozen, stays as the backstop; it costs what the engine
    spends walking the layer, so the next one waits five times as long as it took.
    """
    limit = bound.limit
    freeze = cgroup.frozen if cgroup is not None else None
    pause = DISK_POLL
    backstop = time.monotonic() + pause
    while reader.is_alive():
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        reader.join(min(diskuse.TICK, left))
        if not reader.is_alive():
            return None
        if bound.suspect():
            used = diskuse.frozen_look(freeze, look, bound)
        elif time.monotonic() >= backstop:
            began = time.monotonic()
            used = look()
            pause = max(DISK_POLL, 5 * (time.monotonic() - began))
            backstop = time.monotonic() + pause
        else:
            continue
        if used is not None and used > limit:
            return used
    return None
