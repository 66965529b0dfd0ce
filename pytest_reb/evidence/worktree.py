"""One file of a checkout's working tree against its blob at the pinned commit.

The integrity check (``integrity``) never asks the target's git: each tracked
file is read by the host and hashed as git hashes a blob, so a match *is* the
pinned content.  What a person needs to act on a mismatch (a diff's start), a
Git LFS pointer's real content (its sha256), and why a path is no longer a
regular file under real directories are read here too; every open is
``hostview.open_regular`` (no link followed, no FIFO waited on), every
directory is ``lstat``-ed once.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import stat

from pytest_reb.evidence.gitstore import MAX_BLOB_BYTES, Objects
from pytest_reb.targets import hostview

#: How much of an edited file's diff is kept in its finding.
DIFF_CHARS = 1500
LFS_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\n"
                         rb"oid sha256:([0-9a-f]{64})\nsize (\d+)\n?")


def parent_problem(base: str, rel: str, dirs: dict[str, str | None]) -> str | None:
    """Why a tracked file's directory is not a real directory of the checkout, or None.

    Each directory is checked once, without following symlinks, so no path
    handed to the kernel later can leave the target's root.
    """
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if d not in dirs:
            try:
                st = os.lstat(f"{base}/{d}")
            except OSError:
                dirs[d] = f"its directory {d}/ is missing from the working tree"
            else:
                dirs[d] = None if stat.S_ISDIR(st.st_mode) else (
                    f"its directory {d}/ is now {kind_of(st.st_mode)}")
        if dirs[d] is not None:
            return dirs[d]
    return None


def kind_of(mode: int) -> str:
    """What a path is now, in a finding's words (``st_mode`` from ``lstat``: a link is a link)."""
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def blob_sha(path: str) -> str | None:
    """Git's blob hash of a file: sha1 over ``blob <size>\\0`` and the content."""
    try:
        with hostview.open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            h = hashlib.sha1(f"blob {size}\0".encode())
            read = 0
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
                read += len(chunk)
            return h.hexdigest() if read == size else None  # None: it changed while read
    except OSError:
        return None


def lfs_match(objects: Objects, sha: str, path: str) -> bool:
    """Whether the tracked blob is a Git LFS pointer to exactly this file's content."""
    if objects.size(sha) > 512:
        return False
    m = LFS_POINTER.fullmatch(objects.blob(sha, 512))
    if m is None:
        return False
    try:
        with hostview.open_regular(path) as fh:
            h, size = hashlib.sha256(), 0
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
                size += len(chunk)
    except OSError:
        return False
    return size == int(m.group(2)) and h.hexdigest() == m.group(1).decode()


def diff(objects: Objects, sha: str, path: str, rel: str) -> str:
    """The start of a unified diff, for a person reading the finding (text files only).

    A blob over ``MAX_BLOB_BYTES`` is not inflated for it: its size is the image's to declare.
    """
    if objects.size(sha) > MAX_BLOB_BYTES:
        return f"(not shown: the pinned blob is {objects.size(sha)} bytes)"
    before = objects.blob(sha)
    try:
        with hostview.open_regular(path) as fh:
            after = fh.read(1 << 20)
    except OSError:
        return ""
    if b"\0" in before[:8192] or b"\0" in after[:8192]:
        return "(binary)"
    lines = difflib.unified_diff(before.decode("utf-8", "replace").splitlines(),
                                 after.decode("utf-8", "replace").splitlines(),
                                 f"a/{rel}", f"b/{rel}", lineterm="", n=1)
    text = "\n".join(lines)
    return text if len(text) <= DIFF_CHARS else text[:DIFF_CHARS] + "\n[...]"

