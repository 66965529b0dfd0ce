"""What of the host the suite could change without meaning to, read so it can be compared.

The suite runs containers, builds images and starts a second Docker daemon; none of that may
leave a trace on the machine outside what is the suite's own (a ``dockerd --bridge none`` once
deleted the host's ``docker0``, and every ``docker build`` with a RUN step failed after the
suite).  ``snapshot()`` reads the host's network interfaces, Docker networks, Docker images,
Docker volumes and mount points; ``changes(before, after)`` says what differs, one line each.
Volumes are compared because a container removed without ``v=True`` leaves the anonymous
volume of each image ``VOLUME`` on the host (three per run, once); only dangling ones (no
container uses them), so a container of anyone's that is running at the moment is not read.

Left out is what the host's engine makes and removes for any container, anyone's, so that a run
beside other users of the same engine is not failed for their work:

- ``veth*`` interfaces: the host end of a container on a bridge network (a ``docker build`` RUN
  step's included).  The suite's own containers and builds use network none.
- Mount points under the engine's data root and exec root: a container's overlay, shm and netns
  mounts.  That the suite's containers are gone is the left-behind check's business.
- Images of the suite's own repositories (``reb-*``: ``pytest_reb.loop.demo``,
  ``tests/support/imagebuild.py`` and the tests' own tags), which the suite tags, moves and drops by
  design, and dangling ``<none>`` images: a rebuilt recipe leaves its earlier image untagged, as
  another user's build does, and nothing tells the two apart; but a dangling image an agent
  run committed (``AGENT_RUN``) is no rebuild, and a new one is reported.  A tagged image of
  anyone else that goes, or whose tag moves, is reported.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.runs.matrix import AGENT_ENV_LABEL

#: Where the suite's image repositories' names begin (``reb-base``, ``reb-demo``, ``reb-hostile-*``,
#: ``reb-fault-tiny``, ...).
SUITE_IMAGES = "reb-"
#: The label of an agent run's committed image: one untagged is a leak, never a rebuild (its
#: tag was removed while a container still used it).
AGENT_RUN = f"{AGENT_ENV_LABEL}run"
#: The engine's exec root as the host's dockerd has it by default (``/var/run`` is ``/run``).
EXEC_ROOTS = ("/run/docker", "/var/run/docker")


@dataclass
class HostState:
    """The parts of the host compared; the engine's parts are None without an engine."""

    interfaces: set[str]
    mounts: Counter[str]
    networks: set[str] | None
    images: dict[str, str] | None
    volumes: set[str] | None = None


def snapshot(client: Any | None) -> HostState:
    """The host now; ``client`` is a Docker client on the host's engine, or None for none."""
    engine_roots = [*EXEC_ROOTS, *([client.info()["DockerRootDir"]] if client else [])]
    return HostState(interfaces=_interfaces(), mounts=_mounts(engine_roots),
                     networks=_networks(client) if client else None,
                     images=_images(client) if client else None,
                     volumes=_dangling_volumes(client) if client else None)


def changes(before: HostState, after: HostState) -> list[str]:
    """What differs, one line each (empty: the host is as it was)."""
    found = [f"interface {name} is gone" for name in sorted(before.interfaces - after.interfaces)]
    found += [f"interface {name} is new" for name in sorted(after.interfaces - before.interfaces)]
    found += [f"mount point {point} is gone" for point in sorted(before.mounts - after.mounts)]
    found += [f"mount point {point} is new" for point in sorted(after.mounts - before.mounts)]
    if before.networks is not None and after.networks is not None:
        found += [f"Docker network {n} is gone" for n in sorted(before.networks - after.networks)]
        found += [f"Docker network {n} is new" for n in sorted(after.networks - before.networks)]
    if before.volumes is not None and after.volumes is not None:
        found += [f"Docker volume {v} is gone" for v in sorted(before.volumes - after.volumes)]
        found += [f"Docker volume {v} is new" for v in sorted(after.volumes - before.volumes)]
    if before.images is not None and after.images is not None:
        for tag in sorted(before.images.keys() | after.images.keys()):
            was, now = before.images.get(tag), after.images.get(tag)
            if was != now:
                found.append(f"image {tag}: " + ("is new" if was is None else "is gone"
                                                 if now is None else f"was {was}, now {now}"))
    return found


def _interfaces() -> set[str]:
    """Network interfaces of this namespace, bridges marked (``docker0 (bridge)``)."""
    net = Path("/sys/class/net")
    return {f"{dev.name} (bridge)" if (dev / "bridge").is_dir() else dev.name
            for dev in net.iterdir() if not dev.name.startswith("veth")}


def _mounts(engine_roots: list[str]) -> Counter[str]:
    """Mount points of this mount namespace (stacked mounts counted), the engine's left out."""
    points = [line.split()[4] for line in
              Path("/proc/self/mountinfo").read_text().splitlines()]
    return Counter(p for p in points
                   if not any(p == root or p.startswith(root + "/") for root in engine_roots))


def _networks(client: Any) -> set[str]:
    return {f"{n.name} ({n.id[:12]}, {n.attrs.get('Driver')})" for n in client.networks.list()}


def _dangling_volumes(client: Any) -> set[str]:
    """Volumes no container uses: what a removal without ``v=True`` leaves."""
    return {v.name for v in client.volumes.list(filters={"dangling": True})}


def _images(client: Any) -> dict[str, str]:
    """Tag -> image id of every tagged image not of the suite's own repositories, and the
    agent runs' committed images nothing names any more (``AGENT_RUN``)."""
    found = {tag: image.short_id.removeprefix("sha256:") for image in client.images.list()
             for tag in image.tags if not tag.startswith(SUITE_IMAGES)}
    for image in client.images.list(filters={"dangling": True, "label": AGENT_RUN}):
        short = image.short_id.removeprefix("sha256:")
        found[f"<none> of agent run {image.labels[AGENT_RUN]}"] = short
    return found
