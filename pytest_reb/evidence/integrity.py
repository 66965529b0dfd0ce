"""Integrity: the checkout's tracked files against the pinned commit, checked by the host.

The official rules forbid editing the repository and never check it
(reference §12.1.2): an agent can make an entrypoint ``exit 0`` and pass.
Here the host reads the target's files from outside (``hostview.py``), so
neither ``git`` nor any program of the target is trusted or even needed:

1. the container is frozen (``hostview.frozen``) for the whole check, so no
   process of the image can swap a directory for a symlink between the
   host's check of a path and its open;
2. the checkout's object store (``.git/objects``: loose objects and packs,
   regular files only) is copied to a scratch repository on the host under
   bounds the image cannot move (``gitstore.py``); its config, hooks, refs
   and alternates are not, so nothing the image wrote can steer the host's ``git``;
3. the reference commit and every tree under it are read with ``git cat-file``
   and each is re-hashed here: object ids are content hashes, so an object
   store that yields them *is* the pinned commit, whatever else the image did;
4. each tracked file of the working tree is hashed as git hashes a blob
   (``sha1("blob <size>\\0" + content)``, ``worktree.py``) and compared with the
   tree; a Git LFS pointer is compared by its sha256;
5. the checkout is walked (bounded) for untracked files that change what a
   probe does: a config pyright or pytest reads, a ``conftest.py``, a
   top-level module that shadows an import.  A ``.pth`` in a checkout is
   data (research code's PyTorch weights): Python's ``site`` reads ``.pth``
   files only in site directories, and a checkout becomes one only through
   a startup hook, which the host flags on its own (``fakescan``).

A container that vanished under the check is ``InfraError`` (the tier's
``infra``), never "every file deleted".  Where the host cannot see the
target's files (``ssh://`` and other testinfra URLs) the target's own
``git diff`` is used, under a timeout, and says so.

Findings are ``{"kind", "path", "detail"}`` with kinds ``modified``,
``deleted``, ``type_changed`` (the edits), ``untracked``, ``mode_changed``,
``head_moved`` (informational) and ``unverifiable``.  What they do to each
tier is ``verdict.py``'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb.evidence import gitstore, worktree
from pytest_reb.evidence.gitstore import HEX40, Objects, Unverifiable, copy_objects
from pytest_reb.targets import Target, hostview, imagecache, read_git_commit

#: The kinds that mean "this file is not what the pinned commit holds".
EDITS = frozenset({"modified", "deleted", "type_changed"})
DEADLINE = 300.0
#: Edited files whose diff is kept in the finding (``worktree.diff``).
MAX_DIFFS = 20
MAX_FINDINGS = 500
#: Entries of the checkout walked for untracked files; directories never walked.
MAX_WALK = 50_000
SKIP_DIRS = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv",
                       "node_modules", "build", "dist"})
#: What marks a folder as a Python environment (venv's ``pyvenv.cfg``, conda's ``conda-meta``):
#: an agent's environment inside the checkout, under any name, is not walked.  Its files are
#: the environment's (the startup-hook scan and the loaded-file check read them), nothing in
#: it shadows a tracked module, and pytest does not collect from it either; walking a torch
#: install there ran past ``MAX_WALK`` and made an honest checkout unverifiable.
ENV_MARKERS = ("pyvenv.cfg", "conda-meta")
#: Untracked files that change what a probe does wherever they are in the checkout.
PROBE_FILES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py",
                         "pyrightconfig.json", "pyproject.toml", "setup.cfg", "pytest.ini",
                         "tox.ini"})
#: Of them, what Python's start-up imports from wherever the path puts it; the others (pytest's
#: conftest and ini files, pyright's config) count only at the root or in a folder that holds
#: tracked files: pytest and pyright read them only in the folders of what they are given, and
#: a folder of no tracked file (a dependency an agent cloned into the checkout to install it,
#: with its own pyproject.toml and conftest.py) is never such a folder: the stages name the
#: pinned commit's files.
STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
#: Files Python imports as a module (``.pyi`` only for pyright: C0).
MODULE_SUFFIXES = (".py", ".pyi", ".pyc", ".so")


def finding(kind: str, path: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "path": path, "detail": detail, **extra}


def edited(findings: list[dict[str, Any]], path: str | None) -> dict[str, Any] | None:
    """The finding that says the tracked file ``path`` (repo-relative) was edited, if any."""
    if not path:
        return None
    want = posixpath.normpath(path.removeprefix("./"))
    return next((f for f in findings if f.get("kind") in EDITS and f.get("path") == want), None)


@dataclass
class Examined:
    """What one check saw: the findings, the checkout's HEAD, and the verified reference tree.

    ``tree`` (path -> (mode, blob sha)) is None when the reference could not be
    read; when it is set, every tree object under ``tree_id`` hashed to its id.
    """

    reference: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    head: str | None = None
    tree_id: str | None = None
    tree: dict[str, tuple[str, str]] | None = None


#: The code that makes an examination: part of the key of one kept per image (``imagecache``).
CODE_DIGEST = imagecache.code_digest(Path(__file__), Path(worktree.__file__),
                                     Path(hostview.__file__), Path(gitstore.__file__))


def before_any_run(target: Target, checkout: str, commit: str, *,
                   against_head: bool = False) -> Examined:
    """``examine`` of a container no command has run in yet: its checkout is the image's, so
    a complete examination (the reference tree read, nothing unverifiable) is kept by the
    image's id and a later run of that image reads it instead of walking the checkout again.
    Never for a check after a command ran (``tiers.run_integrity``): that one always looks."""
    image = imagecache.image_id(target)
    parts = (checkout, commit.lower(), str(against_head), *sorted(_mounted_under(target, checkout)),
             CODE_DIGEST)
    kept = imagecache.load("integrity", image, parts)
    if isinstance(kept, dict):
        with contextlib.suppress(KeyError, TypeError, ValueError):
            tree = {k: (m, sha) for k, (m, sha) in kept.pop("tree").items()}  # JSON made lists
            return Examined(**kept, tree=tree)
    seen = examine(target, checkout, commit, against_head=against_head)
    if seen.tree is not None and not any(f.get("kind") == "unverifiable" for f in seen.findings):
        imagecache.store("integrity", image, parts, dataclasses.asdict(seen))
    return seen


def check(target: Target, checkout: str, commit: str) -> list[dict[str, Any]]:
    """Findings about ``checkout`` in ``target`` against ``commit``; [] when it is intact."""
    return examine(target, checkout, commit).findings


def examine(target: Target, checkout: str, commit: str, *,
            against_head: bool = False) -> Examined:
    """The check against ``commit`` (or, ``against_head``, the checkout's own HEAD commit).

    ``InfraError`` when the target's container was lost under the check; any
    other failure of the check is an ``unverifiable`` finding.
    """
    commit = commit.lower()
    try:
        with hostview.frozen(target) as view:  # a TargetError here is the tier's infra
            if view is None:
                return Examined(commit, _with_target_git(target, checkout, commit))
            return _Check(view, checkout, commit, against_head,
                          ours=_mounted_under(target, checkout)).run()
    except Unverifiable as exc:
        return Examined(commit, [finding("unverifiable", checkout, str(exc))])
    except (OSError, subprocess.SubprocessError, ValueError) as exc:  # never the tier's end
        return Examined(commit, [finding("unverifiable", checkout, (
            f"the check failed: {type(exc).__name__}: {str(exc)[:300]}"))])


def _mounted_under(target: Target, checkout: str) -> frozenset[str]:
    """Our own mounts inside the checkout (the shim folder at ``benchmark_scripts``, the
    asset view), checkout-relative: their files are ours, not untracked files of the image;
    an image's own folder of that name, with no mount over it, is still walked."""
    base = checkout.rstrip("/") + "/"
    return frozenset(at.removeprefix(base).strip("/") for at in target.mounted()
                     if at.startswith(base))


# --------------------------------------------------------------------------- from the host


class _Check:
    def __init__(self, view: hostview.HostView, checkout: str, commit: str,
                 against_head: bool, ours: frozenset[str] = frozenset()) -> None:
        self.view = view
        self.ours = ours
        self.checkout = checkout
        self.result = Examined(commit)
        self.against_head = against_head
        self.deadline = time.monotonic() + DEADLINE
        self.found = self.result.findings

    def run(self) -> Examined:
        commit = self.result.reference
        if not HEX40.fullmatch(commit):
            raise Unverifiable(f"the pinned commit {commit!r} is not a SHA-1")
        if shutil.which(gitstore.git_program()) is None:
            raise Unverifiable("git is not installed on the host")
        root = self.view.resolve(self.checkout)
        if root is None or not self.view.is_dir(root):
            raise Unverifiable(f"there is no checkout at {self.checkout}")
        git_dir = self._git_dir(root)
        head = self.result.head = read_git_commit(self.view.read, root)
        if self.against_head and head is not None:
            commit = self.result.reference = head
        elif head is not None and head != commit:
            self.found.append(finding("head_moved", ".git/HEAD", (
                f"HEAD is {head}, not the pinned {commit}; the working tree is compared "
                "with the pinned commit")))
        try:
            with tempfile.TemporaryDirectory(prefix="reb-integrity-") as scratch:
                store = Path(scratch)
                copy_objects(self.view, git_dir, store, self.deadline)
                with Objects(store, self.deadline) as objects:
                    tree_id, tree = objects.tree_of(commit)
                    self._compare(root, tree, objects)
                self.result.tree_id, self.result.tree = tree_id, tree
                self._untracked(root, tree)
        except Unverifiable as exc:
            self.found.append(finding("unverifiable", self.checkout, str(exc)))
        del self.found[MAX_FINDINGS:]
        return self.result

    def _git_dir(self, root: str) -> str:
        """``.git`` as a directory of the checkout itself, nothing else.

        A ``gitdir:`` file (a worktree or submodule layout) would let the image
        point the check at any object store it likes; objects are content
        hashes, so that alone could not fake the pinned tree, but it is no
        layout the benchmark's task image makes, and strict fails closed on it.
        """
        st = self.view.lstat(f"{root}/.git")
        if st is not None and stat.S_ISDIR(st.st_mode):
            return f"{root}/.git"
        if st is not None and stat.S_ISREG(st.st_mode):
            raise Unverifiable(f"{self.checkout}/.git is a file (a gitdir: link elsewhere), "
                               "not the checkout's own object store")
        raise Unverifiable(f"{self.checkout} is not a git checkout (no .git directory)")

    def _compare(self, root: str, tree: dict[str, tuple[str, str]], objects: Objects) -> None:
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
            parent = worktree.parent_problem(base, rel, dirs)
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
                    f"a regular file at the pinned commit, now {worktree.kind_of(st.st_mode)}")))
            else:
                got = worktree.blob_sha(f"{base}/{rel}")
                if got is None:
                    self.found.append(finding("unverifiable", rel, "could not be read"))
                elif got != sha and not worktree.lfs_match(objects, sha, f"{base}/{rel}"):
                    extra = {}
                    if diffs < MAX_DIFFS:
                        diffs += 1
                        extra["diff"] = worktree.diff(objects, sha, f"{base}/{rel}", rel)
                    self.found.append(finding("modified", rel, (
                        f"content differs from the pinned commit (blob {sha[:12]}, working tree "
                        f"{got[:12]}, {st.st_size} bytes)"), **extra))
                elif (mode == "100755") != bool(st.st_mode & 0o100):
                    self.found.append(finding("mode_changed", rel, (
                        f"mode {mode} at the pinned commit, now "
                        f"{'100755' if st.st_mode & 0o100 else '100644'}")))

    def _untracked(self, root: str, tree: dict[str, tuple[str, str]]) -> None:
        """Untracked files that change what a probe does (``PROBE_FILES``), what
        the entrypoint imports (``_shadowing``), and top-level modules or packages that shadow
        an import from the checkout's root."""
        base = self.view.host_path(root)
        tracked_dirs = {p.rsplit("/", 1)[0] for p in tree if "/" in p}
        tracked_dirs |= {d.split("/", 1)[0] for d in tracked_dirs}
        holding = {p.rsplit("/", i)[0] for p in tree for i in range(1, p.count("/") + 1)}
        pending, seen = [""], 0
        while pending:
            rel_dir = pending.pop()
            try:
                names = sorted(os.listdir(f"{base}/{rel_dir}" if rel_dir else base))
            except OSError:
                continue
            for name in names:
                seen += 1
                if seen > MAX_WALK:
                    self.found.append(finding("unverifiable", self.checkout, (
                        f"more than {MAX_WALK} entries in the checkout: untracked files past "
                        "them were not looked for")))
                    return
                rel = f"{rel_dir}/{name}" if rel_dir else name
                try:
                    st = os.lstat(f"{base}/{rel}")
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if name == "__pycache__":
                        self._bytecode(base, rel, tree)
                        continue
                    if name == ".git" or rel in self.ours:
                        continue
                    package = rel not in tracked_dirs and any(
                        os.path.lexists(f"{base}/{rel}/__init__.{x}") for x in ("py", "pyi"))
                    if not package and (name in SKIP_DIRS or (
                            rel not in holding and _environment(f"{base}/{rel}"))):
                        continue  # a package named or marked so is still a package
                    if package:
                        self._shadowing(base, rel, name, "package", tree)
                    pending.append(rel)
                elif rel not in tree and name in PROBE_FILES and (
                        name in STARTUP_FILES or not rel_dir or rel_dir in holding):
                    self.found.append(finding("untracked", rel, (
                        "untracked, and read by a probe (pyright, pytest or Python's site)")))
                elif rel not in tree and name.endswith(MODULE_SUFFIXES):
                    self._shadowing(base, rel, _module_name(name), "module", tree)

    def _shadowing(self, base: str, rel: str, module: str, what: str,
                   tree: dict[str, tuple[str, str]]) -> None:
        """An untracked module or package at ``rel``: a finding when Python would import it
        instead of a tracked module (a package or an extension beside ``module.py``), or of
        the standard library (at the checkout's root: a script there has it as
        ``sys.path[0]``), both counting for the stages; a top-level one that shadows only an
        installed import counts for C0 (``shadows``)."""
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        beside = f"{folder}/{module}.py" if folder else f"{module}.py"
        top = not folder
        runtime = not rel.endswith(".pyi") and not (what == "package" and not any(
            os.path.lexists(f"{base}/{rel}/__init__.py{c}")
            for c in ("", "c")))
        if runtime and beside in tree and beside != rel:
            self.found.append(finding("untracked", rel, (
                f"an untracked {what} that Python imports instead of the tracked {beside}")))
        elif runtime and top and module in sys.stdlib_module_names:
            self.found.append(finding("untracked", rel, (
                f"an untracked {what} at the checkout's top level: it shadows the standard "
                f"library's `{module}` for every entrypoint run from the checkout")))
        elif top and (what == "package" or rel.endswith((".py", ".pyi"))):
            self.found.append(finding("untracked", rel, (
                f"an untracked {what} at the checkout's top level: it shadows "
                f"`import {module}` for every probe run from the checkout"), shadows=module))

    def _bytecode(self, base: str, rel: str, tree: dict[str, tuple[str, str]]) -> None:
        """``__pycache__`` files Python would load without looking at the tracked source:
        unchecked-hash bytecode (PEP 552).  Other bytecode is never read by a stage, whose
        interpreter keeps its cache elsewhere (``bytecode.PYCACHE_ENV``)."""
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        try:
            names = sorted(os.listdir(f"{base}/{rel}"))[:MAX_WALK]
        except OSError:
            return
        for name in names:
            source = name.split(".", 1)[0] + ".py"
            source = f"{folder}/{source}" if folder else source
            if not name.endswith(".pyc") or source not in tree:
                continue
            try:
                with hostview.open_regular(f"{base}/{rel}/{name}") as fh:
                    head = fh.read(16)
            except OSError:
                continue
            flags = int.from_bytes(head[4:8], "little") if len(head) == 16 else 0
            if flags & 1 and not flags & 2:
                self.found.append(finding("untracked", f"{rel}/{name}", (
                    f"unchecked-hash bytecode of the tracked {source}: Python runs it without "
                    "reading the source, whatever the source says")))

    def _symlink(self, base: str, rel: str, st: os.stat_result, sha: str,
                 objects: Objects) -> None:
        want = objects.blob(sha, 4096).decode("utf-8", "surrogateescape")
        if not stat.S_ISLNK(st.st_mode):
            self.found.append(finding("type_changed", rel, (
                f"a symlink to {want!r} at the pinned commit, now {worktree.kind_of(st.st_mode)}")))
            return
        got = os.readlink(f"{base}/{rel}")
        if got != want:
            self.found.append(finding("modified", rel, (
                f"a symlink to {want!r} at the pinned commit, now to {got!r}")))


def _environment(folder: str) -> bool:
    """Whether ``folder`` (a host path) is a Python environment's root (``ENV_MARKERS``)."""
    return any(os.path.lexists(f"{folder}/{marker}") for marker in ENV_MARKERS)


def _module_name(name: str) -> str:
    """The module a file name imports as: ``x.py``, ``x.cpython-311-x86_64-linux-gnu.so``."""
    return name.split(".", 1)[0]



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
