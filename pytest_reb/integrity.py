"""Integrity: the checkout's tracked files against the pinned commit, checked by the host.

The official rules forbid editing the repository and never check it
(reference §12.1.2): an agent can make an entrypoint ``exit 0`` and pass.
Here the host reads the target's files from outside (``hostview.py``), so
neither ``git`` nor any program of the target is trusted or even needed:

1. the checkout's object store (``.git/objects``: loose objects and packs,
   regular files only) is copied to a scratch repository on the host; its
   config, hooks, refs and alternates are not, so nothing the image wrote
   can steer the host's ``git``;
2. the pinned commit and every tree under it are read with
   ``git cat-file --batch`` and each is re-hashed here, so a doctored object
   store cannot pass a different tree off as the pinned commit;
3. each tracked file of the working tree is hashed as git hashes a blob
   (``sha1("blob <size>\\0" + content)``) and compared with the tree; a Git LFS
   pointer is compared by its sha256.

Where the host cannot see the target's files (``ssh://`` and other testinfra
URLs) the target's own ``git diff`` is used, under a timeout, and says so.

Findings are ``{"kind", "path", "detail"}`` with kinds ``modified``,
``deleted``, ``type_changed`` (the edits), ``mode_changed``, ``head_moved``
(informational) and ``unverifiable``.  Only an edit of a run's entrypoint
changes a verdict, and only in strict mode (``tiers/entrypoint.py``).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import posixpath
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_reb import hostview
from pytest_reb.target import Target, read_git_commit

#: The kinds that mean "this file is not what the pinned commit holds".
EDITS = frozenset({"modified", "deleted", "type_changed"})
#: Bounds: an object store or a working tree larger than this is not copied or hashed.
MAX_OBJECT_BYTES = 8 << 30
MAX_TRACKED = 200_000
DEADLINE = 300.0
#: Edited files whose diff is kept in the finding, and how much of it.
MAX_DIFFS = 20
DIFF_CHARS = 1500
MAX_FINDINGS = 500
HEX40 = re.compile(r"[0-9a-f]{40}")
LFS_POINTER = re.compile(rb"version https://git-lfs\.github\.com/spec/v1\n"
                         rb"oid sha256:([0-9a-f]{64})\nsize (\d+)\n?")


class Unverifiable(Exception):
    """The check could not be made; the message says why, in one line."""


def finding(kind: str, path: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "path": path, "detail": detail, **extra}


def edited(findings: list[dict[str, Any]], path: str | None) -> dict[str, Any] | None:
    """The finding that says the tracked file ``path`` (repo-relative) was edited, if any."""
    if not path:
        return None
    want = posixpath.normpath(path.removeprefix("./"))
    return next((f for f in findings if f.get("kind") in EDITS and f.get("path") == want), None)


def check(target: Target, checkout: str, commit: str) -> list[dict[str, Any]]:
    """Findings about ``checkout`` in ``target`` against ``commit``; [] when it is intact."""
    commit = commit.lower()
    view = hostview.view(target)  # a TargetError here is the tier's infra failure
    try:
        if view is None:
            return _with_target_git(target, checkout, commit)
        return _Check(view, checkout, commit).run()
    except Unverifiable as exc:
        return [finding("unverifiable", checkout, str(exc))]
    except (OSError, subprocess.SubprocessError, ValueError) as exc:  # never the tier's end
        return [finding("unverifiable", checkout, f"the check failed: {type(exc).__name__}: "
                                                  f"{str(exc)[:300]}")]


# --------------------------------------------------------------------------- from the host


class _Check:
    def __init__(self, view: hostview.HostView, checkout: str, commit: str) -> None:
        self.view = view
        self.checkout = checkout
        self.commit = commit
        self.deadline = time.monotonic() + DEADLINE
        self.found: list[dict[str, Any]] = []

    def run(self) -> list[dict[str, Any]]:
        if not HEX40.fullmatch(self.commit):
            raise Unverifiable(f"the pinned commit {self.commit!r} is not a SHA-1")
        if shutil.which("git") is None:
            raise Unverifiable("git is not installed on the host")
        root = self.view.resolve(self.checkout)
        if root is None or not self.view.is_dir(root):
            raise Unverifiable(f"there is no checkout at {self.checkout}")
        git_dir = self._git_dir(root)
        head = read_git_commit(self.view.read, root)
        if head is not None and head != self.commit:
            self.found.append(finding("head_moved", ".git/HEAD", (
                f"HEAD is {head}, not the pinned {self.commit}; the working tree is compared "
                "with the pinned commit")))
        try:
            with tempfile.TemporaryDirectory(prefix="reb-integrity-") as scratch:
                store = Path(scratch)
                self._copy_objects(git_dir, store)
                with _Objects(store, self.deadline) as objects:
                    tree = objects.tree_of(self.commit)
                    self._compare(root, tree, objects)
        except Unverifiable as exc:
            self.found.append(finding("unverifiable", self.checkout, str(exc)))
        return self.found[:MAX_FINDINGS]

    def _git_dir(self, root: str) -> str:
        st = self.view.lstat(f"{root}/.git")
        if st is not None and stat.S_ISDIR(st.st_mode):
            return f"{root}/.git"
        text = (self.view.read(f"{root}/.git", 4096) or b"").decode("utf-8", "replace").strip()
        if text.startswith("gitdir:"):  # a worktree or a submodule's checkout
            where = text[len("gitdir:"):].strip()
            where = where if where.startswith("/") else posixpath.join(root, where)
            real = self.view.resolve(where)
            if real is not None and self.view.is_dir(real):
                return real
        raise Unverifiable(f"{self.checkout} is not a git checkout (no .git directory)")

    def _copy_objects(self, git_dir: str, store: Path) -> None:
        """Loose objects and packs only: regular files with the names git gives them."""
        (store / "refs").mkdir()
        (store / "HEAD").write_text("ref: refs/heads/main\n")
        (store / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")
        objects = f"{git_dir}/objects"
        if not self.view.is_dir(objects):
            raise Unverifiable(f"{git_dir} has no object store")
        total = 0
        for sub in self.view.listdir(objects):
            if re.fullmatch(r"[0-9a-f]{2}", sub):
                names = [n for n in self.view.listdir(f"{objects}/{sub}")
                         if re.fullmatch(r"[0-9a-f]{38}", n)]
            elif sub == "pack":
                names = [n for n in self.view.listdir(f"{objects}/pack")
                         if re.fullmatch(r"pack-[0-9a-f]{40,64}\.(pack|idx)", n)]
            else:
                continue
            (store / "objects" / sub).mkdir(parents=True, exist_ok=True)
            for name in names:
                total += self._copy(f"{objects}/{sub}/{name}", store / "objects" / sub / name,
                                    MAX_OBJECT_BYTES - total)
                if time.monotonic() > self.deadline:
                    raise Unverifiable(f"copying {git_dir}/objects took over {DEADLINE:.0f}s")

    def _copy(self, src: str, dst: Path, budget: int) -> int:
        copied = 0
        try:
            with self.view.open(src, follow=False) as fh, open(dst, "wb") as out:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    copied += len(chunk)
                    if copied > budget:
                        raise Unverifiable(f"the object store is larger than "
                                           f"{MAX_OBJECT_BYTES >> 30} GiB")
                    out.write(chunk)
        except OSError:
            return 0  # not a regular file: not an object git would have written
        return copied

    def _compare(self, root: str, tree: dict[str, tuple[str, str]], objects: _Objects) -> None:
        base = self.view.host_path(root)
        dirs: dict[str, str | None] = {"": None}  # rel dir -> why it is not a real directory
        diffs = 0
        for rel, (mode, sha) in tree.items():
            if time.monotonic() > self.deadline:
                self.found.append(finding("unverifiable", rel, (
                    f"hashing the working tree took over {DEADLINE:.0f}s; files from here on "
                    "were not checked")))
                return
            if mode == "160000":  # a submodule: its own checkout, not a file of this one
                continue
            parent = _parent_problem(base, rel, dirs)
            if parent is not None:
                self.found.append(finding("deleted", rel, parent))
                continue
            try:
                st = os.lstat(f"{base}/{rel}")
            except OSError:
                self.found.append(finding("deleted", rel, "tracked at the pinned commit, "
                                                          "missing from the working tree"))
                continue
            if mode == "120000":
                self._symlink(base, rel, st, sha, objects)
            elif not stat.S_ISREG(st.st_mode):
                self.found.append(finding("type_changed", rel, (
                    f"a regular file at the pinned commit, now {_kind(st.st_mode)}")))
            else:
                got = _blob_sha(f"{base}/{rel}")
                if got is None:
                    self.found.append(finding("unverifiable", rel, "could not be read"))
                elif got != sha and not _lfs_match(objects, sha, f"{base}/{rel}"):
                    extra = {}
                    if diffs < MAX_DIFFS:
                        diffs += 1
                        extra["diff"] = _diff(objects.blob(sha), f"{base}/{rel}", rel)
                    self.found.append(finding("modified", rel, (
                        f"content differs from the pinned commit (blob {sha[:12]}, working tree "
                        f"{got[:12]}, {st.st_size} bytes)"), **extra))
                elif (mode == "100755") != bool(st.st_mode & 0o100):
                    self.found.append(finding("mode_changed", rel, (
                        f"mode {mode} at the pinned commit, now "
                        f"{'100755' if st.st_mode & 0o100 else '100644'}")))

    def _symlink(self, base: str, rel: str, st: os.stat_result, sha: str,
                 objects: _Objects) -> None:
        want = objects.blob(sha).decode("utf-8", "surrogateescape")
        if not stat.S_ISLNK(st.st_mode):
            self.found.append(finding("type_changed", rel, (
                f"a symlink to {want!r} at the pinned commit, now {_kind(st.st_mode)}")))
            return
        got = os.readlink(f"{base}/{rel}")
        if got != want:
            self.found.append(finding("modified", rel, (
                f"a symlink to {want!r} at the pinned commit, now to {got!r}")))


def _parent_problem(base: str, rel: str, dirs: dict[str, str | None]) -> str | None:
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
                    f"its directory {d}/ is now {_kind(st.st_mode)}")
        if dirs[d] is not None:
            return dirs[d]
    return None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def _blob_sha(path: str) -> str | None:
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


def _lfs_match(objects: _Objects, sha: str, path: str) -> bool:
    """Whether the tracked blob is a Git LFS pointer to exactly this file's content."""
    if objects.size(sha) > 512:
        return False
    m = LFS_POINTER.fullmatch(objects.blob(sha))
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


