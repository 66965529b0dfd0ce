"""What a container holds on the host's disk besides its writable layer, read from the host.

``--reb-disk`` was enforced on the engine's ``SizeRw`` alone, a walk of the
writable layer's upper directory.  Two places escape that walk, and an image
can choose both:

- an image ``VOLUME`` becomes an anonymous volume, a directory of the
  engine's own outside the layer: 2 GiB written there under ``--reb-disk
  512m`` passed;
- a file unlinked while a process holds it open (or mapped) has no name left
  to walk, but its blocks stay allocated until the last holder goes: 3 GiB
  under ``--reb-disk 1g`` passed.

So the limit adds three channels: the layer, what each volume gained since
the container started (a walk of the volume's directory on the host:
``lstat`` only, links never followed, each inode counted once), and the
blocks of every unlinked regular file a process of the container holds,
found through ``/proc/<pid>/fd`` and ``/proc/<pid>/map_files`` (the kernel's
view of the process, which code inside the target cannot edit).  Files on
memory filesystems (tmpfs, ``/dev/shm``, memfd) are left out: they are
bounded by the memory limit, not the disk.  All of it is read by this process
on the engine's host, which the Docker target already requires (the cgroup
and ``/proc`` reads of ``cgroup``).

Those reads are walks: their cost grows with the number of files, and the
target chooses that number.  A million empty files made each look take
2.5 s, the looks were spaced five times that, and the target, timing the
looks by a folder's atime, held 3 GiB between two of them.  So the looks no
longer set the pace.  ``Bound`` reads the used bytes of the filesystems that
hold the layer and the volumes (``statvfs``: O(1), and it touches nothing
the target can see) every ``TICK``; the container's use can only have grown
past the limit if its last exact figure plus what those filesystems gained
since says so, and then the exact look is taken with the container frozen:
it neither sees nor answers it, however long the walk takes.  The last
exact figure is one the target could not move either (frozen, or no process
of it running), so the sum bounds what it holds now.

The margin, on a host where nothing else frees space at the same moment: a
container holds more than the limit for at most one ``TICK`` unseen, plus
the frozen look and the kill once seen; its excess is what it allocates in
one ``TICK`` (``fallocate``: any amount), so the bound is one of time.  The
frozen look lasts as long as the walk of the target's files (16.5 s for a
million files on a loaded 2-core machine, ``bench/disk_pacer.py``), the
target frozen and failed throughout.  Another process freeing space while the target
writes hides the growth from the sum: the periodic walk stays as the
backstop for that case (residual, in docs/threat-model.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: ``statfs`` magic numbers of filesystems held in memory (tmpfs/shmem/memfd, ramfs, hugetlbfs).
MEMORY_FILESYSTEMS = frozenset({0x01021994, 0x858458F6, 0x958458F6})
#: Bytes of ``struct statfs`` to hold (its ``f_type`` comes first on every Linux ABI).
_STATFS_SIZE = 256
_libc = ctypes.CDLL(None, use_errno=True)
#: Seconds between two ``statvfs`` reads of the filesystems holding the container's files.
TICK = 0.25


def holding_paths(attrs: Mapping[str, Any], fallback: str | None) -> list[str]:
    """Host paths on the filesystems the container writes to: its layer's upper directory
    (overlay2; ``fallback``, the engine's data root, for other drivers) and its volumes."""
    data = (attrs.get("GraphDriver") or {}).get("Data") or {}
    layer = data.get("UpperDir") or fallback
    return [p for p in (layer, *volume_dirs(attrs)) if p]


def fs_used(paths: Iterable[str]) -> int | None:
    """Bytes in use on the filesystems holding ``paths``, each filesystem once (``statvfs``:
    O(1) whatever the files; delayed allocations count); None if none can be read."""
    seen: set[int] = set()
    total, read = 0, False
    for path in paths:
        with contextlib.suppress(OSError):
            dev = os.stat(path).st_dev
            if dev in seen:
                continue
            st = os.statvfs(path)
            seen.add(dev)
            total += (st.f_blocks - st.f_bfree) * st.f_frsize
            read = True
    return total if read else None


class Bound:
    """When the container may have grown past ``limit``: the exact figure it held at its
    last anchor plus what its filesystems gained since (see the module's docstring).

    ``anchor`` must be given a figure the target could not change while it was taken
    (its processes frozen, or none running), and is read together with the filesystems.
    """

    def __init__(self, limit: int, paths: list[str]) -> None:
        self.limit, self.paths = limit, paths
        self._exact = 0
        self._host: int | None = None

    def anchor(self, exact: int) -> None:
        self._exact, self._host = exact, fs_used(self.paths)

    def suspect(self) -> bool:
        """Whether an exact look is due: the sum passes the limit (or nothing can be read)."""
        now = fs_used(self.paths)
        if now is None or self._host is None:
            return False  # no filesystem to read: the periodic walk alone bounds it
        return self._exact + now - self._host > self.limit


def frozen_look(freeze: Callable[[], Any] | None, look: Callable[[], int | None],
                bound: Bound) -> int | None:
    """``look()`` with the target frozen (``freeze()`` a context manager; None: nothing of
    the target can be frozen, the look is taken as it is); the figure anchors ``bound``."""
    with contextlib.ExitStack() as held:
        if freeze is not None:
            with contextlib.suppress(OSError):  # a cgroup that cannot freeze: the look as is
                held.enter_context(freeze())
        used = look()
        if used is not None:
            bound.anchor(used)
    return used


def volume_dirs(attrs: Mapping[str, Any]) -> list[str]:
    """Host directories of a container's volumes (its inspect ``Mounts`` of type volume)."""
    return sorted({str(m["Source"]) for m in attrs.get("Mounts") or ()
                   if m.get("Type") == "volume" and m.get("Source")})


def tree_bytes(root: str) -> int:
    """Bytes allocated under ``root`` (``st_blocks``), each inode once; links not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(dirpath, name))
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_blocks * 512
    return total


def volumes_growth(baseline: Mapping[str, int]) -> int:
    """What the volumes hold past what they held at start (``baseline``: dir -> bytes)."""
    return sum(max(0, tree_bytes(d) - before) for d, before in baseline.items())


def unlinked_bytes(pids: Iterable[int]) -> int:
    """Blocks of the unlinked regular files on disk that the processes ``pids`` hold open or
    mapped, each file once: space the layer walk cannot see."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        for folder in (f"/proc/{pid}/fd", f"/proc/{pid}/map_files"):
            try:
                names = os.listdir(folder)
            except OSError:
                continue  # gone, or not ours to read: nothing it holds is counted twice
            for name in names:
                path = f"{folder}/{name}"
                try:
                    st = os.stat(path)  # the magic link: the open file itself, named or not
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if (not stat.S_ISREG(st.st_mode) or st.st_nlink != 0 or key in seen
                        or _fs_type(path) in MEMORY_FILESYSTEMS):
                    continue
                seen.add(key)
                total += st.st_blocks * 512
    return total


def _fs_type(path: str) -> int | None:
    """The ``statfs`` magic of the filesystem ``path`` (a ``/proc`` magic link) is on."""
    buf = ctypes.create_string_buffer(_STATFS_SIZE)
    if _libc.statfs(os.fsencode(path), buf) != 0:
        return None
    return int(struct.unpack_from("l", buf.raw)[0]) & 0xFFFFFFFF
