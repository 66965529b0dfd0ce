"""GPU leases: no two workers (or two runs on one host) use the same GPU at once.

One lock file per GPU index in a host-wide folder, so the lease holds across
pytest-xdist workers and across separate runs.  A tier that needs one GPU
takes any free one.  A tier that needs ``n`` first takes any ``n`` free ones
at once, holding nothing while it waits, so a C4 runs on GPUs 2 and 3 while
GPU 0 is busy; after ``PATIENCE`` seconds of that it queues for the lowest
``n`` in ascending order, so busy single-GPU tiers cannot starve it.  Only
queuers hold while they wait, all in the same order, so there is no deadlock.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_DIR = Path(tempfile.gettempdir()) / "reb-gpu-leases"
#: Seconds a multi-GPU lease looks for any free set before it queues in order.
PATIENCE = 30.0


class GpuLeases:
    """The GPUs a run may use, handed out under exclusive locks."""

    def __init__(self, pool: Sequence[str], lock_dir: Path = LOCK_DIR,
                 patience: float = PATIENCE) -> None:
        self.pool = list(pool)
        self.lock_dir = lock_dir
        self.patience = patience

    def _lock(self, gpu: str) -> FileLock:
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.lock_dir / f"gpu-{gpu}.lock"))

    @contextlib.contextmanager
    def hold(self, count: int) -> Iterator[list[str]]:
        """``count`` GPUs of the pool (fewer if the pool is smaller), held until the block ends."""
        count = min(count, len(self.pool))
        held: list[FileLock] = []
        chosen: list[str] = []
        try:
            if count == 1 and len(self.pool) > 1:  # one GPU held never blocks anyone: no queue
                chosen = self._any_set(held, 1, patience=math.inf)
            elif count > 1 and len(self.pool) > count:
                chosen = self._any_set(held, count, self.patience) or self._in_order(held, count)
            else:
                chosen = self._in_order(held, count)
            yield chosen
        finally:
            for lock in reversed(held):
                lock.release()

    def _in_order(self, held: list[FileLock], count: int) -> list[str]:
        """The lowest ``count`` GPUs, each waited for in ascending order."""
        chosen = []
        for gpu in sorted(self.pool, key=_order)[:count]:
            lock = self._lock(gpu)
            lock.acquire()
            held.append(lock)
            chosen.append(gpu)
        return chosen

    def _any_set(self, held: list[FileLock], count: int, patience: float) -> list[str]:
        """Any ``count`` free GPUs (first free in pool order), taken together; nothing is held
        between tries.  Empty when ``patience`` seconds ran out first."""
        deadline = time.monotonic() + patience
        while True:
            got: list[tuple[str, FileLock]] = []
            for gpu in self.pool:
                lock = self._lock(gpu)
                with contextlib.suppress(Timeout):
                    lock.acquire(timeout=0)
                    got.append((gpu, lock))
                    if len(got) == count:
                        held.extend(lock for _, lock in got)
                        return [gpu for gpu, _ in got]
            for _, lock in reversed(got):
                lock.release()
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.2)


def _order(gpu: str) -> tuple[int, str]:
    return (int(gpu), gpu) if gpu.isdigit() else (1 << 30, gpu)