def _diff(before: bytes, path: str, rel: str) -> str:
    """The start of a unified diff, for a person reading the finding (text files only)."""
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


class _Objects:
    """A ``git cat-file --batch`` over the scratch store; every object is re-hashed on read."""

    def __init__(self, store: Path, deadline: float) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_DIR": str(store),
               "HOME": str(store), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_NO_REPLACE_OBJECTS": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.proc = subprocess.Popen(["git", "cat-file", "--batch"], env=env, cwd=store,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.timer = threading.Timer(max(1.0, deadline - time.monotonic()), self.proc.kill)
        self.timer.daemon = True
        self.timer.start()
        self.sizes: dict[str, int] = {}

    def __enter__(self) -> _Objects:
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.cancel()
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        self.proc.kill()
        self.proc.wait(timeout=10)

    def read(self, sha: str) -> tuple[str, bytes]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(sha.encode() + b"\n")
            self.proc.stdin.flush()
            header = self.proc.stdout.readline().decode("ascii", "replace").split()
        except (OSError, ValueError):
            raise Unverifiable("git cat-file stopped (deadline passed?)") from None
        if len(header) != 3 or header[0] != sha:
            raise Unverifiable(f"object {sha} is not in the checkout's object store "
                               "(a shallow clone of another commit?)")
        kind, size = header[1], int(header[2])
        body = self.proc.stdout.read(size + 1)[:size]
        if len(body) != size or hashlib.sha1(f"{kind} {size}\0".encode() + body).hexdigest() != sha:
            raise Unverifiable(f"object {sha} in the checkout's object store does not hash to "
                               "its name: the store was tampered with")
        self.sizes[sha] = size
        return kind, body

    def blob(self, sha: str) -> bytes:
        return self.read(sha)[1]

    def size(self, sha: str) -> int:
        return self.sizes[sha] if sha in self.sizes else len(self.blob(sha))

    def tree_of(self, commit: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob sha) of every file under the commit's tree."""
        kind, body = self.read(commit)
        if kind != "commit":
            raise Unverifiable(f"{commit} is a {kind}, not a commit")
        first = body.split(b"\n", 1)[0].decode("ascii", "replace")
        if not first.startswith("tree "):
            raise Unverifiable(f"commit {commit} names no tree")
        out: dict[str, tuple[str, str]] = {}
        pending = [("", first[5:].strip())]
        while pending:
            prefix, sha = pending.pop()
            kind, data = self.read(sha)
            if kind != "tree":
                raise Unverifiable(f"{sha} is a {kind}, not a tree")
            for mode, name, child in _entries(data):
                path = prefix + name
                if mode == "40000":
                    pending.append((path + "/", child))
                else:
                    out[path] = (mode, child)
                if len(out) > MAX_TRACKED:
                    raise Unverifiable(f"more than {MAX_TRACKED} tracked files")
        return dict(sorted(out.items()))


