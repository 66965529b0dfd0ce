"""Hardened containers from one image: the target the benchmark's images are run as.

``DockerTarget`` makes containers with the Docker SDK, lazily, one per device
profile: a ``cpu`` one with no GPU devices and a ``gpu`` one per lease.  It
never pulls.  Nothing of the image is part of the harness: the keep-alive,
the shell and the utilities of our own commands are our static busybox
(``ourtools``), the init is Docker's own, the timeout is the host's clock and
signals, processes are killed by the container's cgroup (``cgroup``), files
are copied out through the archive API.  The image's ``HEALTHCHECK``,
``ENTRYPOINT``, ``CMD``, ``USER`` and ``STOPSIGNAL`` are overridden; its
``ENV`` and ``WORKDIR`` stay: they are the environment under test, data to
the commands, not code of ours.  The keep-alive runs as ``nobody`` and
commands as root without capabilities, so no command can signal it.

What the container holds on disk is watched while a command runs: the
writable layer (``SizeRw``), what its volumes (an image ``VOLUME``) gained,
and unlinked files its processes hold open (``diskuse``), looked at with the
container frozen whenever its filesystems' used bytes say it may have passed
the limit (``diskuse.Bound``), so the target can neither pace nor see those
looks.  A command that
grows it past ``--reb-disk`` is killed, its container removed (layer and
volumes with it: every removal passes ``v=True``), and the result says
``disk_limited``; tmpfs mounts get an explicit size.  A quota (``storage_opt``)
would bound the layer in the kernel, but only overlay2 on xfs with ``pquota``
supports one.

One class (the archive readers are in ``archive``, the freezer in
``cgroup``): a little past the usual size, but one cohesive thing, every
method about the same containers.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pytest_reb import witness
from pytest_reb.evidence.gpu_use import GpuWatch, host_gpus
from pytest_reb.pids import alive
from pytest_reb.sizes import size_bytes
from pytest_reb.targets import bytecode, counters, diskuse, hostview, ourtools, precompile
from pytest_reb.targets.archive import archive_file
from pytest_reb.targets.base import (
    HOST_SLACK,
    KILL_GRACE,
    InfraError,
    Layers,
    Profile,
    Target,
    TargetError,
    labels,
)
from pytest_reb.targets.cgroup import Cgroup, CgroupError
from pytest_reb.targets.mounts import SEED_MOUNT, harness_mounts
from pytest_reb.targets.prestart import Prestarted
from pytest_reb.targets.result import ExecResult, TailBuffer, finish
from pytest_reb.witness import observe

#: Who runs what: our keep-alive as nobody, commands as root (no capabilities either way).
KEEPALIVE_USER = "65534:65534"
COMMAND_USER = "0:0"
#: The CPU weight of a background sibling's containers (``Target.sibling``): a quarter of the
#: engine's default 1024, so under contention the foreground gets four fifths of the cores.
BACKGROUND_SHARES = 256
#: Seconds between two looks at the writable layer while a command runs (at least).
DISK_POLL = 1.0


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



def image_labels(image: str) -> dict[str, str]:
    """The labels of ``image`` on this host's engine: metadata, never the image's files;
    none when there is no such image or no engine answers (a GPU machine verifying itself
    through ``local://`` need not have the Docker SDK)."""
    try:
        import docker

        attrs = docker.from_env().api.inspect_image(image)
    except Exception:
        return {}
    return dict((attrs.get("Config") or {}).get("Labels") or {})


class DockerTarget(Target):
    """Hardened containers from one image, one per device profile, made lazily.

    Containers are labelled ``reb.run`` and ``reb.target`` so ``reb gc`` can
    remove what a SIGKILLed run left; ``close`` removes them on every other
    exit path.  Processes are killed from the host (the daemon is local), so
    the image's own ``kill`` or shell is never trusted.
    """

    evidence_channel = "host view of the container's processes"

    def __init__(self, image: str, *, run_id: str, gpus: Sequence[str] | None = None,
                 limits: Limits | None = None, client: Any = None) -> None:
        import docker
        from docker.errors import DockerException, ImageNotFound
        from requests.exceptions import RequestException

        self.image = image
        self.name = image
        self.run_id = run_id
        self.limits = limits or Limits()
        try:
            self.client = client or docker.from_env()
            self.client.ping()
        except (DockerException, RequestException) as exc:  # a socket gone: requests' own
            raise TargetError(f"the Docker daemon does not answer: {exc}") from None
        try:
            got = self.client.images.get(image)
            self.image_id = got.id
            #: the image's own ``ENV``: what a command's env setting the same name would hide
            env = (got.attrs.get("Config") or {}).get("Env") or ()
            self._image_env: dict[str, str] = dict(e.split("=", 1) for e in env if "=" in e)
        except ImageNotFound:
            raise TargetError(
                f"image {image!r} is not on this Docker engine (pytest-reb never pulls; "
                "build or load it first)") from None
        except (DockerException, RequestException) as exc:  # gone between the two
            raise TargetError(f"the Docker daemon does not answer: {exc}") from None
        self.gpus = list(gpus) if gpus is not None else host_gpus()
        self._containers: dict[str, Any] = {}
        self._keep: dict[str, set[int]] = {}
        self._cgroups: dict[str, Cgroup] = {}
        #: per container, its volumes' host directories -> bytes they held at its start
        self._volumes: dict[str, dict[str, int]] = {}
        #: per container, the bytes it held when its last command ended (nothing of it ran)
        self._settled: dict[str, int] = {}
        self._root_dir: str | None = ""  # not read yet (``_data_root``)
        self._lock = threading.Lock()
        #: container path -> host folder, mounted read-only beside the tools (assets, shims)
        self.extra_mounts: dict[str, str] = {}
        self.tmpfs: dict[str, str] = {}
        #: tmpfs mount point -> where its host content is mounted read-only, to link from
        self.seeds: dict[str, str] = {}
        self._twin: DockerTarget | None = None
        self._retired = False
        #: containers started ahead of their first use (``prestart``), shared with the copies;
        #: removed, those nobody took, when this target (the one that started them) closes
        self._prestarted: Prestarted | None = None
        self._owns_prestarted = False
        #: the host folder of this image's kept bytecode (``bytecode``), mounted read-only
        self.bytecode = bytecode.kept_dir(self.image_id)

    # -- containers

    def container(self, devices: Sequence[str] = ()) -> Any:
        """The running container that sees ``devices`` (none: the CPU profile), made on first use.

        One container per device set: Docker cannot change a running
        container's devices, and a lease of other GPUs needs other devices.
        A container that died is replaced.
        """
        from docker.errors import DockerException
        from requests.exceptions import RequestException

        try:
            return self._container(",".join(devices) or "cpu")
        except (DockerException, RequestException) as exc:
            raise InfraError(f"the Docker engine failed: {type(exc).__name__}: "
                             f"{str(exc)[:300]}") from None

    def warm(self) -> None:
        with contextlib.suppress(Exception):  # the first command meets it again and says it
            self.container()

    def _container(self, key: str) -> Any:
        with self._lock:
            if self._retired:
                raise InfraError(f"the run is done with this target of {self.image!r} (retired)")
            ctr = self._containers.get(key)
            if ctr is not None:
                with contextlib.suppress(Exception):
                    ctr.reload()
                if ctr.status == "running":
                    return ctr
                self._remove(key)
            ctr = self._start(key)
            self._containers[key] = ctr
            return ctr

    def _run_kwargs(self, key: str) -> dict[str, Any]:
        """The arguments of ``containers.run`` for the container of device profile ``key``."""
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
            network_mode=self.limits.network, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], pids_limit=self.limits.pids,
            mem_limit=self.limits.memory, memswap_limit=self.limits.memory,
            shm_size=self.limits.shm,
            **({"cpu_shares": self.limits.cpu_shares} if self.limits.cpu_shares else {}),
            labels=labels(self.run_id, **{"reb.target": self.image[:200], "reb.profile": key}),
            mounts=[Mount(dst, src, type="bind", read_only=True)
                    for dst, src in {**ours, **self.extra_mounts,
                                     **self._bytecode_mount()}.items()],
            # sized, so a tmpfs cannot grow past what the memory limit would allow anyway
            tmpfs={at: f"size={self.limits.memory}"
                   for at in [*self.tmpfs, *([bytecode.PYCACHE_DIR] if self.bytecode else [])]},
        )
        if devices:
            kwargs["device_requests"] = [DeviceRequest(device_ids=devices,
                                                       capabilities=[["gpu"]])]
        return kwargs

    def _start(self, key: str) -> Any:
        from docker.errors import APIError

        kwargs = self._run_kwargs(key)
        ctr = self._prestarted.take(kwargs) if self._prestarted is not None else None
        if ctr is None:
            try:  # the image id checked at the target's making
                ctr = self.client.containers.run(self.image_id, **kwargs)
            except APIError as exc:
                raise TargetError(f"cannot start a container from {self.image!r}: "
                                  f"{exc.explanation or exc}") from None
        try:
            self._cgroups[key], self._keep[key] = self._keepalive(ctr)
            self._volumes[key] = {d: diskuse.tree_bytes(d) for d in diskuse.volume_dirs(ctr.attrs)}
            for dest, seed in self.seeds.items():
                seeded = ctr.exec_run([*ourtools.util("cp"), "-rs", f"{seed}/.", dest],
                                      user=COMMAND_USER)
                if seeded.exit_code != 0:
                    raise TargetError(f"cannot link the prepared files into {dest}: "
                                      f"{seeded.output.decode(errors='replace')[-300:]}")
        except TargetError:
            with contextlib.suppress(Exception):
                ctr.remove(force=True, v=True)
            raise
        return ctr

    def _keepalive(self, ctr: Any) -> tuple[Cgroup, set[int]]:
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
            raise TargetError(f"cannot kill by cgroup, so cannot run {self.image!r} safely: "
                              f"{exc}") from None
        try:
            points = [line.split()[4] for line in
                      Path(f"/proc/{init}/mountinfo").read_text().splitlines()]
        except OSError as exc:
            if not alive(init):  # removed or killed from outside as it started: the machine's
                raise InfraError(f"container {ctr.name} was lost as it started: {exc}") from None
            raise TargetError(f"cannot read the mounts of {ctr.name}: {exc}") from None
        if ourtools.TOOLS_MOUNT not in points:
            raise TargetError(f"{self.image!r} moves our tools' mount away from "
                              f"{ourtools.TOOLS_MOUNT} (a symlink there?); refusing to run it")
        deadline = time.monotonic() + 10
        while True:
            pids = cgroup.pids()
            if len(pids) >= 2 or time.monotonic() > deadline:
                return cgroup, pids
            time.sleep(0.02)

    def _bytecode_mount(self) -> dict[str, str]:
        return {} if self.bytecode is None else {bytecode.MOUNT: str(self.bytecode)}

    def prepare_bytecode(self, python: Callable[[Target], str | None],
                         scripts: Sequence[str]) -> None:
        if self.bytecode is not None:
            precompile.start(self, self.bytecode, python, scripts, self._not_kept())

    def stage_bytecode(self, profile: Profile, gpus: Sequence[str]) -> dict[str, str]:
        precompile.wait(self.bytecode)
        made = bytecode.seed(self, profile, gpus) if self.bytecode is not None else None
        return made or super().stage_bytecode(profile, gpus)

    def kept_bytecode(self) -> dict[str, str]:
        precompile.wait(self.bytecode)
        if self.bytecode is None or not bytecode.kept_any(self.bytecode):
            return {}
        return {bytecode.PYCACHE_ENV: bytecode.MOUNT}

    def keep_bytecode(self, env: Mapping[str, str], profile: Profile,
                      gpus: Sequence[str]) -> dict[str, int] | None:
        if self.bytecode is None:
            return None
        found = bytecode.keep(self, self.bytecode, env, self.devices(profile, gpus),
                              self._not_kept())
        before = precompile.wait(self.bytecode, 0)
        if found is not None and before is not None:  # what the host compiled before it
            found["compiled_before"] = int(before.get("compiled", 0))
            found["compiled_before_s"] = float(before.get("seconds", 0.0))
        return found

    def _not_kept(self) -> list[str]:
        """Where no source is compiled and kept: our mounts and the container's own."""
        return [ourtools.TOOLS_MOUNT, "/opt/reb", *self.mounted(), *self.tmpfs,
                bytecode.PYCACHE_DIR, "/proc", "/sys", "/dev"]

    def own_env(self, name: str) -> str | None:
        return self._image_env.get(name)

    def host_view(self, devices: Sequence[str] = ()) -> hostview.HostView | None:
        """The root of the container that sees ``devices`` (made if it is not running yet),
        through ``/proc/<pid of its init>/root``, once it is checked to be this engine's
        container on this host."""
        ctr = self.container(devices)
        with contextlib.suppress(Exception):
            ctr.reload()
        pid = (ctr.attrs.get("State") or {}).get("Pid")
        if not isinstance(pid, int) or pid <= 0:
            return None
        try:
            with open(f"/proc/{pid}/cgroup", encoding="utf-8") as fh:
                if ctr.id not in fh.read():
                    return None  # the engine is not local: that pid is someone else
            os.listdir(f"/proc/{pid}/root/")
        except OSError:
            return None
        root = hostview.HostView(f"/proc/{pid}/root")
        root.has_gpu_devices = bool(devices) and hostview.gpu_nodes(root)
        return root

    def layers(self, devices: Sequence[str] = ()) -> Layers | None:
        """The overlay of the container that sees ``devices``, from the engine's metadata."""
        ctr = self.container(devices)
        with contextlib.suppress(Exception):
            ctr.reload()
        data = (ctr.attrs.get("GraphDriver") or {}).get("Data") or {}
        pid = (ctr.attrs.get("State") or {}).get("Pid")
        upper = data.get("UpperDir")
        if not (isinstance(pid, int) and pid > 0 and upper and os.path.isdir(upper)):
            return None
        return Layers(pid, upper, tuple(d for d in (data.get("LowerDir") or "").split(":") if d))

    @contextlib.contextmanager
    def frozen_view(self, devices: Sequence[str] = ()) -> Iterator[hostview.HostView | None]:
        """The container paused (the cgroup freezer) for the block, so a process of the image
        cannot swap a checked folder for a link between the host's check and its open; a
        container gone afterwards, or whose init is no longer the one read through, was lost
        under the read: ``InfraError``, whatever the read made of its vanishing files."""
        found = self.host_view(devices)
        if found is None:
            yield found
            return
        ctr = self.container(devices)
        pid = int(found.root.split("/")[2])
        for attempt in range(hostview.FREEZE_TRIES):  # a busy cgroup's freezer times out
            try:
                ctr.pause()
                break
            except Exception as exc:
                if attempt == hostview.FREEZE_TRIES - 1:
                    raise InfraError(f"cannot freeze container {ctr.name} for the host-side "
                                     f"read: {str(exc)[:200]}") from None
                time.sleep(0.2 * (attempt + 1))
        try:
            yield found
        except BaseException:
            lost = hostview._thaw(ctr, pid)
            if lost:
                raise InfraError(lost) from None
            raise
        lost = hostview._thaw(ctr, pid)
        if lost:
            raise InfraError(lost)

    def image_env(self, name: str) -> str | None:
        return self._image_env.get(name)

    @contextlib.contextmanager
    def tar_of(self, path: str) -> Iterator[IO[bytes]]:
        """Through a created, never started container of the image and the engine's archive
        API (its anonymous volumes go with it)."""
        from docker.errors import DockerException

        ctr = None
        try:
            ctr = self.client.containers.create(
                self.image_id, entrypoint=["true"], network_mode="none",
                labels=labels(self.run_id, **{"reb.profile": "assets"}))
            stream, _ = ctr.get_archive(path)
            data = io.BytesIO(b"".join(stream))
        except DockerException as exc:
            raise TargetError(str(exc)[:200]) from None
        finally:
            if ctr is not None:
                with contextlib.suppress(Exception):
                    ctr.remove(force=True, v=True)
        yield data

    def util(self, name: str) -> list[str]:
        return ourtools.util(name)

    def stopping(self, argv: Sequence[str], after: float, sig: str) -> list[str]:
        # busybox's timeout execs the command in place: its exit status is the command's own
        return [*ourtools.util("timeout"), f"-s{sig.removeprefix('SIG')}", f"{after:g}", *argv]

    def _remove(self, key: str) -> None:
        self._cgroups.pop(key, None)
        self._volumes.pop(key, None)
        self._settled.pop(key, None)
        ctr = self._containers.pop(key, None)
        if ctr is not None:
            with contextlib.suppress(Exception):
                ctr.remove(force=True, v=True)  # the image's VOLUMEs are anonymous volumes

    def close(self) -> None:
        with self._lock:
            twin, self._twin = self._twin, None
        closing = None
        if twin is not None:  # the engine removes the two side by side
            closing = threading.Thread(target=twin.close, name="reb-twin-close")
            closing.start()
        with self._lock:
            for key in list(self._containers):
                self._remove(key)
            prestarted = self._prestarted if self._owns_prestarted else None
        if prestarted is not None:
            prestarted.close()
        if closing is not None:
            closing.join()

    def prestart(self, *, plain: int, background: int) -> None:
        """Start, now and in the background, the CPU-profile containers a pyramid's first
        tiers will ask for: ``plain`` with this target's own limits (the serial target, the
        first lane, a twin of either), ``background`` with a lane's lower CPU weight (the
        second lane and its twin).  A later start with exactly these arguments takes one
        (``prestart.py``); any other starts its own.  Never raises: a container that fails
        here is started again, and fails, where it is asked for."""
        with contextlib.suppress(Exception):
            pool = Prestarted(self.client, self.image_id)
            plain_args = self._run_kwargs("cpu")
            low_args = self.sibling(background=True)._run_kwargs("cpu")
            with self._lock:
                if self._retired or self._prestarted is not None:
                    return
                self._prestarted, self._owns_prestarted = pool, True
            # the first of each kind (the lanes', the serial target's) before the others (twins)
            first = [plain_args] * min(plain, 1) + [low_args] * min(background, 1)
            pool.start(first, [plain_args] * (plain - 1) + [low_args] * (background - 1))

    def twin(self) -> DockerTarget:
        """Containers of their own, from the same image id, limits and mounts (``Target.twin``)."""
        with self._lock:
            if self._twin is None:
                self._twin = self._copy()
            return self._twin

    def sibling(self, *, background: bool = False) -> DockerTarget:
        """Containers of their own, from the same image id, limits and mounts, that this
        target's ``close`` and ``mount`` leave alone (``Target.sibling``); ``background``
        ones get a quarter of the default CPU weight."""
        with self._lock:
            made = self._copy()
        if background:
            made.limits = dataclasses.replace(self.limits, cpu_shares=BACKGROUND_SHARES)
        return made

    def _copy(self) -> DockerTarget:
        """This target with no container yet: the same image id, client, limits and mounts
        (called with the lock held)."""
        made = copy.copy(self)
        made._containers, made._keep, made._cgroups, made._volumes = {}, {}, {}, {}
        made._lock, made._twin, made._retired = threading.Lock(), None, False
        made._owns_prestarted = False  # the copies take from the pool; its maker removes it
        made.extra_mounts, made.tmpfs = dict(self.extra_mounts), dict(self.tmpfs)
        made.seeds = dict(self.seeds)
        made.__dict__.pop("_observed", None)
        return made

    def retire(self) -> None:
        with self._lock:
            self._retired = True
        self.close()

    def mount(self, host_dir: str, at: str, scratch: Sequence[str] = ()) -> str | None:
        """Mount ``host_dir`` read-only at ``at`` in every container made from now on.

        Each ``scratch`` subfolder gets a tmpfs over it (its mount point is
        made in ``host_dir``), filled at start with links to what the host
        folder holds there: a prepared model in ``cache/`` stays readable while
        the run writes its own cache files beside it, in memory, privately.
        Containers already running cannot gain a mount, so a new one removes
        them; the next command starts them again.
        """
        for sub in scratch:
            Path(host_dir, sub).mkdir(parents=True, exist_ok=True)
        tmpfs = {f"{at}/{sub}": "" for sub in scratch}  # sized at start (``_start``)
        twin = None
        with self._lock:
            if self.extra_mounts.get(at) != host_dir or not tmpfs.keys() <= self.tmpfs.keys():
                self.extra_mounts[at] = host_dir
                self.tmpfs.update(tmpfs)
                for sub in scratch:  # what prepare put there stays visible, as links
                    seed = f"{SEED_MOUNT}/{len(self.seeds)}"
                    self.extra_mounts[seed] = str(Path(host_dir, sub))
                    self.seeds[f"{at}/{sub}"] = seed
                for key in list(self._containers):
                    self._remove(key)
                twin, self._twin = self._twin, None  # the next twin copies the new mounts
        if twin is not None:
            twin.close()
        return at

    def mounted(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self.extra_mounts)

    # -- processes

    def _run_pids(self, key: str) -> list[int]:
        """Host pids of the container's processes but its keep-alive (none if it is gone)."""
        cgroup = self._cgroups.get(key)
        return sorted(cgroup.pids() - self._keep.get(key, set())) if cgroup else []

    def _sweep(self, key: str) -> int:
        """Kill every process of the container but its keep-alive, frozen: forkers included."""
        cgroup = self._cgroups.get(key)
        return cgroup.kill_all(self._keep.get(key, set())) if cgroup else 0

    def _disk_used(self, key: str, ctr: Any) -> int | None:
        """Bytes the container holds on disk, or None: its writable layer (the engine's
        ``SizeRw``), its volumes' growth and the unlinked files its processes hold."""
        with contextlib.suppress(Exception):
            rows = self.client.api.containers(all=True, filters={"id": ctr.id}, size=True)
            if not rows:
                return None
            cgroup = self._cgroups.get(key)
            return (int(rows[0].get("SizeRw") or 0)
                    + diskuse.volumes_growth(self._volumes.get(key, {}))
                    + diskuse.unlinked_bytes(cgroup.pids() if cgroup else ()))
        return None

    # -- exec

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        from docker.errors import DockerException
        from requests.exceptions import RequestException

        key = ",".join(devices) or "cpu"
        ctr = self.container(devices)
        if not devices:
            env["CUDA_VISIBLE_DEVICES"] = ""
        api = self.client.api
        out, err = TailBuffer(), TailBuffer()
        oom_before = counters.oom_kills(ctr.id)
        pids_before = counters.pids_refusals(ctr.id)
        cpu_before = counters.cpu_seconds(ctr.id)
        wait_before = counters.cpu_wait_seconds(ctr.id)
        hits_before = counters.memory_limit_hits(ctr.id, begin=True)
        bound = self._bound(key, ctr)  # before the command: nothing of it can move the anchor
        start = time.monotonic()
        try:
            exec_id = api.exec_create(ctr.id, argv, environment=env or None,
                                      workdir=cwd or None, user=COMMAND_USER)["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=True)
        except (DockerException, RequestException) as exc:
            raise InfraError(f"cannot exec in {ctr.name}: {str(exc)[:300]}") from None

        def pump() -> None:
            with contextlib.suppress(Exception):
                for o, e in stream:
                    if o:
                        out.feed(o)
                    if e:
                        err.feed(e)

        reader = threading.Thread(target=pump, name="reb-exec", daemon=True)
        watch = GpuWatch(lambda: self._run_pids(key), devices) if devices else None
        with watch or contextlib.nullcontext(), self.observing(env, lambda: self._run_pids(key)):
            reader.start()
            disk = self._watch(key, ctr, reader, start + timeout, bound)
            killed = disk is None and reader.is_alive()
            wait_after = counters.cpu_wait_seconds(ctr.id)  # before a kill ends its tasks
            self._stop(key, reader, timed_out=killed)
        exit_code: int | None = None
        with contextlib.suppress(Exception):
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        if killed:  # what coreutils ``timeout`` says: 124, or 137 once KILL was needed
            exit_code = 137 if exit_code in (137, None) else 124
        duration = time.monotonic() - start
        cpu_after = counters.cpu_seconds(ctr.id)
        leftovers = 0
        with contextlib.suppress(Exception):
            leftovers = self._sweep(key)
        if disk is None:
            used = self._disk_used(key, ctr)  # a writer quicker than one look
            disk = used if used is not None and used > self.limits.disk_bytes() else None
            if disk is None and used is not None:
                self._settled[key] = used  # swept: nothing of the container changes it now
        oom_after = counters.oom_kills(ctr.id)
        hits_after = counters.memory_limit_hits(ctr.id)
        pids_after = counters.pids_refusals(ctr.id)
        if disk is not None:  # its layer goes with it: the next command starts clean
            with self._lock:
                self._remove(key)
        elif not killed:
            self._check_alive(ctr, key)
        res = ExecResult(argv, exit_code, out.text(), err.text(), duration,
                         killed_by_host=killed, stdout_bytes=out.total, stderr_bytes=err.total,
                         oom_killed=counters.grew(oom_before, oom_after) is True,
                         pids_limited=counters.grew(pids_before, pids_after) is True,
                         gpu_evidence_channel=self.evidence_channel, leftovers_killed=leftovers,
                         disk_limited=disk is not None, disk_used=disk,
                         cpu_seconds=(None if cpu_before is None or cpu_after is None
                                      else round(cpu_after - cpu_before, 3)),
                         cpu_wait_seconds=(None if wait_before is None or wait_after is None
                                           else round(max(0.0, wait_after - wait_before), 3)),
                         memory_limit_hit=counters.grew(hits_before, hits_after))
        return finish(res, timeout, watch)

    def _bound(self, key: str, ctr: Any) -> diskuse.Bound:
        """The disk bound of the command about to run, anchored while no process of the
        container but the keep-alive runs: at the figure the last command ended with, else
        at a look taken now."""
        bound = diskuse.Bound(self.limits.disk_bytes(),
                              diskuse.holding_paths(ctr.attrs, self._data_root()))
        settled = self._settled.pop(key, None)
        if settled is None:
            settled = self._disk_used(key, ctr)
        if settled is not None:
            bound.anchor(settled)
        return bound

    def _watch(self, key: str, ctr: Any, reader: threading.Thread, deadline: float,
               bound: diskuse.Bound) -> int | None:
        """Wait for the command until ``deadline``, bounding its disk use meanwhile;
        the bytes it holds once past ``--reb-disk`` (the command is then stopped), else None.

        Every ``diskuse.TICK`` the filesystems holding its files are read (O(1)); when
        they say it may be past the limit, the exact look is taken with it frozen.  A
        periodic exact look, unfrozen, stays as the backstop; it costs what the engine
        spends walking the layer, so the next one waits five times as long as it took.
        """
        limit = bound.limit
        cgroup = self._cgroups.get(key)
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
                used = diskuse.frozen_look(freeze, lambda: self._disk_used(key, ctr), bound)
            elif time.monotonic() >= backstop:
                began = time.monotonic()
                used = self._disk_used(key, ctr)
                pause = max(DISK_POLL, 5 * (time.monotonic() - began))
                backstop = time.monotonic() + pause
            else:
                continue
            if used is not None and used > limit:
                return used
        return None

    def _data_root(self) -> str | None:
        """The engine's data root (``DockerRootDir``), read once: where a storage driver
        without an upper directory keeps the layers."""
        if self._root_dir == "":
            self._root_dir = None
            with contextlib.suppress(Exception):
                self._root_dir = self.client.info().get("DockerRootDir")
        return self._root_dir

    def _stop(self, key: str, reader: threading.Thread, *, timed_out: bool) -> None:
        """Stop a command still running: at its timeout TERM, then KILL after ``KILL_GRACE``,
        both to every process but the keep-alive (the host's own timeout: no binary of the
        image, nor one of ours that the image could signal); past the limit at once KILL.
        A stream still open after that means the container goes."""
        if not reader.is_alive():
            return
        cgroup = self._cgroups.get(key)
        keep = self._keep.get(key, set())
        if cgroup is not None:
            with contextlib.suppress(OSError):
                if timed_out:  # a process stopped (for the witness) takes TERM once continued
                    cgroup.signal_all(signal.SIGTERM, keep)
                    cgroup.signal_all(signal.SIGCONT, keep)
                    reader.join(KILL_GRACE)
                cgroup.kill_all(keep)
        reader.join(HOST_SLACK)
        if reader.is_alive():  # the exec stream is wedged: the container goes
            with self._lock:
                self._remove(key)

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        return archive_file(self.container(), path, limit)

    def witness_library(self) -> str | None:
        return f"{witness.MOUNT}/{witness.LIBRARY}" if witness.library_dir() else None

    def witness_observed(self) -> observe.Library | None:
        built = witness.library_path()
        return observe.Library(built, f"{witness.MOUNT}/{witness.LIBRARY}") if built else None

    def take_record(self, path: str, devices: Sequence[str]) -> str:
        """Read after the sweep killed every leftover, so nothing of the run writes it any more."""
        data = archive_file(self.container(devices), path, 1 << 20)
        return data.decode("utf-8", errors="replace") if data else ""

    def _check_alive(self, ctr: Any, key: str) -> None:
        """A container that stopped under a command is an infrastructure failure.

        Its init and keep-alive are looked at first: a container killed from
        outside ends the command's stream before the engine says it stopped,
        and the sweep is quick enough to ask the engine in between.
        """
        from docker.errors import DockerException
        from requests.exceptions import RequestException

        gone = [pid for pid in self._keep.get(key, ()) if not alive(pid)]
        if gone:
            raise InfraError(f"container {ctr.name} stopped during the command (its init or "
                             f"keep-alive died: host pids {sorted(gone)})")

        try:
            ctr.reload()
        except (DockerException, RequestException) as exc:
            raise InfraError(f"container {ctr.name} vanished during the command: "
                             f"{str(exc)[:200]}") from None
        if ctr.status != "running":
            state = ctr.attrs.get("State", {})
            raise InfraError(f"container {ctr.name} stopped during the command (status "
                             f"{ctr.status}, exit {state.get('ExitCode')}, "
                             f"OOMKilled {state.get('OOMKilled')})")

    @property
    def host(self) -> Any:
        import testinfra

        return testinfra.get_host(f"docker://{self.container().id}")
