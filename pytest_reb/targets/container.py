"""One container of the Docker target: what it is made with, and what it must show once started.

Nothing of the image is part of the harness.  The keep-alive, the shell and the
utilities of our own commands are our static busybox (``ourtools``), the init
is Docker's own; the image's ``HEALTHCHECK``, ``ENTRYPOINT``, ``CMD``, ``USER``
and ``STOPSIGNAL`` are overridden, while its ``ENV`` and ``WORKDIR`` stay: they
are the environment under test, data to the commands, not code of ours.  The
keep-alive runs as ``nobody`` and commands as root without capabilities, so no
command can signal it.  tmpfs mounts get an explicit size.

The arguments are built in one place (``run_kwargs``) because a container
started ahead (``prestart``) is handed over only to a start whose arguments are
exactly its own.  Once started, a container is used only if the host can kill
its processes by cgroup and our tools are mounted where we run them
(``ready``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb.pids import alive
from pytest_reb.sizes import size_bytes
from pytest_reb.targets import bytecode, diskuse, ourtools
from pytest_reb.targets.base import labels
from pytest_reb.targets.cgroup import Cgroup, CgroupError
from pytest_reb.targets.errors import InfraError, TargetError
from pytest_reb.targets.mounts import SEED_MOUNT, harness_mounts

#: Who runs what: our keep-alive as nobody, commands as root (no capabilities either way).
KEEPALIVE_USER = "65534:65534"
COMMAND_USER = "0:0"


@dataclass(frozen=True)
class Limits:
    """Resource limits every container gets (the image is hostile)."""

    memory: str = "16g"
    pids: int = 2048
    shm: str = "2g"
    network: str = "none"
    #: the most the container may hold on disk: layer, volumes, unlinked files (``--reb-disk``)
    disk: str = "20g"
    #: relative CPU weight when the machine's cores are contended (the engine's default: 1024)
    cpu_shares: int | None = None

    def __post_init__(self) -> None:
        self.disk_bytes()  # a size the engine's units cannot read is a usage error, at once

    def disk_bytes(self) -> int:
        """``disk`` in bytes (``20g``, ``512m``, ``1024``); ValueError if it is not a size."""
        try:
            return size_bytes(self.disk)
        except ValueError as exc:
            raise ValueError(f"--reb-disk: {exc}") from None


@dataclass
class Mounts:
    """What of the host every container made from now on sees besides our tools."""

    #: container path -> host folder, mounted read-only beside the tools (assets, shims)
    folders: dict[str, str] = field(default_factory=dict)
    #: where a tmpfs goes over a mounted folder (sized at start, ``run_kwargs``)
    tmpfs: dict[str, str] = field(default_factory=dict)
    #: tmpfs mount point -> where its host content is mounted read-only, to link from
    seeds: dict[str, str] = field(default_factory=dict)

    def add(self, host_dir: str, at: str, scratch: Sequence[str]) -> bool:
        """``host_dir`` at ``at``, a tmpfs over each ``scratch`` subfolder seeded with links
        to what the host folder holds there (``seed``); whether anything changed (then the
        containers already running lack it)."""
        tmpfs = {f"{at}/{sub}": "" for sub in scratch}
        if self.folders.get(at) == host_dir and tmpfs.keys() <= self.tmpfs.keys():
            return False
        self.folders[at] = host_dir
        self.tmpfs.update(tmpfs)
        for sub in scratch:  # what prepare put there stays visible, as links
            seed = f"{SEED_MOUNT}/{len(self.seeds)}"
            self.folders[seed] = str(Path(host_dir, sub))
            self.seeds[f"{at}/{sub}"] = seed
        return True

    def copy(self) -> Mounts:
        return Mounts(dict(self.folders), dict(self.tmpfs), dict(self.seeds))


def run_kwargs(image: str, run_id: str, limits: Limits, key: str, mounts: Mounts,
               kept: Path | None) -> dict[str, Any]:
    """The arguments of ``containers.run`` for the container of device profile ``key``
    (``cpu``, or the GPU ids joined by commas) of ``image``: our tools, ``mounts`` and the
    image's ``kept`` bytecode (``bytecode``) read-only, every tmpfs sized."""
    devices = [] if key == "cpu" else key.split(",")
    from docker.types import DeviceRequest, Mount

    try:
        ours = harness_mounts()
    except ourtools.ToolError as exc:
        raise TargetError(str(exc)) from None
    kwargs: dict[str, Any] = dict(
        entrypoint=[ourtools.BUSYBOX, "sleep", "2147483647"], detach=True, init=True,
        user=KEEPALIVE_USER, healthcheck={"test": ["NONE"]}, stop_signal="SIGKILL",
        # with no network the container's own name does not resolve, and torchrun's
        # rendezvous retries it forever: name it what /etc/hosts always resolves
        hostname="localhost",
        network_mode=limits.network, cap_drop=["ALL"],
        security_opt=["no-new-privileges"], pids_limit=limits.pids,
        mem_limit=limits.memory, memswap_limit=limits.memory,
        shm_size=limits.shm,
        **({"cpu_shares": limits.cpu_shares} if limits.cpu_shares else {}),
        labels=labels(run_id, **{"reb.target": image[:200], "reb.profile": key}),
        mounts=[Mount(dst, src, type="bind", read_only=True)
                for dst, src in {**ours, **mounts.folders,
                                 **({} if kept is None else {bytecode.MOUNT: str(kept)})}.items()],
        # sized, so a tmpfs cannot grow past what the memory limit would allow anyway
        tmpfs={at: f"size={limits.memory}"
               for at in [*mounts.tmpfs, *([bytecode.PYCACHE_DIR] if kept else [])]},
    )
    if devices:
        kwargs["device_requests"] = [DeviceRequest(device_ids=devices,
                                                   capabilities=[["gpu"]])]
    return kwargs


