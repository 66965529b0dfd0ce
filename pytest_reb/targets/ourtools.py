"""Our own tools inside a container: a static busybox, mounted read-only at ``/.reb``.

Nothing of the image may be part of the harness: an image's ``/usr/bin/timeout``
wrapped every probe (and read the C5 nonce in its argv), its ``sleep`` was the
keep-alive the sweep spared, its ``sh`` ran our scripts.  So the keep-alive,
the shell of our few scripts and the utilities they use (``test``, ``mkdir``,
``cp``, ``cat``) are one statically linked busybox of the host's (Debian's
``busybox-static``; ``.ci/setup-docker.sh`` installs it).  Why busybox rather
than a tiny C program of ours: it is prebuilt and packaged (no compiler on the
machine that runs the verifier), one file covers every utility, and its shell
runs its own applets before anything on the image's ``PATH``.  Static matters:
a dynamic binary would load the image's ``ld.so`` and libc, and obey an
``LD_PRELOAD`` in the image's ``ENV``.  The timeout itself is the host's
(``dockerexec.py``): its clock, its signals, by cgroup.

It is mounted as a folder of its own at ``/.reb``: a mount point cannot be
renamed or removed from inside (EBUSY), so a command cannot swap in a
``/.reb`` of its own for the next one, and the host checks at start that the
mount really is at ``/.reb`` (an image whose ``/.reb`` is a symlink would move it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import tempfile
from pathlib import Path
from stat import S_ISDIR

#: Where our tools appear in every container (a mount point of its own, read-only).
TOOLS_MOUNT = "/.reb"
BUSYBOX = f"{TOOLS_MOUNT}/busybox"
#: Where to look for a static busybox on the host; ``REB_BUSYBOX`` names another.
CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")
_PT_INTERP = 3


class ToolError(Exception):
    """No static busybox on this host: what to install, in one line."""


def is_static(path: Path) -> bool:
    """Whether ``path`` is an ELF executable without a program interpreter (statically linked)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:  # ELF64, little-endian
                return False
            phoff, = struct.unpack_from("<Q", head, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except (OSError, struct.error):
        return False
    return all(struct.unpack_from("<I", table, i * phentsize)[0] != _PT_INTERP
               for i in range(phnum))


def tools_dir() -> Path:
    """A host folder holding only our static busybox, to mount at ``TOOLS_MOUNT``.

    A copy named by the source's size and mtime, so the mount shows nothing
    else of the host's ``/bin``.  It lives in the temporary folder, under a
    folder of this user's that nobody else may write (checked: not a link,
    ours, mode 0700), not in the home or the working folder of a run.
    """
    wanted = os.environ.get("REB_BUSYBOX")
    found = [Path(p) for p in ((wanted,) if wanted else CANDIDATES) if Path(p).is_file()]
    if not found or not is_static(found[0]):
        raise ToolError(
            f"pytest-reb needs a statically linked busybox on this host "
            f"({wanted or ' or '.join(CANDIDATES)}"
            f"{' is not static' if found else ' is missing'}); install Debian's "
            "busybox-static (`apt-get install busybox-static`, or run .ci/setup-docker.sh), "
            "or set REB_BUSYBOX to one")
    source = found[0]
    stat = source.stat()
    top = Path(tempfile.gettempdir()) / f"pytest-reb-tools-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        top.mkdir(mode=0o700)
    mine = top.lstat()
    if not S_ISDIR(mine.st_mode) or mine.st_uid != os.getuid() or mine.st_mode & 0o077:
        raise ToolError(f"{top} is not a private folder of this user's; remove it")
    folder = top / f"busybox-{stat.st_size}-{int(stat.st_mtime)}"
    dest = folder / "busybox"
    if not dest.is_file():
        folder.mkdir(mode=0o755, exist_ok=True)
        tmp = folder / f".busybox.{os.getpid()}"
        shutil.copy2(source, tmp)
        tmp.chmod(0o755)
        tmp.replace(dest)
    return folder


def util(name: str) -> list[str]:
    """The argv prefix that runs busybox applet ``name`` in a container, by absolute path."""
    return [BUSYBOX, name]
