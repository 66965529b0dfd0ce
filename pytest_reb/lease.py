"""GPU leases: no two workers (or two runs on one host) use the same GPU at once.

One lock file per GPU index in a host-wide folder, so the lease holds across
pytest-xdist workers and across separate runs.  A tier that needs ``n``
GPUs takes them in ascending order and blocks; a tier that needs one takes
any free GPU.  A holder of several GPUs never waits while holding fewer than
it needs from someone who waits on it, so there is no deadlock.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_DIR = Path(tempfile.gettempdir()) / "reb-gpu-leases"


class GpuLeases:
    """The GPUs a run may use, handed out under exclusive locks."""

    def __init__(self, pool: Sequence[str], lock_dir: Path = LOCK_DIR) -> None:
        self.pool = list(pool)
        self.lock_dir = lock_dir

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
            if count == 1 and len(self.pool) > 1:
                chosen = [self._any_one(held)]
            else:
                for gpu in sorted(self.pool, key=_order)[:count]:
                    lock = self._lock(gpu)
                    lock.acquire()
                    held.append(lock)
                    chosen.append(gpu)
            yield chosen
        finally:
            for lock in reversed(held):
                lock.release()

    def _any_one(self, held: list[FileLock]) -> str:
        while True:
            for gpu in self.pool:
                lock = self._lock(gpu)
                with contextlib.suppress(Timeout):
                    lock.acquire(timeout=0)
                    held.append(lock)
                    return gpu
            time.sleep(0.2)


def _order(gpu: str) -> tuple[int, str]:
    return (int(gpu), gpu) if gpu.isdigit() else (1 << 30, gpu)
