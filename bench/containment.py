"""What killing by cgroup costs per command, against a fresh container per command.

No process may outlive a command.  The two ways to make sure are freezing
the container's cgroup and killing all but our keep-alive (what
``DockerTarget`` does after every command), or a new container from the
same image for every command.  Timed here, N times each, on the demo image:

* **sweep, nothing left**: ``exec(["true"])`` through the target: the
  command, reading the cgroup, the writable layer's size;
* **sweep, a daemon left**: a command that leaves a detached ``sleep``:
  the same plus one freeze, kill and thaw;
* **sweep, fork-hopping chains**: a command that leaves sixteen chains that
  fork and exit as fast as they can: the same plus ending them all, and
  whether any is left (the ``docker top`` + SIGKILL of before is tried on the same chains
  for comparison: three rounds, as it did);
* **fresh container**: ``docker run`` of the same hardened kind, one
  ``exec`` of ``true``, ``rm -f``: what a container per command would cost.

    python bench/containment.py [--repeat N]
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from common import bench_labels, demo_images, machine, median, table

from pytest_reb.targets import DockerTarget, Limits

#: Sixteen chains in ``sh``: each generation starts the next and exits (output closed).
HOP = ("for i in $(seq 16); do setsid sh -c 'hop() { hop </dev/null >/dev/null 2>&1 & exit 0; };"
       " hop' </dev/null >/dev/null 2>&1 & done")
DAEMON = "setsid sleep 600 </dev/null >/dev/null 2>&1 &"


def top_and_kill(target: DockerTarget) -> int:
    """The sweep of before: three rounds of ``docker top`` and SIGKILL; processes left."""
    ctr = target.container()
    keep = target._keep["cpu"]
    for _ in range(3):
        pids = [int(r[0]) for r in ctr.top(ps_args="-o pid").get("Processes") or []]
        for pid in set(pids) - keep:
            target._cgroups["cpu"].signal(pid, signal.SIGKILL)  # never a reused pid
        time.sleep(0.1)
    time.sleep(0.5)
    return len(target._run_pids("cpu"))


def timed_exec(target: DockerTarget, argv: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    res = target.exec(argv, timeout=60)
    return time.perf_counter() - t0, res.leftovers_killed


def fresh(client: Any, image: str, label: str) -> float:
    limits = Limits()
    t0 = time.perf_counter()
    ctr = client.containers.run(image, entrypoint=["sleep"], command=["infinity"], detach=True,
                                init=True, network_mode="none", cap_drop=["ALL"],
                                security_opt=["no-new-privileges"], pids_limit=limits.pids,
                                mem_limit=limits.memory, labels={"reb.bench": label})
    ctr.exec_run(["true"])
    ctr.remove(force=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    import docker

    image = demo_images("good")[0]
    client = docker.from_env()
    rows: dict[str, list[float]] = {"sweep, nothing left": [], "sweep, a daemon left": [],
                                    "sweep, fork-hopping chains": [], "fresh container": []}
    hop_left = {"cgroup freeze + kill": 0, "docker top + SIGKILL x3": 0}
    with bench_labels() as label:
        target = DockerTarget(image, run_id=label, gpus=[], limits=Limits())
        try:
            target.exec(["true"], timeout=30)  # the container, started
            for _ in range(args.repeat):
                rows["sweep, nothing left"].append(timed_exec(target, ["true"])[0])
                rows["sweep, a daemon left"].append(timed_exec(target, ["sh", "-c", DAEMON])[0])
                rows["sweep, fork-hopping chains"].append(timed_exec(target, ["sh", "-c", HOP])[0])
                hop_left["cgroup freeze + kill"] += len(target._run_pids("cpu")) > 0
                chains = ["sh", "-c", HOP]
                ctr = target.container()
                cmd = client.api.exec_create(ctr.id, chains, user="0:0")["Id"]
                client.api.exec_start(cmd, detach=True)
                time.sleep(0.5)
                hop_left["docker top + SIGKILL x3"] += top_and_kill(target) > 0
                target._sweep("cpu")  # what the old sweep left
                rows["fresh container"].append(fresh(client, image, label))
        finally:
            target.close()
    print(f"per command, {args.repeat} runs each, image {image}; {machine()}")
    print(table(["", "median s", "max s"],
                [(k, median(v), max(v)) for k, v in rows.items()]))
    print(table(["sweep of fork-hopping chains", "runs with processes left"],
                [(k, f"{v} of {args.repeat}") for k, v in hop_left.items()]))
    base = median(rows["sweep, nothing left"])
    print(f"\na fresh container per command would add {median(rows['fresh container']) - base:.2f}"
          f" s to every command; the freeze adds {median(rows['sweep, a daemon left']) - base:.3f}"
          " s to a command that left a process, nothing to one that did not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
