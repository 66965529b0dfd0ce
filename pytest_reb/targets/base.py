"""The contract every target keeps.

A target is the environment under test behind one small contract (inspect_ai's
sandbox shape): ``exec(argv, timeout=, env=, cwd=, profile=, gpus=) -> ExecResult``.
The kinds are in their own modules (``docker``, ``local``, ``testinfra``); this
one holds what they share: the labels of our containers, the errors, the
timeout wrappers and ``--reb-timeout-scale``, applied here once, in
``Target.exec``, so no probe multiplies a timeout by hand.  What the host
records of a command is ``result``'s; where our tools are mounted, ``mounts``'.

Neither the Docker SDK nor testinfra has a timeout that holds (the SDK turns
the socket timeout off for exec streams; testinfra's ``run`` has none).  In a
container the timeout is the host's: a deadline on the reader thread, TERM
then KILL to every process of the container's cgroup, then the container
(``dockerexec.py``); nothing of the image keeps the time.  Elsewhere it is
coreutils ``timeout -k`` on that machine (``wrap_timeout``) under the same
host deadline.
Evidence that a process held a GPU is read by the host (``evidence.gpu_use``),
never from anything the target prints.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from pytest_reb.targets import bytecode, hostview
from pytest_reb.targets.errors import TargetError
from pytest_reb.targets.hostview import Layers
from pytest_reb.targets.result import ExecResult
from pytest_reb.witness import observe

Profile = Literal["cpu", "gpu"]

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


@dataclass(frozen=True)
class ImageRef:
    """A target that is an image on this host's Docker engine (``--reb-image``, a matrix row's
    ``image``), told apart from a testinfra URL by its type, not by a prefix in a string."""

    name: str

    def __str__(self) -> str:
        return self.name


def is_local(url: str) -> bool:
    """Whether a ``--reb-host`` URL is this machine (``local://``)."""
    return url.rstrip("/") in ("local:", "local")






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
    #: ``--reb-timeout-scale``: what every stage timeout is multiplied by (slow machines)
    timeout_scale: float = 1.0
    #: whether two commands may run here at once, neither ending the other's processes nor
    #: counting them as its own (a container's command ends every process of the container
    #: when it returns)
    side_by_side_commands: bool = False

    def scaled(self, seconds: float) -> float:
        """``seconds`` of a stage as this run allows them: the one place the scale applies.

        ``exec`` uses it for its ``timeout``; a probe uses it for the deadlines
        it hands to a command of its own (the C0 driver, the extension sweep).
        """
        return seconds * self.timeout_scale

    def exec(self, argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
             cwd: str | None = None, profile: Profile = "cpu",
             gpus: Sequence[str] | None = None, scaled: bool = True) -> ExecResult:
        """Run ``argv`` (no shell) and return what the host saw; never hangs past the timeout.

        ``timeout`` is a stage's own figure and is scaled (``scaled()``);
        ``scaled=False`` takes it as it is: a housekeeping step of fixed length
        (``mkdir``, a path test), or a deadline already built from ``scaled()``
        plus a margin that must not grow with it.  The ``cpu`` profile sees no
        GPU; the ``gpu`` profile sees ``gpus`` (a lease), by default all of the
        target's.
        """
        devices = self.devices(profile, gpus)
        # Running the environment must not change it: no bytecode written into its prefix.
        env = {"PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        return self._exec([str(a) for a in argv], timeout=self.scaled(timeout) if scaled
                          else timeout, env=env, cwd=cwd, devices=devices)

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        raise NotImplementedError

    def devices(self, profile: Profile, gpus: Sequence[str] | None) -> list[str]:
        """The GPUs a command of ``profile`` sees: none for ``cpu``, else ``gpus`` (a lease),
        by default all of the target's."""
        return [] if profile == "cpu" else list(self.gpus if gpus is None else gpus)

    def twin(self) -> Target | None:
        """A target of the same environment that shares no process with this one (a
        container of its own, made on first use and closed with this target), so a command
        there may run beside one here; None where there is no such thing (the host itself):
        the caller then runs the two one after the other.

        Every command ends every process of its target when it returns, so two commands
        side by side on one target would end each other's processes, and one's processes
        could read the other's arguments; on twins neither can happen.
        """
        return None

    def sibling(self, *, background: bool = False) -> Target | None:
        """A target of the same environment that shares no process nor container with this one
        and lives apart from it: made for one caller, who ends it with ``retire`` (this target's
        ``close`` and ``mount`` leave it alone).  The pyramid's side-by-side tiers run there
        (``lanes.py``); a ``background`` one yields the cores to the others when they are
        contended (a lower CPU weight: the timeouts are the same).  None where there is no
        such thing (the host itself, ssh)."""
        return None

    def warm(self) -> None:
        """Make ahead what a CPU command here first needs (a container), so a caller that knows
        commands will come can overlap it with other work; nothing where nothing is made.
        Never raises: a failure is the first command's, whose tier it then fails."""

    def prestart(self, *, plain: int, background: int) -> None:
        """Begin making, in the background, the CPU-profile containers a pyramid's first tiers
        will ask for: ``plain`` with this target's limits, ``background`` with a lane's lower
        CPU weight; what nobody takes goes at ``close``.  Nothing where nothing is made.
        Never raises."""

    def retire(self) -> None:
        """Close this target for good: everything it made is removed, and a command after this
        one fails as ``InfraError`` instead of making anything new (a side-by-side lane that
        outlives a Ctrl-C must not start a container after the run's clean-up).  The session
        retires each target at the run's end; a Docker target's copies go with it."""
        self.close()

    def prepare_bytecode(self, python: Callable[[Target], str | None],
                         scripts: Sequence[str]) -> None:
        """Begin compiling, on the host, what the stages' interpreter will import (the entry
        ``scripts``' imports and ``torch``'s), so the first of them reads it instead of
        compiling it (``precompile``); the stages wait for it.  ``python(fresh)`` names the
        interpreter, given a fresh target of the same image (the report may be read there).
        Nothing where no bytecode is kept per image."""

    def stage_bytecode(self, profile: Profile, gpus: Sequence[str]) -> dict[str, str]:
        """The env a stage's commands get for Python's bytecode: a folder the image cannot
        know (``bytecode.PYCACHE_DIR``), so no ``__pycache__`` of the checkout is read, and,
        by the base env of ``exec``, nothing written.  A target that keeps bytecode per image
        (Docker) answers a folder of the stage's own, filled with what the host compiled."""
        return {bytecode.PYCACHE_ENV: bytecode.PYCACHE_DIR}

    def kept_bytecode(self) -> dict[str, str]:
        """The env with which a probe's interpreter reads the bytecode the host keeps for
        this target's image (``bytecode``; read-only: nothing is written), or none where
        nothing is kept yet: the image's own bytecode is then read, as always."""
        return {}

    def keep_bytecode(self, env: Mapping[str, str], profile: Profile,
                      gpus: Sequence[str]) -> dict[str, int] | None:
        """After the stage that ran with ``env`` (``stage_bytecode``): have the host compile
        what the stage compiled for itself; how many files that was, or None where nothing
        is kept."""
        return None

    def tool(self, path: str) -> str:
        """Where a probe or tool mounted at ``path`` (under /opt/reb) is, seen from the target."""
        return path

    def util(self, name: str) -> list[str]:
        """The argv prefix that runs basic utility ``name`` (``sh``, ``test``, ``mkdir``, ``cat``)
        for a command of ours, never the image's own: the Docker target answers our static
        busybox; here, a target whose machine is trusted (local) or that cannot be given one
        (ssh), the utility on its ``PATH``."""
        return [name]

    def remove_paths(self, paths: Sequence[str], *, timeout: float = 60,
                     profile: Profile = "cpu", gpus: Sequence[str] | None = None) -> None:
        """``rm -rf paths`` with our own utility, a tier's clean-up after itself (a stage's
        outputs, a scratch or bytecode folder): a target that is gone has nothing left to
        remove, so its error is not the tier's."""
        if not paths:
            return
        with contextlib.suppress(TargetError):
            self.exec([*self.util("rm"), "-rf", *paths], timeout=timeout, profile=profile,
                      gpus=gpus, scaled=False)

    def stopping(self, argv: Sequence[str], after: float, sig: str) -> list[str]:
        """``argv`` sent ``sig`` after ``after`` seconds, its exit status its own (a run's
        ``stop_after``): coreutils ``timeout --preserve-status`` on this default."""
        return ["timeout", "--preserve-status", f"--signal={sig}", f"{after:g}s", *argv]

    def image_env(self, name: str) -> str | None:
        """The image's own ``ENV`` value of ``name``, read from its metadata; None where the
        target is no image (``local://``, ``ssh://``) or the image does not set it."""
        return None

    def host_view(self, devices: Sequence[str] = ()) -> hostview.HostView | None:
        """The host's view of the target's files (``hostview``), for reads that run nothing
        in the target; None where the host cannot see them (``ssh://``)."""
        return None

    def layers(self, devices: Sequence[str] = ()) -> Layers | None:
        """The overlay of the container that sees ``devices`` as the host sees it: its init's
        host pid, its writable layer and the image's layers (top first); None where the
        target is no local container (``local://``, ``ssh://``)."""
        return None

    @contextlib.contextmanager
    def frozen_view(self, devices: Sequence[str] = ()) -> Iterator[hostview.HostView | None]:
        """``host_view`` with nothing of the target able to run for the block (a container
        is paused); a target with no processes of its own to stop just gives its view."""
        yield self.host_view(devices)

    def host_path(self, path: str) -> Path | None:
        """Where ``path`` of the target is on this machine, to copy without running anything
        in the target; None where the target's files are not this machine's."""
        return None

    @contextlib.contextmanager
    def tar_of(self, path: str) -> Iterator[IO[bytes]]:
        """``path`` (a file or a folder) as a tar archive, copied out of the target without
        running anything in it; ``TargetError`` where this target has no such way."""
        raise TargetError(f"{self.name} has no way to copy {path} out without running "
                          "anything in it (a Docker image or a local:// checkout has)")
        yield  # a generator, for the context manager

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

    def mounted(self) -> frozenset[str]:
        """Where ``mount`` shows our own folders (shims, the asset view) in this target: the
        integrity walk leaves them out, since they are not the checkout's files."""
        return frozenset()

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        """At most ``limit`` bytes of a file in the target, exactly, or None if unreadable."""
        raise NotImplementedError

    def witness_library(self) -> str | None:
        """The entrypoint witness (``witness``) as this target's commands can preload it;
        None where it cannot reach them (then strict says the run is unwitnessed)."""
        return None

    def take_record(self, path: str, devices: Sequence[str]) -> str:
        """The witness's record file of a command that ran with ``devices``, once it ended."""
        return ""

    def witness_observed(self) -> observe.Library | None:
        """Our library as the host built it and as this target's processes map it, where the
        host can watch them stop for it (``witness.observe``); None where it cannot."""
        return None

    @contextlib.contextmanager
    def observing(self, env: Mapping[str, str], quick: Callable[[], Iterable[int]],
                  full: Callable[[], Iterable[int]] | None = None) -> Iterator[None]:
        """Watch a command's processes (host pids) for those the witness stops, while it runs.

        What is seen is kept by the command's record file, for ``take_observed``.
        """
        record, lib = env.get("REB_WITNESS"), self.witness_observed()
        if not record or lib is None or not env.get("REB_WITNESS_STOP"):
            yield
            return
        ours = {lib.target_path, lib.host_path}
        allowed = frozenset(p for p in env.get("LD_PRELOAD", "").replace(" ", ":").split(":")
                            if p and p not in ours)
        obs = observe.Observer(lib, quick, full, allowed)
        try:
            with obs:
                yield
        finally:
            self.__dict__.setdefault("_observed", {})[record] = obs.seen

    def take_observed(self, record: str) -> dict[int, observe.Seen] | None:
        """What the host saw of the processes of the command with this record file, by the pid
        the record names; None where this target cannot observe its processes."""
        if self.witness_observed() is None:
            return None
        return self.__dict__.setdefault("_observed", {}).pop(record, {})

    @property
    def host(self) -> Any:
        """A testinfra ``Host`` on this target, for custom checks in a repository module."""
        raise NotImplementedError

    def close(self) -> None:
        """Remove everything this target made. Idempotent."""
