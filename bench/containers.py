"""Container start and removal per target (goal: <= 1.5 s median, start + removal).

pytest-reb starts one hardened container per (target, device profile) and
removes it when the target's items end.  "Start" is everything the harness
does before the first probe can run: ``docker run`` with the hardening and
read-only tool mounts (our busybox among them), finding the container's
cgroup, reading the keep-alive pids and checking our tools' mount.  Beside
it, a bare ``docker run -d --network none IMAGE sleep infinity`` and
``rm -f`` through the same SDK: the engine's own floor on this machine (no
network on both sides, as probes run).
The two are interleaved, N times each.

    python bench/containers.py [--repeat N] [--image TAG]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from common import bench_labels, demo_images, machine, median, table

from pytest_reb.targets import DockerTarget, Limits, labels


def harness_once(image: str, run_id: str) -> tuple[float, float]:
    target = DockerTarget(image, run_id=run_id, gpus=[], limits=Limits())
    t0 = time.perf_counter()
    target.container()
    t1 = time.perf_counter()
    target.close()
    return t1 - t0, time.perf_counter() - t1


def bare_once(client: Any, image: str, run_id: str) -> tuple[float, float]:
    t0 = time.perf_counter()
    ctr = client.containers.run(image, entrypoint=["sleep"], command=["infinity"], detach=True,
                                network_mode="none", labels=labels(run_id))
    t1 = time.perf_counter()
    ctr.remove(force=True)
    return t1 - t0, time.perf_counter() - t1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--image", help="image to start (default: the demo image)")
    args = parser.parse_args()
    import docker

    image = args.image or demo_images("good")[0]
    client = docker.from_env()
    runs: dict[str, list[tuple[float, float]]] = {"pytest-reb target": [], "bare docker run": []}
    with bench_labels():
        harness_once(image, "bench-warmup")  # page cache, image layers
        for _ in range(args.repeat):
            runs["pytest-reb target"].append(harness_once(image, "bench-containers"))
            runs["bare docker run"].append(bare_once(client, image, "bench-containers"))
    rows = []
    for name, pairs in runs.items():
        starts, removes = [p[0] for p in pairs], [p[1] for p in pairs]
        totals = [a + b for a, b in pairs]
        rows.append((name, median(starts), median(removes), median(totals), max(totals)))
    harness, bare = rows[0][3], rows[1][3]
    print(f"container start + removal per target, {args.repeat} runs each, image {image}; "
          f"{machine()}")
    print(table(["", "start s (median)", "remove s (median)", "total s (median)", "total s (max)"],
                rows))
    print(f"\npytest-reb per target: {harness:.2f} s median (goal <= 1.5 s: "
          f"{'met' if harness <= 1.5 else 'MISSED'}); the engine's floor here is {bare:.2f} s, "
          f"so the harness adds {harness - bare:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
