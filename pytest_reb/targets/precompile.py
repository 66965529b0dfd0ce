"""Bytecode the host compiles before an image's first stage, so no stage of a first
verification compiles what it imports (``bytecode``: what is kept, and why it is safe).

Until something is kept for an image, every interpreter that imports ``torch`` compiles
the ~1000 modules it imports: on the demo image, ``import torch`` took 3.4 CPU-s compiling
and a first verification starts four of them (C1's entrypoint, C2's CUDA probe, C5's
strict probe and official question).  What they will import is known before any of them
runs, from the image's files alone: the module-level imports of the entry scripts (of the
stages the run will start: ``context.entry_scripts``), of
``torch`` (``ROOTS``) and of the interpreter's start, followed through the interpreter's
search path.  An import inside a function runs only when it is called, so it is left to
the stage that calls it, and to ``bytecode.keep`` after it.

- **Read where nothing of the image ran.**  The sources are read in a fresh container of
  the image (``Target.sibling``, its init and keep-alive ours), as ``bytecode.keep`` reads
  them: a file a stage's run had changed, or swapped under the read, is never what the
  host compiles for it.
- **Compiled by the host, as ``bytecode.store`` does**: checked-hash files, one object per
  source SHA-256, linked into the image's folder.  Beside each object, the module-level
  imports the host found in that compile (``<digest>.imports``), so another image with the
  same sources is linked without compiling again.
- **In several processes at once** (``workers``: up to ``MAX_WORKERS``, one per core),
  beside C0, which leaves most of a core free; each reads, compiles and stores one file at
  a time and answers what it imports, and this process follows those names.
- **A stage waits for it** (``wait``: at most ``WAIT``) before its first command, only where
  it was started; whatever fails here leaves a stage to compile what it imports itself.
- **What earlier images' stages imported late** (``bytecode.learned``: modules imported
  inside a function, such as the ``torch._dynamo`` an optimiser's first step imports) are
  followed next, looked up and read in this image like the others, within
  ``LEARNED_BUDGET`` more: on a machine that verifies many images of the same frameworks, a
  first stage of the next one compiles next to nothing of its own either (linking a file
  already compiled for another image takes about a millisecond).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import json
import os
import posixpath
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pytest_reb.targets import bytecode
from pytest_reb.targets.codeimports import imports_of
from pytest_reb.targets.hostview import HostView

#: What the tiers' own probes import besides the entry scripts: C2's CUDA probe and C5's
#: questions each ``import torch``.
ROOTS = ("torch",)
#: What every interpreter imports as it starts, from files (the rest is frozen in it).
STARTUP = ("encodings", "encodings.aliases", "encodings.utf_8", "sitecustomize",
           "usercustomize")
#: At most this many processes compile at once, one per core.
MAX_WORKERS = 4
#: How long a stage waits for the compile before it starts compiling for itself.
WAIT = 120.0
#: Bounds on what one image makes the host compile, and for how long (a stage compiles the
#: rest for itself), and on a module's dotted name.  The demo's closure: 1,048 files, 4 s.
MAX_FILES = 10_000
BUDGET = 60.0
#: How much longer the learned modules (``bytecode.learned``) may take, after the rest.
LEARNED_BUDGET = 10.0
MAX_DEPTH = 32
EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)

_runs: dict[Path, Future[dict[str, Any]]] = {}
_lock = threading.Lock()


@dataclass
class Found:
    """A module found on the search path: its file (None: an extension or a namespace
    package, nothing to compile) and the folders its submodules are looked for in."""

    file: str | None
    folders: list[str] = field(default_factory=list)


class Finder:
    """Finds modules on a search path in a view of the target's files, as the interpreter's
    path finder would: a package folder first, then an extension, then a source file."""

    def __init__(self, view: HostView, path: Sequence[str]) -> None:
        self.view, self.path = view, list(dict.fromkeys(path))
        self._names: dict[str, frozenset[str]] = {}
        self._found: dict[str, Found | None] = {}

    def _listing(self, folder: str) -> frozenset[str]:
        if folder not in self._names:
            self._names[folder] = frozenset(self.view.listdir(folder))
        return self._names[folder]

    def _in(self, folders: Sequence[str], name: str) -> Found | None:
        portions: list[str] = []
        for folder in folders:
            names = self._listing(folder)
            where = posixpath.join(folder, name)
            if name in names and self.view.is_dir(where):
                if "__init__.py" in self._listing(where):
                    return Found(posixpath.join(where, "__init__.py"), [where])
                portions.append(where)  # a namespace package's portion, unless a module wins
            if any(name + suffix in names for suffix in EXTENSIONS):
                return Found(None)
            if name + ".py" in names:
                return Found(where + ".py")
        return Found(None, portions) if portions else None

    def find(self, module: str) -> Found | None:
        """Where ``module`` (dotted) is, or None where the path has no such module."""
        parts = module.split(".")
        if len(parts) > MAX_DEPTH or not all(parts):
            return None
        found: Found | None = Found(None, self.path)
        for n in range(1, len(parts) + 1):
            name = ".".join(parts[:n])
            if name not in self._found:
                self._found[name] = (self._in(found.folders, parts[n - 1])
                                     if found is not None and found.folders else None)
            found = self._found[name]
        return found


def absolute(importer: str, is_package: bool, name: str, level: int) -> str | None:
    """The module an import of ``name`` at ``level`` in module ``importer`` names."""
    if level == 0:
        return name
    package = importer if is_package else importer.rpartition(".")[0]
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None  # beyond the top-level package: Python refuses it too
    base = ".".join(parts[:len(parts) - (level - 1)])
    return f"{base}.{name}" if name else base


def search_path(view: HostView, python: str, scripts: Sequence[str],
                pythonpath: str = "") -> list[str]:
    """Where ``python`` looks for modules, from the target's files: the scripts' folders,
    ``PYTHONPATH``, the standard library under the interpreter's base prefix, then every site
    folder the host finds for it (``hostfacts``); none where ``python`` is not this Python's
    major.minor by its own files (kept files of another version are named for another cache
    tag: no stage would read them)."""
    from pytest_reb.evidence import hostfacts

    facts = hostfacts.from_view(view, python, pythonpath)
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if facts.resolved is None or set(facts.major_minor) != {mine}:
        return []
    base = posixpath.dirname(posixpath.dirname(facts.resolved))
    std = [posixpath.join(base, "lib", f"python{v}") for v in facts.major_minor]
    return [*(posixpath.dirname(s) for s in scripts),
            *(p for p in pythonpath.split(":") if p.startswith("/")),
            *std, *(posixpath.join(s, "lib-dynload") for s in std), *facts.searched]


class _Worker:
    """One compiling process: a file's path in, its imports out (``serve``)."""

    def __init__(self, root: str, kept: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_reb.targets.precompile", root, str(kept)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True)

    def ask(self, path: str, keep: bool) -> list[tuple[str, int, list[str]]] | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([path, keep]).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise OSError("the compiling process ended")
        got = json.loads(line)["imports"]
        return None if got is None else [(n, lv, f) for n, lv, f in got]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Closure:
    """The module-level import closure of some roots, each file compiled as it is reached."""

    def __init__(self, finder: Finder, skip: Sequence[str], max_files: int = MAX_FILES,
                 budget: float = BUDGET) -> None:
        self.finder, self.max_files = finder, max_files
        self.deadline = time.monotonic() + budget
        self.skip = tuple(s.rstrip("/") + "/" for s in skip)
        self._cond = threading.Condition()
        #: (file, module name, is a package, store it) still to be compiled
        self._todo: deque[tuple[str, str, bool, bool]] = deque()
        self._names: set[str] = set()
        self.files: set[str] = set()
        self.compiled = 0
        self._busy = 0

    def add(self, module: str) -> None:
        """Follow ``module`` and its parent packages (an import runs each ``__init__``)."""
        parts = module.split(".")
        for n in range(1, min(len(parts), MAX_DEPTH) + 1):
            name = ".".join(parts[:n])
            if name in self._names or not all(parts[:n]):
                continue
            self._names.add(name)
            found = self.finder.find(name)
            if found is not None and found.file is not None:
                self._queue(found.file, name, found.file.endswith("/__init__.py"), True)

    def add_script(self, path: str) -> None:
        """Follow what the script at ``path`` imports (it is run, never imported: not kept)."""
        self._queue(path, "__main__", False, False)

    def _queue(self, file: str, name: str, package: bool, keep: bool) -> None:
        if file in self.files or len(self.files) >= self.max_files or file.startswith(self.skip):
            return
        self.files.add(file)
        self._todo.append((file, name, package, keep))

    def run(self, worker: _Worker) -> None:
        """Compile what is queued with ``worker`` until nothing is left, here or in flight
        (several threads, each with its own worker, share the queue)."""
        while True:
            with self._cond:
                while not self._todo and self._busy:
                    self._cond.wait()
                if not self._todo or time.monotonic() > self.deadline:
                    self._cond.notify_all()
                    return
                file, name, package, keep = self._todo.popleft()
                self._busy += 1
            try:
                imports = worker.ask(file, keep)
            finally:
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()
            with self._cond:
                self.compiled += keep and imports is not None
                for imported, level, names in imports or ():
                    target = absolute(name, package, imported, level)
                    if target is not None:
                        self.add(target)
                        for sub in names:
                            self.add(f"{target}.{sub}")
                self._cond.notify_all()


def workers() -> int:
    """How many compiling processes: one per core this process may use, up to ``MAX_WORKERS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def compile_closure(view: HostView, kept: Path, path: Sequence[str], roots: Iterable[str],
                    scripts: Sequence[str], skip: Sequence[str],
                    learned: Sequence[str] = ()) -> dict[str, int]:
    """Compile into ``kept`` the closure of ``roots`` and of the ``scripts``' imports, every
    source read in ``view`` (a container where nothing of the image ran); then, within
    ``LEARNED_BUDGET`` more, the closure of the ``learned`` modules (``bytecode.learned``),
    after what every stage needs, so names learned from other images' frameworks never
    hold a first stage back by more than that."""
    closure = Closure(Finder(view, path), skip)
    for script in scripts:
        closure.add_script(script)
    for root in roots:
        closure.add(root)
    procs = [_Worker(view.root, kept) for _ in range(workers())]
    try:
        _run(closure, procs)
        essential = closure.compiled
        if learned:
            closure.deadline = time.monotonic() + LEARNED_BUDGET
            for name in learned:
                closure.add(name)
            _run(closure, procs)
    finally:
        for w in procs:
            w.close()
    return {"files": len(closure.files), "compiled": closure.compiled, "workers": len(procs),
            "learned": closure.compiled - essential}


def _run(closure: Closure, procs: Sequence[_Worker]) -> None:
    threads = [threading.Thread(target=_drive, args=(closure, w), daemon=True,
                                name="reb-precompile") for w in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _drive(closure: Closure, worker: _Worker) -> None:
    with contextlib.suppress(Exception):  # a worker lost: the others go on
        closure.run(worker)


def start(target: Any, kept: Path, python: Callable[[Any], str | None],
          scripts: Sequence[str], skip: Sequence[str]) -> None:
    """Begin compiling, in the background, what the stages' interpreter will import
    (``ROOTS``, ``STARTUP`` and the ``scripts``' imports) into ``kept``, once per image and
    process, and only where nothing is kept for the image yet.  ``python(pristine)`` names
    that interpreter, given the fresh container of the image the sources are read in (where
    the report can be read too, before anything of the image ran)."""
    with _lock:
        if kept in _runs or bytecode.kept_any(kept):
            return
        made: Future[dict[str, Any]] = Future()
        _runs[kept] = made
    threading.Thread(target=_prepare, args=(made, target, kept, python, scripts, skip),
                     name="reb-precompile", daemon=True).start()


def _prepare(made: Future[dict[str, Any]], target: Any, kept: Path,
             python: Callable[[Any], str | None], scripts: Sequence[str],
             skip: Sequence[str]) -> None:
    result: dict[str, Any] = {}
    began = time.monotonic()
    try:
        pristine = target.sibling()
        if pristine is not None:
            try:
                interpreter = python(pristine)
                view = pristine.host_view() if interpreter else None
                path = [] if view is None or interpreter is None else search_path(
                    view, interpreter, scripts, target.own_env("PYTHONPATH") or "")
                if view is not None and path:
                    result = compile_closure(view, kept, path, [*STARTUP, *ROOTS], scripts,
                                             skip, bytecode.learned(kept))
            finally:
                pristine.retire()
    except Exception as exc:  # an optimisation only: the stages compile for themselves
        result = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    made.set_result({**result, "seconds": round(time.monotonic() - began, 3)})


def wait(kept: Path | None, timeout: float = WAIT) -> dict[str, Any] | None:
    """Wait for the compile ``start`` began for ``kept``, at most ``timeout``; what it did,
    or None where none was begun or it is not done."""
    with _lock:
        made = _runs.get(kept) if kept is not None else None
    if made is None:
        return None
    try:
        return made.result(timeout)
    except Exception:
        return None


def _one(view: HostView, kept: Path, path: str, keep: bool) -> list[Any] | None:
    """Compile the source at ``path`` (read in ``view``), keep it unless ``keep`` is false,
    and say what it imports; None when it cannot be read or compiled."""
    text = view.read(path, bytecode.MAX_SOURCE + 1)
    if text is None or len(text) > bytecode.MAX_SOURCE or not bytecode.plain_path(path):
        return None
    obj = bytecode.object_of(kept, hashlib.sha256(text).hexdigest(), 0)
    said = bytecode.imports_file(obj)
    if keep and obj.exists():
        with contextlib.suppress(OSError, ValueError):
            imports = json.loads(said.read_bytes())
            bytecode.link(kept, path, 0, obj)
            return list(imports)
    code = bytecode.compiled(text, path, 0)
    if code is None:
        return None
    imports = imports_of(code)
    if keep:
        if not obj.exists():
            bytecode.write_object(kept, obj, bytecode.pyc_of(text, code))
        bytecode.write_object(kept, said, json.dumps(imports).encode())
        bytecode.link(kept, path, 0, obj)
    return imports


def serve(root: str, kept: Path, requests: IO[bytes], answers: IO[bytes]) -> None:
    """The worker's loop: each request a ``[path, keep]`` line, each answer an
    ``{"imports": ...}`` line; ends when ``requests`` does."""
    view = HostView(root)
    for line in requests:
        try:
            path, keep = json.loads(line)
            imports = _one(view, kept, str(path), bool(keep))
        except (OSError, ValueError, TypeError):
            imports = None
        answers.write(json.dumps({"imports": imports}).encode() + b"\n")
        answers.flush()


if __name__ == "__main__":
    serve(sys.argv[1], Path(sys.argv[2]), sys.stdin.buffer, sys.stdout.buffer)
