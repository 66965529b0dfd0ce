"""Hardened containers from one image: the target the benchmark's images are run as.

``DockerTarget`` makes containers with the Docker SDK, lazily, one per device
profile: a ``cpu`` one with no GPU devices and a ``gpu`` one per lease.  It
never pulls.  Processes are killed from the host (the daemon is local), so the
image's own ``kill`` or shell is never trusted; files are copied out through
the archive API, so reading one runs nothing of the image.

One class with its cgroup and archive readers: past the usual size, but one
cohesive thing (every method is about the same containers).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tarfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb import witness
from pytest_reb.evidence import GpuWatch, host_gpus
from pytest_reb.target.base import (
    HOST_SLACK,
    KILL_GRACE,
    SEED_MOUNT,
    ExecResult,
    InfraError,
    TailBuffer,
    Target,
    TargetError,
    finish,
    labels,
    tool_mounts,
    wrap_timeout,
)


@dataclass(frozen=True)
class Limits:
    """Resource limits every container gets (the image is hostile)."""

    memory: str = "16g"
    pids: int = 2048
    shm: str = "2g"
    network: str = "none"


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

        self.image = image
        self.name = image
        self.run_id = run_id
        self.limits = limits or Limits()
        try:
            self.client = client or docker.from_env()
            self.client.ping()
        except DockerException as exc:
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
        self.gpus = list(gpus) if gpus is not None else host_gpus()
        self._containers: dict[str, Any] = {}
        self._keep: dict[str, set[int]] = {}
        self._has_timeout: dict[str, bool] = {}
        self._lock = threading.Lock()
        #: container path -> host folder, mounted read-only beside the tools (assets, shims)
        self.extra_mounts: dict[str, str] = {}
        self.tmpfs: dict[str, str] = {}
        #: tmpfs mount point -> where its host content is mounted read-only, to link from
        self.seeds: dict[str, str] = {}

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

    def _container(self, key: str) -> Any:
        with self._lock:
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

    def _start(self, key: str) -> Any:
        devices = [] if key == "cpu" else key.split(",")
        from docker.errors import APIError
        from docker.types import DeviceRequest, Mount

        kwargs: dict[str, Any] = dict(
            entrypoint=["sleep"], command=["infinity"], detach=True, init=True,
            # with no network the container's own name does not resolve, and torchrun's
            # rendezvous retries it forever: name it what /etc/hosts always resolves
            hostname="localhost",
            network_mode=self.limits.network, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], pids_limit=self.limits.pids,
            mem_limit=self.limits.memory, memswap_limit=self.limits.memory,
            shm_size=self.limits.shm,
            labels=labels(self.run_id, **{"reb.target": self.image[:200], "reb.profile": key}),
            mounts=[Mount(dst, src, type="bind", read_only=True)
                    for dst, src in {**tool_mounts(), **self.extra_mounts}.items()],
            tmpfs=dict(self.tmpfs),
        )
        if devices:
            kwargs["device_requests"] = [DeviceRequest(device_ids=devices,
                                                       capabilities=[["gpu"]])]
        try:
            ctr = self.client.containers.run(self.image, **kwargs)
        except APIError as exc:
            raise TargetError(f"cannot start a container from {self.image!r}: "
                              f"{exc.explanation or exc}") from None
        self._keep[key] = self._keepalive(ctr)
        for dest, seed in self.seeds.items():
            seeded = ctr.exec_run(["cp", "-rs", f"{seed}/.", dest])
            if seeded.exit_code != 0:
                with contextlib.suppress(Exception):
                    ctr.remove(force=True)
                raise TargetError(f"cannot link the prepared files into {dest}: "
                                  f"{seeded.output.decode(errors='replace')[-300:]}")
        probe = ctr.exec_run(["timeout", "--version"])
        self._has_timeout[key] = probe.exit_code == 0
        return ctr

    def _keepalive(self, ctr: Any) -> set[int]:
        """Host pids of the container's init and its ``sleep``: all the sweep must spare.

        Read once the keep-alive exists (init starts it a moment after the
        container), so a sweep can never take it for a leftover.
        """
        deadline = time.monotonic() + 10
        while True:
            ctr.reload()
            pids = set(self._host_pids(ctr))
            if len(pids) >= 2 or time.monotonic() > deadline:
                return pids
            time.sleep(0.02)

    def own_env(self, name: str) -> str | None:
        return self._image_env.get(name)

    def _remove(self, key: str) -> None:
        ctr = self._containers.pop(key, None)
        if ctr is not None:
            with contextlib.suppress(Exception):
                ctr.remove(force=True)

    def close(self) -> None:
        with self._lock:
            for key in list(self._containers):
                self._remove(key)

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
        tmpfs = {f"{at}/{sub}": "" for sub in scratch}
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
        return at

    # -- processes

    def _host_pids(self, ctr: Any) -> list[int]:
        top = ctr.top(ps_args="-o pid")
        return [int(row[0]) for row in top.get("Processes") or []]

    def _run_pids(self, ctr: Any, key: str) -> list[int]:
        return [p for p in self._host_pids(ctr) if p not in self._keep.get(key, set())]

    def _sweep(self, ctr: Any, key: str) -> int:
        """Kill every process of the container but its keep-alive; daemons included."""
        killed = 0
        for _ in range(3):
            pids = self._run_pids(ctr, key)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
            time.sleep(0.1)
        return killed

    def _oom_kills(self, ctr: Any) -> int | None:
        for path in (f"/sys/fs/cgroup/memory/docker/{ctr.id}/memory.oom_control",
                     f"/sys/fs/cgroup/system.slice/docker-{ctr.id}.scope/memory.events",
                     f"/sys/fs/cgroup/docker/{ctr.id}/memory.events"):
            with contextlib.suppress(OSError):
                for line in Path(path).read_text().splitlines():
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        return None

    def _pids_refusals(self, ctr: Any) -> int | None:
        """How many forks the pids limit refused (``max`` of ``pids.events``), or None."""
        for path in (f"/sys/fs/cgroup/pids/docker/{ctr.id}/pids.events",
                     f"/sys/fs/cgroup/system.slice/docker-{ctr.id}.scope/pids.events",
                     f"/sys/fs/cgroup/docker/{ctr.id}/pids.events"):
            with contextlib.suppress(OSError, ValueError):
                for line in Path(path).read_text().splitlines():
                    if line.startswith("max "):
                        return int(line.split()[1])
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
        cmd = wrap_timeout(argv, timeout) if self._has_timeout.get(key) else argv
        api = self.client.api
        out, err = TailBuffer(), TailBuffer()
        oom_before = self._oom_kills(ctr)
        pids_before = self._pids_refusals(ctr)
        start = time.monotonic()
        try:
            exec_id = api.exec_create(ctr.id, cmd, environment=env or None,
                                      workdir=cwd or None)["Id"]
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
        killed = False
        watch = GpuWatch(lambda: self._run_pids(ctr, key), devices) if devices else None
        with watch or contextlib.nullcontext():
            reader.start()
            reader.join(timeout + KILL_GRACE + HOST_SLACK)
            if reader.is_alive():
                killed = True
                self._sweep(ctr, key)
                reader.join(15)
                if reader.is_alive():  # the exec stream is wedged: the container goes
                    with self._lock:
                        self._remove(key)
        exit_code: int | None = None
        with contextlib.suppress(Exception):
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        duration = time.monotonic() - start
        leftovers = 0
        with contextlib.suppress(Exception):
            leftovers = self._sweep(ctr, key)
        oom_after = self._oom_kills(ctr)
        pids_after = self._pids_refusals(ctr)
        if not killed:
            self._check_alive(ctr)
        res = ExecResult(argv, exit_code, out.text(), err.text(), duration,
                         killed_by_host=killed, stdout_bytes=out.total, stderr_bytes=err.total,
                         oom_killed=(oom_before is not None and oom_after is not None
                                     and oom_after > oom_before),
                         pids_limited=(pids_before is not None and pids_after is not None
                                       and pids_after > pids_before),
                         gpu_evidence_channel=self.evidence_channel, leftovers_killed=leftovers)
        return finish(res, timeout, watch)

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        return archive_file(self.container(), path, limit)

    def witness_library(self) -> str | None:
        return f"{witness.MOUNT}/{witness.LIBRARY}" if witness.library_dir() else None

    def take_record(self, path: str, devices: Sequence[str]) -> str:
        """Read after the sweep killed every leftover, so nothing of the run writes it any more."""
        data = archive_file(self.container(devices), path, 1 << 20)
        return data.decode("utf-8", errors="replace") if data else ""

    def _check_alive(self, ctr: Any) -> None:
        """A container that stopped under a command is an infrastructure failure."""
        from docker.errors import DockerException
        from requests.exceptions import RequestException

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


class _ChunkReader(io.RawIOBase):
    """A file over an iterator of byte chunks, for ``tarfile``'s streaming mode."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while not self._rest:
            self._rest = next(self._chunks, b"")
            if not self._rest:
                return 0
        n = min(len(buf), len(self._rest))
        buf[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def archive_file(container: Any, path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a regular file, copied out through the Docker API.

    Exact bytes (no decoding), streamed: a 100 MB file costs ``limit`` bytes
    of memory, and nothing in the container is executed to read it.
    """
    from docker.errors import DockerException

    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=_ChunkReader(stream), mode="r|") as tar:
            member = tar.next()
            if member is None or not member.isfile():
                return None
            fh = tar.extractfile(member)
            return fh.read(limit) if fh else None
    except (DockerException, tarfile.TarError, OSError):
        return None


def image_file(client: Any, image: str, path: str, limit: int = 1 << 16) -> bytes | None:
    """A small file from an image, through a created-but-never-started container."""
    from docker.errors import DockerException

    ctr = None
    try:
        ctr = client.containers.create(image, entrypoint=["true"], network_mode="none",
                                       labels=labels("peek"))
        return archive_file(ctr, path, limit)
    except DockerException:
        return None
    finally:
        if ctr is not None:
            with contextlib.suppress(Exception):
                ctr.remove(force=True)
