"""A target's files as the host sees them: read without running anything in the target.

Probes run inside the target under the report's interpreter, and that
interpreter (or a ``sitecustomize`` it imports at startup) can lie about what
it finds.  Where the host can see the target's files itself, the known-fakes
scan and the integrity check look there: a container's root through
``/proc/<pid of its init>/root`` (the engine is local, as the process sweep
already assumes), and ``/`` for ``local://``.

Paths are resolved here, one component at a time, inside that root.  Handing
the kernel ``/proc/<pid>/root`` + a path would resolve an absolute symlink of
the image (``/opt/x -> /etc``) against the *host's* root, so a hostile image
could make the host read its own files.  Only regular files are opened, with
``O_NOFOLLOW | O_NONBLOCK`` (a FIFO would block, a device never ends).

Resolving one component at a time is only sound if nothing changes in
between: a process of the image can swap a checked directory for a symlink
(``renameat2(RENAME_EXCHANGE)``) before the host opens the path.  ``frozen``
pauses the container (the cgroup freezer) for the whole read, so what the
host checked is what it opens.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from pytest_reb.targets.errors import InfraError

if TYPE_CHECKING:  # the targets give their views; this module imports none of them
    from pytest_reb.targets.base import Target

#: Symlinks followed in one resolution before giving up (the kernel's own limit).
MAX_HOPS = 40
#: Attempts at pausing a container before its read is given up as infra.
FREEZE_TRIES = 8


@dataclass(frozen=True)
class Layers:
    """A container's filesystem as the host sees it: the host pid of its init, its writable
    layer (``upper``) and the image's layers below it (``lowers``, top first)."""

    pid: int
    upper: str
    lowers: tuple[str, ...]


