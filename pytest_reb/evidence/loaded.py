"""What a stage's processes opened, told by the kernel to the host, and where each file came from.

The integrity check reads the checkout before and after a stage, but what matters is
what the run *loaded*: an untracked ``__init__.pyc`` package, a symlink to a package
outside the checkout, an edited installed module, a ``train.py`` edited at start and
restored from ``atexit`` all leave a checkout that reads as intact, or hide outside it.

The channel is **fanotify**, set up by the host (``CAP_SYS_ADMIN`` in the host's
namespaces, which no process of the container has: every capability is dropped) on the
container's own overlay filesystem and its tmpfs mounts, before the stage's commands
start.  The kernel reports every open and every exec of a file there, with the opener's
pid and an open descriptor of the file itself, into a queue only the host reads.  A
process of the target cannot remove an event, open a file without one (``O_PATH`` opens
can be neither read nor mapped), or write the queue.  Our own read-only mounts (tools,
shims, kept bytecode) are other filesystems and are not watched: they are ours.

Where each opened file came from is read from the engine's layer folders on the host
(``GraphDriver``): the container's writable layer (``UpperDir``) holds every file the
container wrote, copied up or deleted since it started, whatever bytes it holds now (an
edit undone within the run is still there), and the image's layers (``LowerDir``) tell
which layer wrote a file: a file of a distribution rewritten in a layer above its
``RECORD``'s is not what its installer wrote.  Layer folders are read component by
component without following links (``_beneath``), so no name the image chose leads the
host outside them.

Targets the host cannot watch this way (``local://``, ``ssh://``) have no such record;
the stage's evidence says so and the verdict rests on the checks before and after it.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import hashlib
import os
import stat
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:  # the target whose container is watched
    from pytest_reb.targets.base import Target

#: fanotify's constants (linux/fanotify.h).
_FAN_CLOEXEC, _FAN_NONBLOCK, _FAN_UNLIMITED_QUEUE = 0x1, 0x2, 0x10
_FAN_MARK_ADD, _FAN_MARK_MOUNT, _FAN_MARK_FILESYSTEM = 0x1, 0x10, 0x100
_FAN_OPEN, _FAN_OPEN_EXEC, _FAN_Q_OVERFLOW = 0x20, 0x1000, 0x4000
_EVENT = struct.Struct("IBBHQii")
#: Distinct files kept per stage; past it the record says it is incomplete (strict fails).
MAX_FILES = 200_000
#: Per container (its writable layer's folder): the spans of earlier watched stages in which
#: every loaded file was judged sound.  A cache such a stage wrote (Triton's, inductor's) was
#: written by checked code, and a later stage of the same container may load it.
_CHECKED_SPANS: dict[str, list[tuple[float, float]]] = {}
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int,
                                ctypes.c_char_p]


@dataclass
class Watch:
    """The kernel's report of what one stage's processes opened, gathered on the host.

    ``paths`` are target paths (as the kernel names the opened file, every link resolved);
    ``problem`` says why the record is incomplete, if it is.
    """

    init_pid: int
    upper: str
    lowers: list[str]
    started: float = field(default_factory=time.time)
    paths: set[str] = field(default_factory=set)
    problem: str | None = None
    _fd: int = -1
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _drain(self) -> None:
        me = os.getpid()
        while True:
            try:
                buf = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                if self._stop.is_set():
                    return
                time.sleep(0.02)
                continue
            except OSError as exc:
                self.problem = f"the kernel's open events could not be read: {exc}"
                return
            off = 0
            while off + _EVENT.size <= len(buf):
                length, _, _, _, mask, fd, pid = _EVENT.unpack_from(buf, off)
                off += max(length, _EVENT.size)
                if mask & _FAN_Q_OVERFLOW:
                    self.problem = "the kernel's queue of open events overflowed"
                if fd < 0:
                    continue
                try:
                    if pid != me and len(self.paths) < MAX_FILES:
                        self.paths.add(os.readlink(f"/proc/self/fd/{fd}"))
                    elif pid != me:
                        self.problem = f"more than {MAX_FILES} files opened: the rest not kept"
                except OSError:
                    pass
                finally:
                    os.close(fd)

    def checked(self) -> None:
        """Record this stage's span as one whose loaded files were all sound."""
        _CHECKED_SPANS.setdefault(self.upper, []).append((self.started, time.time()))

    def by_checked_code(self, at: float) -> bool:
        """Whether a change at time ``at`` fell in this stage or in an earlier checked one."""
        return at >= self.started or any(a <= at <= b for a, b in
                                         _CHECKED_SPANS.get(self.upper, ()))

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def start(target: Target, devices: list[str]) -> Watch | None:
    """A ``Watch`` of the container that sees ``devices``, from now until ``close``; None
    where the host cannot watch this target (not a local Docker container, no fanotify)."""
    found = target.layers(devices)
    if found is None:
        return None
    pid, upper, lowers = found.pid, found.upper, list(found.lowers)
    fd = _libc.fanotify_init(_FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_UNLIMITED_QUEUE,
                             os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
    if fd < 0:
        return None
    watch = Watch(pid, upper, lowers, _fd=fd)
    events = _FAN_OPEN | _FAN_OPEN_EXEC
    root = f"/proc/{pid}/root"
    if _libc.fanotify_mark(fd, _FAN_MARK_ADD | _FAN_MARK_FILESYSTEM, events, -100,
                           f"{root}/".encode()) != 0:
        os.close(fd)
        return None
    for point in _tmpfs_points(pid):  # the container's own memory filesystems
        if _libc.fanotify_mark(fd, _FAN_MARK_ADD | _FAN_MARK_MOUNT, events, -100,
                               f"{root}{point}".encode()) != 0:
            watch.problem = f"the container's tmpfs at {point} could not be watched"
    watch._thread = threading.Thread(target=watch._drain, name="reb-loaded", daemon=True)
    watch._thread.start()
    return watch


def _tmpfs_points(pid: int) -> list[str]:
    """Mount points of the container's tmpfs filesystems (``/dev`` and its nodes excepted)."""
    try:
        lines = Path(f"/proc/{pid}/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    points = []
    for line in lines:
        pre, _, post = line.partition(" - ")
        if post.split()[:1] == ["tmpfs"] and pre.split()[4] not in ("/dev",) \
                and not pre.split()[4].startswith(("/sys", "/proc")):
            points.append(pre.split()[4])
    return points


# --------------------------------------------------------------------------- layer folders


def beneath(root: str, path: str) -> int | None:
    """An ``O_PATH`` descriptor of ``path`` inside ``root``, no link followed anywhere; None
    when a component is missing or is a link (the layer does not hold that name itself)."""
    try:
        fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return None
    for name in [p for p in path.split("/") if p]:
        try:
            nxt = os.open(name, os.O_PATH | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = nxt
    return fd


def layer_stat(root: str, path: str) -> os.stat_result | None:
    """``lstat`` of ``path`` in one layer folder, or None where that layer does not hold it."""
    fd = beneath(root, path)
    if fd is None:
        return None
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _regular_beneath(root: str, path: str) -> Iterator[IO[bytes] | None]:
    """A regular file ``path`` of one layer folder open for reading (never through a link),
    or None: no such file, not a regular file, or unreadable."""
    fd = beneath(root, path)
    if fd is None:
        yield None
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            yield None
            return
        with open(f"/proc/self/fd/{fd}", "rb") as fh:
            yield fh
    finally:
        os.close(fd)


def read_beneath(root: str, path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a regular file ``path`` of one layer folder, or None."""
    try:
        with _regular_beneath(root, path) as fh:
            return None if fh is None else fh.read(limit)
    except OSError:
        return None


def layer_of(watch: Watch, path: str) -> int | None:
    """Which layer holds ``path`` as the container sees it: 0 the container's writable layer,
    1.. the image's from the top, None where none does (a memory filesystem, or gone)."""
    for i, root in enumerate([watch.upper, *watch.lowers]):
        st = layer_stat(root, path)
        if st is not None:
            whiteout = stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
            return None if whiteout else i
    return None


def written_at(watch: Watch, path: str) -> float | None:
    """When the container last changed ``path`` (its ctime, set by the kernel: ``utime``
    cannot move it back), or None; resolved inside the container's root (``hostview``)."""
    from pytest_reb.targets.hostview import HostView

    st = HostView(f"/proc/{watch.init_pid}/root").lstat(path)
    return None if st is None else st.st_ctime


def hash_beneath(root: str, path: str) -> str | None:
    """The sha256 of a regular file of one layer folder, as a ``RECORD`` writes it
    (urlsafe base64, no padding), or None."""
    try:
        with _regular_beneath(root, path) as fh:
            if fh is None:
                return None
            h = hashlib.sha256()
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
            return base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
    except OSError:
        return None