def ready(ctr: Any, image: str,
          seeds: Mapping[str, str]) -> tuple[Cgroup, set[int], dict[str, int]]:
    """A container of ``image`` just started, made ready for commands: its cgroup and the
    pids the sweep spares (``keepalive``), what its volumes held at start (the baseline of
    ``--reb-disk``: dir -> bytes), its scratch tmpfs seeded (``seed``).  A container that
    cannot be made ready is removed, its volumes with it, and the ``TargetError`` raised."""
    try:
        cgroup, keep = keepalive(ctr, image)
        volumes = {d: diskuse.tree_bytes(d) for d in diskuse.volume_dirs(ctr.attrs)}
        seed(ctr, seeds)
    except TargetError:
        with contextlib.suppress(Exception):
            ctr.remove(force=True, v=True)
        raise
    return cgroup, keep, volumes


def keepalive(ctr: Any, image: str) -> tuple[Cgroup, set[int]]:
    """The container's cgroup, and the host pids of its init and our ``sleep``: all the
    sweep must spare.

    Read once the keep-alive exists (init starts it a moment after the
    container), so a sweep can never take it for a leftover.  Our tools
    must be mounted where we run them: an image whose ``/.reb`` is a
    symlink moved the mount elsewhere, and is refused.
    """
    ctr.reload()
    init = int(ctr.attrs["State"]["Pid"])
    try:
        cgroup = Cgroup.of_pid(init)
    except CgroupError as exc:
        raise TargetError(f"cannot kill by cgroup, so cannot run {image!r} safely: "
                          f"{exc}") from None
    try:
        points = [line.split()[4] for line in
                  Path(f"/proc/{init}/mountinfo").read_text().splitlines()]
    except OSError as exc:
        if not alive(init):  # removed or killed from outside as it started: the machine's
            raise InfraError(f"container {ctr.name} was lost as it started: {exc}") from None
        raise TargetError(f"cannot read the mounts of {ctr.name}: {exc}") from None
    if ourtools.TOOLS_MOUNT not in points:
        raise TargetError(f"{image!r} moves our tools' mount away from "
                          f"{ourtools.TOOLS_MOUNT} (a symlink there?); refusing to run it")
    deadline = time.monotonic() + 10
    while True:
        pids = cgroup.pids()
        if len(pids) >= 2 or time.monotonic() > deadline:
            return cgroup, pids
        time.sleep(0.02)


def seed(ctr: Any, seeds: Mapping[str, str]) -> None:
    """Fill each tmpfs of ``seeds`` (mount point -> where its host content is mounted) with
    links to that content, by our busybox's ``cp -rs``: what ``prepare`` put in a scratch
    folder stays readable there while the run writes beside it."""
    for dest, source in seeds.items():
        seeded = ctr.exec_run([*ourtools.util("cp"), "-rs", f"{source}/.", dest],
                              user=COMMAND_USER)
        if seeded.exit_code != 0:
            raise TargetError(f"cannot link the prepared files into {dest}: "
                              f"{seeded.output.decode(errors='replace')[-300:]}")
