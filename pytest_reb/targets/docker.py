"""Hardened containers from one image: the target the benchmark's images are run as.

``DockerTarget`` makes containers with the Docker SDK, lazily, one per device
profile: a ``cpu`` one with no GPU devices and a ``gpu`` one per lease.  It
never pulls.  Nothing of the image is part of the harness: how a container is
made and what it must show once started is ``container``'s; a command's stream,
its stop by the host's clock and signals and the check that its container
survived are ``dockerexec``'s; processes are killed by the container's cgroup
(``cgroup``); ``--reb-disk`` is watched while a command runs (``diskwatch``): a
command past it is killed, its container removed (layer and volumes with it:
every removal passes ``v=True``), and the result says ``disk_limited``.  Files
are copied out through the archive API (``archive``) or read through the
host's view of the container's root (``hostview``).

This class keeps what ties those together: one container per device profile,
made on first use and replaced when it died, the twins and siblings that
share the image but no process, the mounts every new container gets, and
their removal on every exit path.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from pytest_reb import witness
from pytest_reb.evidence.gpu_use import GpuWatch, host_gpus
from pytest_reb.targets import (
    bytecode,
    container,
    counters,
    diskuse,
    diskwatch,
    dockerexec,
    hostview,
    housekeeping,
    ourtools,
    precompile,
)
from pytest_reb.targets.archive import archive_file, image_tar
from pytest_reb.targets.base import Profile, Target
from pytest_reb.targets.cgroup import Cgroup
from pytest_reb.targets.container import Limits
from pytest_reb.targets.errors import InfraError, TargetError
from pytest_reb.targets.family import Family
from pytest_reb.targets.hostview import Layers
from pytest_reb.targets.prestart import Prestarted
from pytest_reb.targets.result import ExecResult, finish
from pytest_reb.witness import observe

#: The CPU weight of a background sibling's containers (``Target.sibling``): a quarter of the
#: engine's default 1024, so under contention the foreground gets four fifths of the cores.
BACKGROUND_SHARES = 256


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
        from docker.errors import DockerException
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
        #: the image's own ``ENV``: what a command's env setting the same name would hide
        self.image_id, self._image_env = housekeeping.image_of(self.client, image)
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
        self.mounts = container.Mounts()
        self._twin: DockerTarget | None = None
        self._retired = False
        #: this target's copies (twin, siblings, theirs), retired with it (``family``)
        self._family, self._owns_family = Family(), True
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
                raise self._refusal()
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
        return container.run_kwargs(self.image, self.run_id, self.limits, key, self.mounts,
                                    self.bytecode)

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
        self._cgroups[key], self._keep[key], self._volumes[key] = container.ready(
            ctr, self.image, self.mounts.seeds)
        return ctr

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
        return [ourtools.TOOLS_MOUNT, "/opt/reb", *self.mounted(), *self.mounts.tmpfs,
                bytecode.PYCACHE_DIR, "/proc", "/sys", "/dev"]

    def own_env(self, name: str) -> str | None:
        return self._image_env.get(name)

    def host_view(self, devices: Sequence[str] = ()) -> hostview.HostView | None:
        """The root of the container that sees ``devices`` (made if it is not running yet),
        through ``/proc/<pid of its init>/root``, once it is checked to be this engine's
        container on this host."""
        return hostview.of_container(self.container(devices), devices)

    def layers(self, devices: Sequence[str] = ()) -> Layers | None:
        """The overlay of the container that sees ``devices``, from the engine's metadata."""
        return hostview.layers_of(self.container(devices))

    @contextlib.contextmanager
    def frozen_view(self, devices: Sequence[str] = ()) -> Iterator[hostview.HostView | None]:
        """The container paused for the block (``hostview.paused``): ``InfraError`` when it
        was lost under the read."""
        found = self.host_view(devices)
        if found is None:
            yield found
            return
        with hostview.paused(self.container(devices), found):
            yield found

    def image_env(self, name: str) -> str | None:
        return self._image_env.get(name)

    @contextlib.contextmanager
    def tar_of(self, path: str) -> Iterator[IO[bytes]]:
        """Through a created, never started container of the image and the engine's archive
        API (its anonymous volumes go with it)."""
        with self._lock:  # a retire waits for it: its container is gone before the clean-up
            if self._retired:
                raise self._refusal()
            archive = image_tar(self.client, self.image_id, self.run_id, path)
        yield archive

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
        made._settled = {}  # each copy's containers have disk figures of their own
        made._owns_prestarted = False  # the copies take from the pool; its maker removes it
        made.mounts = self.mounts.copy()
        made.__dict__.pop("_observed", None)
        made._owns_family = False  # shares the family; retiring a copy leaves the others
        made._retired = not self._family.join(made)  # one made after the end is born retired
        return made

    def _refusal(self) -> InfraError:
        """What a container asked of a retired target gets instead of being made."""
        return InfraError(f"the run is done with this target of {self.image!r} (retired)")

    def retire(self) -> None:
        """Also retires every copy this target or its copies made (``family``)."""
        with self._lock:
            self._retired = True
        self.close()
        if self._owns_family:
            self._family.retire()

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
        twin = None
        with self._lock:
            if self.mounts.add(host_dir, at, scratch):
                for key in list(self._containers):
                    self._remove(key)
                twin, self._twin = self._twin, None  # the next twin copies the new mounts
        if twin is not None:
            twin.close()
        return at

    def mounted(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self.mounts.folders)

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
        return diskwatch.disk_used(self.client, ctr, self._volumes.get(key, {}),
                                   self._cgroups.get(key))

    # -- exec

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        key = ",".join(devices) or "cpu"
        ctr = self.container(devices)
        if not devices:
            env["CUDA_VISIBLE_DEVICES"] = ""
        api = self.client.api
        bound = self._bound(key, ctr)  # before the command: nothing of it can move the anchor
        counted = counters.Window(ctr.id)  # read as it begins: its clock is the command's
        start = counted.began
        exec_id, reader, out, err = dockerexec.open_stream(api, ctr, argv, env, cwd)
        watch = GpuWatch(lambda: self._run_pids(key), devices) if devices else None
        with watch or contextlib.nullcontext(), self.observing(env, lambda: self._run_pids(key)):
            reader.start()
            disk = diskwatch.watch(reader, start + timeout, bound, self._cgroups.get(key),
                                   lambda: self._disk_used(key, ctr))
            killed = disk is None and reader.is_alive()
            counted.stalled()  # before a kill ends its tasks
            if dockerexec.stop(reader, self._cgroups.get(key), self._keep.get(key, set()),
                               timed_out=killed):  # the exec stream is wedged: the container goes
                with self._lock:
                    self._remove(key)
        exit_code: int | None = None
        with contextlib.suppress(Exception):
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        if killed:  # what coreutils ``timeout`` says: 124, or 137 once KILL was needed
            exit_code = 137 if exit_code in (137, None) else 124
        duration = time.monotonic() - start
        counted.ended()
        leftovers = 0
        with contextlib.suppress(Exception):
            leftovers = self._sweep(key)
        if disk is None:
            used = self._disk_used(key, ctr)  # a writer quicker than one look
            disk = used if used is not None and used > self.limits.disk_bytes() else None
            if disk is None and used is not None:
                self._settled[key] = used  # swept: nothing of the container changes it now
        figures = counted.close()
        if disk is not None:  # its layer goes with it: the next command starts clean
            with self._lock:
                self._remove(key)
        elif not killed:
            dockerexec.check_alive(ctr, self._keep.get(key, set()))
        res = ExecResult(argv, exit_code, out.text(), err.text(), duration,
                         killed_by_host=killed, stdout_bytes=out.total, stderr_bytes=err.total,
                         gpu_evidence_channel=self.evidence_channel, leftovers_killed=leftovers,
                         disk_limited=disk is not None, disk_used=disk, **figures)
        return finish(res, timeout, watch)

    def _bound(self, key: str, ctr: Any) -> diskuse.Bound:
        """The disk bound of the command about to run (``diskwatch.anchored``)."""
        return diskwatch.anchored(
            diskuse.Bound(self.limits.disk_bytes(),
                          diskuse.holding_paths(ctr.attrs, self._data_root())),
            self._settled.pop(key, None), lambda: self._disk_used(key, ctr))

    def _data_root(self) -> str | None:
        """The engine's data root (``DockerRootDir``), read once: where a storage driver
        without an upper directory keeps the layers."""
        if self._root_dir == "":
            self._root_dir = None
            with contextlib.suppress(Exception):
                self._root_dir = self.client.info().get("DockerRootDir")
        return self._root_dir

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

    @property
    def host(self) -> Any:
        import testinfra

        return testinfra.get_host(f"docker://{self.container().id}")
