"""GPU leases (``lease.GpuLeases``): host-wide lock files, so no two workers or runs hold one GPU,
and a multi-GPU lease takes any free set without deadlock.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from pytest_reb.targets.lease import GpuLeases


def test_leases_never_share_a_gpu_and_never_deadlock(tmp_path: Path) -> None:
    leases = GpuLeases(["0", "1", "2"], lock_dir=tmp_path)
    held: dict[str, str] = {}
    guard = threading.Lock()
    clashes: list[str] = []
    done: list[int] = []

    def worker(name: str, sizes: list[int]) -> None:
        for size in sizes:
            with leases.hold(size) as gpus:
                assert len(gpus) == size
                with guard:
                    clashes.extend(f"{g}: {held[g]} and {name}" for g in gpus if g in held)
                    held.update(dict.fromkeys(gpus, name))
                time.sleep(0.005)
                with guard:
                    for g in gpus:
                        held.pop(g, None)
        done.append(1)

    threads = [threading.Thread(target=worker, args=(f"t{i}", [1 + (i + j) % 3 for j in range(12)]),
                                daemon=True) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "deadlock: lease holders never finished"
    assert len(done) == 6 and not clashes, clashes


def test_a_multi_gpu_lease_takes_any_free_set(tmp_path: Path) -> None:
    """GPU 0 is busy: two GPUs are still free, so a C4 runs now on 1 and 2, not after 0."""
    leases = GpuLeases(["0", "1", "2", "3"], lock_dir=tmp_path)
    with leases.hold(1) as busy:
        assert busy == ["0"]
        start = time.monotonic()
        with leases.hold(2) as pair:
            assert pair == ["1", "2"] and time.monotonic() - start < 1
            with leases.hold(1) as last:
                assert last == ["3"]


def test_a_multi_gpu_lease_queues_in_order_once_patience_runs_out(tmp_path: Path) -> None:
    """No two GPUs free: after its patience it queues for the lowest two and gets them when
    they are released (single-GPU tiers cannot starve it)."""
    leases = GpuLeases(["0", "1", "2"], lock_dir=tmp_path, patience=0.3)
    release = threading.Event()
    took: list[list[str]] = []

    def one() -> None:
        with leases.hold(1) as gpus:
            took.append(gpus)
            release.wait(10)

    holders = [threading.Thread(target=one, daemon=True) for _ in range(2)]
    for t in holders:
        t.start()
    while len(took) < 2:
        time.sleep(0.01)
    threading.Timer(1.0, release.set).start()
    start = time.monotonic()
    with GpuLeases(["0", "1", "2"], tmp_path, patience=0.3).hold(2) as pair:
        assert pair == ["0", "1"] and time.monotonic() - start >= 0.9
    for t in holders:
        t.join(timeout=10)


def test_leases_hold_across_processes(tmp_path: Path) -> None:
    """Another process (another xdist worker or run) holding GPU 0 is respected."""
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path\n"
         "from pytest_reb.targets.lease import GpuLeases\n"
         f"with GpuLeases(['0', '1'], Path({str(tmp_path)!r})).hold(1) as g:\n"
         "    print(g[0], flush=True); time.sleep(2)\n"],
        stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "0"
    start = time.monotonic()
    with GpuLeases(["0", "1"], tmp_path).hold(1) as mine:
        assert mine == ["1"]
    with GpuLeases(["0", "1"], tmp_path).hold(2) as both:  # waits for the child to end
        assert both == ["0", "1"] and time.monotonic() - start > 1
    assert child.wait(timeout=10) == 0
