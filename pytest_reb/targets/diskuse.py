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
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import struct
from collections.abc import Iterable, Mapping
from typing import Any

#: ``statfs`` magic numbers of filesystems held in memory (tmpfs/shmem/memfd, ramfs, hugetlbfs).
MEMORY_FILESYSTEMS = frozenset({0x01021994, 0x858458F6, 0x958458F6})
#: Bytes of ``struct statfs`` to hold (its ``f_type`` comes first on every Linux ABI).
_STATFS_SIZE = 256
_libc = ctypes.CDLL(None, use_errno=True)


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
