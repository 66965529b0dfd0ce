"""The checkout's git objects, copied to the host and read there under bounds the image cannot move.

The integrity check needs the pinned commit and its trees from the image's
object store.  Git object ids are content hashes, so an object read here and
re-hashed to the pinned commit's id is the pinned commit whatever the image
did; what the image *can* do is make the host spend: a 3 GiB sparse pack that
costs it a few blocks, or a 1.5 MB zlib bomb declared as a 1.5 GiB blob.  So:

- the store is sized before anything is copied, by apparent size *and* by
  blocks on disk: a sparse file (far fewer blocks than bytes) is no pack git
  wrote, and the total is capped and checked against the host's free space;
- object sizes come from ``git cat-file --batch-check`` (the header only,
  nothing inflated); a body is read only when it is small enough to need,
  streamed and hashed as it arrives, so no object larger than its bound is
  ever held in this process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

#: Bounds on the copy: the whole store, on disk and apparent; and the free space left after it.
MAX_STORE_BYTES = 4 << 30
FREE_MARGIN = 1 << 30
#: Bounds on what is inflated into this process: a tree or commit, and a blob read for a diff.
MAX_TREE_BYTES = 16 << 20
MAX_BLOB_BYTES = 1 << 20
MAX_TRACKED = 200_000
HEX40 = re.compile(r"[0-9a-f]{40}")
LOOSE = re.compile(r"[0-9a-f]{38}")
PACK = re.compile(r"pack-[0-9a-f]{40,64}\.(pack|idx)")


def git_program() -> str:
    """The host's git: ``$REB_GIT`` (a harness image's own, where the host is a pod whose
    image may have none), else ``git`` on the ``PATH``."""
    return os.environ.get("REB_GIT") or "git"


class Unverifiable(Exception):
    """The check could not be made; the message says why, in one line."""


class Source(Protocol):
    """The part of ``hostview.HostView`` the copy needs (the target's files, read from outside)."""

    def is_dir(self, path: str) -> bool: ...
    def listdir(self, path: str) -> list[str]: ...
    def lstat(self, path: str, *, follow: bool = False) -> os.stat_result | None: ...
    def open(self, path: str, *, follow: bool = True) -> contextlib.AbstractContextManager[
        IO[bytes]]: ...


def copy_objects(view: Source, git_dir: str, store: Path, deadline: float) -> int:
    """Loose objects and packs of ``git_dir`` into the bare scratch repository ``store``.

    Regular files with the names git gives them, nothing else (no config,
    hooks, refs or alternates that could steer the host's git).  Everything
    is sized first: an over-size or sparse store is refused before a byte is
    copied.  Returns the bytes copied.
    """
    objects = f"{git_dir}/objects"
    if not view.is_dir(objects):
        raise Unverifiable(f"{git_dir} has no object store")
    plan: list[tuple[str, str, int]] = []
    apparent = on_disk = 0
    for sub in view.listdir(objects):
        pattern = LOOSE if re.fullmatch(r"[0-9a-f]{2}", sub) else PACK if sub == "pack" else None
        if pattern is None:
            continue
        for name in view.listdir(f"{objects}/{sub}"):
            st = view.lstat(f"{objects}/{sub}/{name}") if pattern.fullmatch(name) else None
            if st is None or not stat.S_ISREG(st.st_mode):
                continue
            blocks = st.st_blocks * 512
            if st.st_size > (1 << 20) and blocks < st.st_size // 2:
                raise Unverifiable(f"{objects}/{sub}/{name} is sparse ({st.st_size} bytes in "
                                   f"{blocks} on disk): no git writes such a file")
            apparent += st.st_size
            on_disk += blocks
            plan.append((sub, name, st.st_size))
    biggest = max(apparent, on_disk)
    if biggest > MAX_STORE_BYTES:
        raise Unverifiable(f"the object store is {biggest >> 20} MiB, over the "
                           f"{MAX_STORE_BYTES >> 20} MiB the host copies")
    free = shutil.disk_usage(store).free
    if free - biggest < FREE_MARGIN:
        raise Unverifiable(f"the host has {free >> 20} MiB free for a {biggest >> 20} MiB "
                           "object store")
    _init_bare(store)
    copied = 0
    for sub, name, size in plan:
        (store / "objects" / sub).mkdir(parents=True, exist_ok=True)
        copied += _copy(view, f"{objects}/{sub}/{name}", store / "objects" / sub / name, size)
        if time.monotonic() > deadline:
            raise Unverifiable(f"copying {objects} ran past its deadline")
    return copied


def _init_bare(store: Path) -> None:
    (store / "refs").mkdir(exist_ok=True)
    (store / "objects").mkdir(exist_ok=True)
    (store / "HEAD").write_text("ref: refs/heads/main\n")
    (store / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")


def _copy(view: Source, src: str, dst: Path, size: int) -> int:
    """At most ``size`` bytes (what the file measured when sized): a file that grew is cut."""
    copied = 0
    try:
        with view.open(src, follow=False) as fh, open(dst, "wb") as out:
            while copied < size:
                chunk = fh.read(min(1 << 20, size - copied))
                if not chunk:
                    break
                out.write(chunk)
                copied += len(chunk)
    except OSError:
        return 0  # gone or no longer a regular file: not an object git would have written
    return copied


class Objects:
    """``git cat-file`` over the scratch store: sizes from headers, bodies bounded and re-hashed."""

    def __init__(self, store: Path, deadline: float) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_DIR": str(store),
               "HOME": str(store), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_NO_REPLACE_OBJECTS": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.procs = {mode: subprocess.Popen(
            [git_program(), "cat-file", f"--{mode}"], env=env, cwd=store, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for mode in ("batch", "batch-check")}
        self.timer = threading.Timer(max(1.0, deadline - time.monotonic()), self._kill)
        self.timer.daemon = True
        self.timer.start()
        self.sizes: dict[str, tuple[str, int]] = {}

    def _kill(self) -> None:
        for proc in self.procs.values():
            proc.kill()

    def __enter__(self) -> Objects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()
        for proc in self.procs.values():
            with contextlib.suppress(Exception):
                assert proc.stdin is not None
                proc.stdin.close()
            proc.kill()
            proc.wait(timeout=10)

    def _ask(self, mode: str, sha: str) -> tuple[str, int]:
        proc = self.procs[mode]
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline(256).decode("ascii", "replace").split()
        except (OSError, ValueError):
            raise Unverifiable("git cat-file stopped (deadline passed?)") from None
        if len(header) != 3 or header[0] != sha or not header[2].isdigit():
            raise Unverifiable(f"object {sha} is not in the checkout's object store "
                               "(a shallow clone of another commit?)")
        return header[1], int(header[2])

    def header(self, sha: str) -> tuple[str, int]:
        """The object's type and declared size, read from its header (nothing inflated)."""
        if sha not in self.sizes:
            self.sizes[sha] = self._ask("batch-check", sha)
        return self.sizes[sha]

    def size(self, sha: str) -> int:
        return self.header(sha)[1]

    def read(self, sha: str, limit: int) -> tuple[str, bytes]:
        """The object's body, re-hashed to its name; Unverifiable past ``limit`` bytes."""
        kind, size = self.header(sha)
        if size > limit:
            raise Unverifiable(f"object {sha} declares {size} bytes, over the {limit} the "
                               "host inflates for it")
        got_kind, got_size = self._ask("batch", sha)
        if (got_kind, got_size) != (kind, size):
            raise Unverifiable(f"object {sha} changed its header between two reads")
        proc = self.procs["batch"]
        assert proc.stdout is not None
        h = hashlib.sha1(f"{kind} {size}\0".encode())
        parts, left = [], size
        while left > 0:
            chunk = proc.stdout.read(min(1 << 20, left))
            if not chunk:
                break
            h.update(chunk)
            parts.append(chunk)
            left -= len(chunk)
        proc.stdout.read(1)  # the newline after the body
        if left or h.hexdigest() != sha:
            raise Unverifiable(f"object {sha} in the checkout's object store does not hash to "
                               "its name: the store was tampered with")
        return kind, b"".join(parts)

    def blob(self, sha: str, limit: int = MAX_BLOB_BYTES) -> bytes:
        return self.read(sha, limit)[1]

    def tree_of(self, commit: str) -> tuple[str, dict[str, tuple[str, str]]]:
        """The commit's root tree id, and path -> (mode, blob sha) of every file under it."""
        kind, body = self.read(commit, MAX_TREE_BYTES)
        if kind != "commit":
            raise Unverifiable(f"{commit} is a {kind}, not a commit")
        first = body.split(b"\n", 1)[0].decode("ascii", "replace")
        if not first.startswith("tree ") or not HEX40.fullmatch(first[5:].strip()):
            raise Unverifiable(f"commit {commit} names no tree")
        root = first[5:].strip()
        out: dict[str, tuple[str, str]] = {}
        pending = [("", root)]
        while pending:
            prefix, sha = pending.pop()
            kind, data = self.read(sha, MAX_TREE_BYTES)
            if kind != "tree":
                raise Unverifiable(f"{sha} is a {kind}, not a tree")
            for mode, name, child in entries(data):
                path = prefix + name
                if mode == "40000":
                    pending.append((path + "/", child))
                else:
                    out[path] = (mode, child)
                if len(out) > MAX_TRACKED:
                    raise Unverifiable(f"more than {MAX_TRACKED} tracked files")
        return root, dict(sorted(out.items()))


def entries(data: bytes) -> Iterator[tuple[str, str, str]]:
    """(mode, name, sha) of a tree object's entries; an impossible name is Unverifiable."""
    i = 0
    while i < len(data):
        try:
            space = data.index(b" ", i)
            nul = data.index(b"\0", space)
        except ValueError:
            raise Unverifiable("a tree object is truncated") from None
        mode = data[i:space].decode("ascii", "replace")
        name = data[space + 1:nul].decode("utf-8", "surrogateescape")
        sha = data[nul + 1:nul + 21].hex()
        if "/" in name or name in ("", ".", "..") or len(sha) != 40:
            raise Unverifiable(f"a tree entry has the impossible name {name!r}")
        yield mode, name, sha
        i = nul + 21