@contextlib.contextmanager
def open_regular(path: str) -> Iterator[IO[bytes]]:
    """A host path opened for reading only if it is a regular file (not a link, FIFO, device).

    ``O_NONBLOCK`` keeps a FIFO planted by the image from blocking the host.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path} is not a regular file")
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh

class HostView:
    """The filesystem of a target under ``root`` on this host; every path is a target path."""

    def __init__(self, root: str, *, has_gpu_devices: bool | None = None) -> None:
        self.root = "" if root.rstrip("/") == "" else root.rstrip("/")
        self.has_gpu_devices = has_gpu_devices

    def host_path(self, path: str) -> str:
        """Where an already resolved target path is on this host."""
        return self.root + path

    def resolve(self, path: str, *, follow_last: bool = True) -> str | None:
        """``path`` with every symlink resolved inside the root; None when it does not exist."""
        parts = deque(p for p in path.split("/") if p not in ("", "."))
        done: list[str] = []
        hops = 0
        while parts:
            name = parts.popleft()
            if name == "..":
                if done:
                    done.pop()
                continue
            here = "/" + "/".join([*done, name])
            try:
                st = os.lstat(self.root + here)
            except (OSError, ValueError):
                return None
            if stat.S_ISLNK(st.st_mode) and (parts or follow_last):
                hops += 1
                if hops > MAX_HOPS:
                    return None
                try:
                    link = os.readlink(self.root + here)
                except OSError:
                    return None
                if link.startswith("/"):
                    done = []
                parts.extendleft(reversed([p for p in link.split("/") if p not in ("", ".")]))
                continue
            if parts and not stat.S_ISDIR(st.st_mode):
                return None
            done.append(name)
        return "/" + "/".join(done)

    def lstat(self, path: str, *, follow: bool = False) -> os.stat_result | None:
        """``lstat`` of ``path``: its parents resolved, the last component followed if asked."""
        where = self.resolve(path, follow_last=follow)
        if where is None:
            return None
        try:
            return os.lstat(self.root + where)
        except OSError:
            return None

    def stat(self, path: str) -> os.stat_result | None:
        """``stat`` of ``path``, every link resolved inside the target's root."""
        return self.lstat(path, follow=True)

    def is_dir(self, path: str) -> bool:
        st = self.stat(path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def listdir(self, path: str) -> list[str]:
        where = self.resolve(path)
        if where is None:
            return []
        try:
            return sorted(os.listdir(self.root + where))
        except OSError:
            return []

    def readlink(self, path: str) -> str | None:
        where = self.resolve(path, follow_last=False)
        if where is None:
            return None
        try:
            return os.readlink(self.root + where)
        except OSError:
            return None

    @contextlib.contextmanager
    def open(self, path: str, *, follow: bool = True) -> Iterator[Any]:
        """A regular file of the target for reading (binary); OSError if it is anything else."""
        where = self.resolve(path, follow_last=follow)
        if where is None:
            raise FileNotFoundError(path)
        with open_regular(self.root + where) as fh:
            yield fh

    def read(self, path: str, limit: int = 1 << 20) -> bytes | None:
        """At most ``limit`` bytes of a regular file, or None."""
        try:
            with self.open(path) as fh:
                return fh.read(limit)  # type: ignore[no-any-return]
        except OSError:
            return None


def view(target: Target, devices: Sequence[str] = ()) -> HostView | None:
    """The host's view of ``target``'s files, or None when the host cannot see them
    (``Target.host_view``: for Docker, the root of the container that sees ``devices``,
    checked to be this engine's container on this host; ``/`` for ``local://``)."""
    return target.host_view(devices)


def frozen(target: Target, devices: Sequence[str] = ()) -> ContextManager[HostView | None]:
    """``view(target, devices)`` with nothing able to run in the target for the length of
    the block (``Target.frozen_view``: a container is paused, and one lost under the read
    is ``InfraError``, so a lost container is never taken for an edited one)."""
    return target.frozen_view(devices)


def of_container(ctr: Any, devices: Sequence[str]) -> HostView | None:
    """The root of the running container ``ctr`` (which sees ``devices``) through
    ``/proc/<pid of its init>/root``, once that pid is checked to be this engine's container
    on this host; None where it is not (a remote engine: that pid is someone else)."""
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
    root = HostView(f"/proc/{pid}/root")
    root.has_gpu_devices = bool(devices) and gpu_nodes(root)
    return root


def layers_of(ctr: Any) -> Layers | None:
    """The overlay of the running container ``ctr``, from the engine's metadata; None where
    its storage driver has no upper directory on this host."""
    with contextlib.suppress(Exception):
        ctr.reload()
    data = (ctr.attrs.get("GraphDriver") or {}).get("Data") or {}
    pid = (ctr.attrs.get("State") or {}).get("Pid")
    upper = data.get("UpperDir")
    if not (isinstance(pid, int) and pid > 0 and upper and os.path.isdir(upper)):
        return None
    return Layers(pid, upper, tuple(d for d in (data.get("LowerDir") or "").split(":") if d))


@contextlib.contextmanager
def paused(ctr: Any, found: HostView) -> Iterator[HostView]:
    """``found`` (``ctr``'s root, ``of_container``) with ``ctr`` paused (the cgroup freezer)
    for the block, so a process of the image cannot swap a checked folder for a link between
    the host's check and its open; a container gone afterwards, or whose init is no longer
    the one read through, was lost under the read: ``InfraError``, whatever the read made of
    its vanishing files."""
    pid = int(found.root.split("/")[2])
    for attempt in range(FREEZE_TRIES):  # a busy cgroup's freezer times out
        try:
            ctr.pause()
            break
        except Exception as exc:
            if attempt == FREEZE_TRIES - 1:
                raise InfraError(f"cannot freeze container {ctr.name} for the host-side "
                                 f"read: {str(exc)[:200]}") from None
            time.sleep(0.2 * (attempt + 1))
    try:
        yield found
    except BaseException:
        lost = _thaw(ctr, pid)
        if lost:
            raise InfraError(lost) from None
        raise
    lost = _thaw(ctr, pid)
    if lost:
        raise InfraError(lost)


def _thaw(ctr: Any, pid: int) -> str | None:
    """Unpause ``ctr``; why it was lost under the read, or None when it is still the same.

    An unpause the engine refuses is not loss by itself: a pause that timed out
    can land late (then the container is paused again: thaw again), and a freezer
    busy on the way back answers 500 while the container runs on.  Only what the
    engine says of the container afterwards decides: gone, stopped, or another
    init than the one read through.
    """
    refused = ""
    for attempt in range(FREEZE_TRIES):
        try:
            ctr.unpause()
        except Exception as exc:
            refused = str(exc)[:200]
        try:
            ctr.reload()
        except Exception as exc:
            return f"container {ctr.name} was lost during the host-side read: {str(exc)[:200]}"
        if ctr.status != "paused":
            break
        time.sleep(0.1 * (attempt + 1))
    state = ctr.attrs.get("State") or {}
    if ctr.status != "running" or state.get("Pid") != pid:
        why = f"; the engine said: {refused}" if refused else ""
        return (f"container {ctr.name} was lost during the host-side read (status "
                f"{ctr.status}, init pid {state.get('Pid')}, read through {pid}){why}")
    return None


def gpu_nodes(root: HostView) -> bool:
    """Whether the root shows NVIDIA device files."""
    return any(n.startswith("nvidia") and n[6:].isdigit() for n in root.listdir("/dev"))
