"""How far the host's disk goes past ``--reb-disk`` when the target paces the disk looks.

The pacer (the attack that held 3 GiB twice under ``--reb-disk 1g`` and passed C1): a
command in a container of the demo image makes N empty files in its writable layer (so
each walk of the layer takes seconds), waits for a walk (a folder's atime), then holds
3 GiB (allocated at once) for ``--hold`` seconds and frees it, twice.  While it runs, this
script reads the used bytes of the filesystem holding the engine's data every 50 ms (the
same ``statvfs`` the bound reads, and the other jobs of the machine move it too) and
prints:

* the command's verdict: ``disk_limited``, the bytes it held when stopped, its duration;
* the host's disk rise over its level when the command started: the peak, and how long
  it stayed more than the limit above that level (the "stated margin": at most one
  ``diskuse.TICK`` unseen, then the frozen look and the kill);
* files made, the pacer's holds completed (``HELD`` lines: 0 when the bound held).

    python bench/disk_pacer.py [--files 1000000] [--hold 10] [--limit 1g]
"""

from __future__ import annotations

import argparse
import itertools
import os
import threading
import time

from common import bench_labels, demo_images, machine

from pytest_reb.plugin.optiontypes import size_bytes
from pytest_reb.targets import DockerTarget, Limits
from pytest_reb.targets.diskuse import TICK

PACER = """\
import os, sys, time
count, mib, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
root = "/var/tmp/pace"
for d in range(count // 1000 + 1):
    os.makedirs(f"{root}/{d}", exist_ok=True)
    for i in range(min(1000, count - d * 1000)):
        os.close(os.open(f"{root}/{d}/{i}", os.O_CREAT | os.O_WRONLY, 0o644))
os.makedirs(f"{root}/sentinel", exist_ok=True)
print("FILES_MADE", count, time.time(), flush=True)
for _ in range(2):
    os.utime(f"{root}/sentinel", (0, time.time()))
    armed = time.time()
    while os.stat(f"{root}/sentinel").st_atime < 1 and time.time() - armed < 30:
        time.sleep(0.02)
    fd = os.open("/var/tmp/held", os.O_RDWR | os.O_CREAT, 0o600)
    os.posix_fallocate(fd, 0, mib << 20)
    time.sleep(hold)
    os.unlink("/var/tmp/held")
    os.close(fd)
    print("HELD", mib, flush=True)
"""


def used(path: str) -> int:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--hold", type=float, default=10.0)
    parser.add_argument("--hold-mib", type=int, default=3072)
    parser.add_argument("--limit", default="1g")
    args = parser.parse_args()
    import docker

    image = demo_images("good")[0]
    root = docker.from_env().info()["DockerRootDir"]
    limit = size_bytes(args.limit)
    samples: list[tuple[float, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            samples.append((time.monotonic(), used(root)))

    with bench_labels() as label:
        target = DockerTarget(image, run_id=label, gpus=[],
                              limits=Limits(memory="2g", pids=256, disk=args.limit))
        try:
            target.exec(["true"], timeout=30)  # the container, started
            base, began = used(root), time.monotonic()
            watcher = threading.Thread(target=sample, daemon=True)
            watcher.start()
            res = target.exec(["python3", "-c", PACER, str(args.files), str(args.hold_mib),
                               str(args.hold)], timeout=1800)
            done.set()
            watcher.join()
        finally:
            target.close()  # the layer and its million files go with the container
    over = [t for t, u in samples if u - base > limit]
    above = sum(b[0] - a[0] for a, b in itertools.pairwise(samples) if a[1] - base > limit)
    peak = max((u - base for _, u in samples), default=0)
    made = [ln for ln in res.stdout.splitlines() if ln.startswith("FILES_MADE")]
    print(f"disk pacer, {args.files} files, holds of {args.hold_mib} MiB for {args.hold:g} s "
          f"under --reb-disk {args.limit}; image {image}; {machine()}")
    print(f"  verdict: disk_limited={res.disk_limited}, held when stopped "
          f"{(res.disk_used or 0) / 2**30:.2f} GiB, exit {res.exit_code}, "
          f"{res.duration:.1f} s ({'files made' if made else 'stopped before the files'}"
          f"; {res.stdout.count('HELD ')} holds completed)")
    print(f"  host disk over its level at the start: peak {peak / 2**30:.2f} GiB; more than "
          f"the limit above it for {above:.2f} s in {len(samples)} samples "
          f"(50 ms apart or more; the bound reads every {TICK:g} s)")
    if over:
        print(f"  first sample over: {over[0] - began:.1f} s into the command, last: "
              f"{over[-1] - began:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