def _entries(data: bytes) -> Iterator[tuple[str, str, str]]:
    i = 0
    while i < len(data):
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        mode = data[i:space].decode("ascii")
        name = data[space + 1:nul].decode("utf-8", "surrogateescape")
        sha = data[nul + 1:nul + 21].hex()
        if "/" in name or name in ("", ".", ".."):
            raise Unverifiable(f"a tree entry has the impossible name {name!r}")
        yield mode, name, sha
        i = nul + 21


# --------------------------------------------------------------------------- the target's git


def _with_target_git(target: Target, checkout: str, commit: str) -> list[dict[str, Any]]:
    """No view of the target's files from here: its own ``git diff``, and say that it was."""
    res = target.exec(["git", "-c", "core.fsmonitor=false", "-c", f"safe.directory={checkout}",
                       "-C", checkout, "diff", "--no-ext-diff", "--no-textconv", "--name-status",
                       "-z", commit, "--"], timeout=120, scaled=False)
    if res.exit_code != 0 or res.timed_out:
        why = "timed out" if res.timed_out else (res.stderr.strip().splitlines()[-1:] or
                                                 [f"exit {res.exit_code}"])[0][:200]
        return [finding("unverifiable", checkout, (
            f"the host cannot see this target's files and its git could not compare the "
            f"checkout with {commit} ({why})"))]
    fields = res.stdout.split("\0")
    kinds = {"M": "modified", "D": "deleted", "T": "type_changed", "A": "added"}
    out = []
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        kind = kinds.get(status[:1])
        if kind and path:
            out.append(finding(kind, path, f"`git diff {commit[:12]}` in the target says "
                                           f"{status[:1]} (the target's own git)"))
    return out[:MAX_FINDINGS]


def entrypoint_edit(findings: list[dict[str, Any]], run: Any) -> str | None:
    """Why strict fails a stage whose entrypoint (``Run.entrypoint``) was edited, or None.

    The runs started ``together`` with it count too: any of them edited is the stage edited.
    """
    for r in (run, *getattr(run, "together", ())):
        hit = edited(findings, getattr(r, "entrypoint", None))
        if hit is not None:
            return (f"the entrypoint {hit['path']} is not the pinned commit's ({hit['kind']}: "
                    f"{hit['detail']}); the official rules forbid editing the repository")
    return None
