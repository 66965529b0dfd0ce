"""Bytecode the host compiled from the target's own sources, kept per image, so a stage's
interpreters do not compile the whole environment again at every start.

A stage never reads bytecode the image carries (``pyramid/run_integrity``: Python runs a
``__pycache__`` file whose header matches its source without reading the source), so
without this every stage compiles everything it imports, every time: MultiModalMamba's
``example.py`` took 22.9 s that way and 7.8 s with its bytecode at hand, in one container.
Two ways fill the image's folder: before its first stage, the module-level imports of
``torch`` and of the entry scripts (``precompile``); after each stage, what it still had
to compile for itself (``keep``).

What a stage finds instead, and why it is no more than a faster read of the source:

- **Kept files are the host's.**  The host compiles them itself, from the source as it
  reads it in a container of the image where nothing of the image ever ran (``keep``),
  with its own compiler (the
  same Python minor version only: the file name carries the cache tag, the header the magic
  number), as PEP 552 *checked-hash* files.  Python loads one only when the source it is
  importing hashes the same, and its code is then exactly ``compile(source)``.  So a kept
  file for the checkout is as safe as the checkout's source, and one compiled from a file a
  run had changed is never loaded where that file is as the image made it.
- **A stage's own writes stay its own.**  Each stage gets a new folder under
  ``PYCACHE_DIR`` (a tmpfs of the container, named per process), filled with links to the
  kept files (a read-only mount) before its command starts.  Its interpreters write there
  what they had to compile; nothing else ever reads that folder.  The host takes only the
  *names* from it, as the list of sources to read and compile itself (``harvest``), read
  in a container of the image where nothing of the image ever ran, and compiled in a
  low-priority process of its own (``spawn``) so the pyramid does not wait for it.
- **Stored once per source** (``store``): objects named by the source's SHA-256, linked
  into each image's folder, so agents' images that share a ``torch`` share its bytecode.
- **Per image id** (``imagecache``'s rule: an image is immutable), on the host, where
  nothing the image runs can write; targets without an image (``local://``, ``ssh://``)
  keep the old way: no bytecode written or read.
- **What stages import late is learned** (``learn``): the modules a stage still compiled
  for itself (``torch._dynamo``, which an optimiser's first step imports) are named for
  the host's compile before the first stage of every later image (``precompile``), as
  names only: what is compiled is always that image's own source.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import pickle
import re
import secrets
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import CodeType
from typing import Any

from pytest_reb.targets import hostview, imagecache
from pytest_reb.targets.hostview import open_regular

#: Python's own setting: bytecode is read and written under this folder, and nowhere else.
PYCACHE_ENV = "PYTHONPYCACHEPREFIX"
#: One bytecode folder per pytest-reb process, outside the checkout; in a container, a
#: tmpfs that holds one folder per stage.
PYCACHE_DIR = f"/tmp/reb-pycache-{secrets.token_hex(8)}"
#: Where the image's kept bytecode is mounted read-only.
MOUNT = "/opt/reb/bytecode"
#: The host cache's kind (``imagecache.folder``).
KIND = "bytecode"
#: Bounds on what one stage's names make the host read and compile.
MAX_SOURCE = 4 << 20
MAX_FILES = 20_000
#: At most this many module names are learned (``learn``) for every image's compile.
MAX_LEARNED = 8_000
#: A dotted module name as ``learn`` keeps it (``sysconfig`` imports a name with dashes).
_MODULE_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")
#: Where a source's dotted module name starts: under a site folder or the standard library.
_MODULE_ROOTS = re.compile(r"/(?:site|dist)-packages/|/lib/python\d+\.\d+/(?!.*-packages/)")
#: PEP 552 flags: hash-based, and checked against the source at every import.
CHECKED_HASH = 0b11
TAG = sys.implementation.cache_tag
MAGIC = importlib.util.MAGIC_NUMBER
#: Makes a stage's folder, then fills it with links to the kept files; fails when the name
#: is taken (a folder the image made there would otherwise be merged in).
SEED_SCRIPT = 'mkdir -- "$1" && cp -rs -- "$2"/. "$1"'

_workers: list[subprocess.Popen[bytes]] = []
_lock = threading.Lock()


def kept_dir(image_id: str | None) -> Path | None:
    """The host folder of the image's kept bytecode (made, readable by the container's
    root, which has no ``CAP_DAC_OVERRIDE``), or None without an image or a writable cache."""
    if not image_id or TAG is None:
        return None
    where = imagecache.folder(KIND, image_id)
    try:
        where.mkdir(parents=True, exist_ok=True)
        os.chmod(where, 0o755)
    except OSError:
        return None
    return where


def stage_folder(env: Mapping[str, str]) -> str | None:
    """The stage's own bytecode folder that ``env`` (``seed``) names, or None (no folder of
    its own: a target that keeps no bytecode)."""
    folder = env.get(PYCACHE_ENV, "")
    return folder if folder.startswith(PYCACHE_DIR + "/") else None


def kept_any(kept: Path) -> bool:
    """Whether anything is kept in ``kept`` yet (a probe reads the image's own bytecode
    until then: on an image that ships bytecode, better than compiling)."""
    try:
        with os.scandir(kept) as entries:
            return any(e.is_dir(follow_symlinks=False) for e in entries)
    except OSError:
        return False


def pyc_name(source: str, optimize: int) -> str:
    """The kept file of ``source`` (a target path ending ``.py``), relative to the prefix:
    where Python looks for it under ``PYTHONPYCACHEPREFIX``."""
    head, _, tail = source.rpartition("/")
    opt = f".opt-{optimize}" if optimize else ""
    return f"{head.lstrip('/')}/{tail[:-3]}.{TAG}{opt}.pyc".lstrip("/")


def _parse(name: str) -> tuple[str, int] | None:
    """``(stem, optimize)`` of a bytecode file name of this Python, or None."""
    stem, dot, rest = name.partition(f".{TAG}")
    if not dot or not stem:
        return None
    if rest == ".pyc":
        return stem, 0
    if rest in (".opt-1.pyc", ".opt-2.pyc"):
        return stem, int(rest[5])
    return None


def pyc(source: bytes, path: str, optimize: int) -> bytes | None:
    """Checked-hash bytecode of ``source`` (PEP 552), or None when it does not compile."""
    code = compiled(source, path, optimize)
    return None if code is None else pyc_of(source, code)


def compiled(source: bytes, path: str, optimize: int) -> CodeType | None:
    """``source`` compiled by this Python as an import would (``path`` its file name), or
    None when it does not compile."""
    try:
        return compile(source, path, "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return None


def pyc_of(source: bytes, code: CodeType) -> bytes:
    """The checked-hash file (PEP 552) of ``code``, compiled from ``source``."""
    return (MAGIC + CHECKED_HASH.to_bytes(4, "little") + importlib.util.source_hash(source)
            + marshal.dumps(code))


def written(view: Any, prefix: str) -> list[tuple[str, int]]:
    """``(source, optimize)`` of each file a stage's interpreters wrote into its folder
    ``prefix``: regular files (the kept ones are links) that start with this Python's magic.

    Only the names are used, as a list of sources for the host to read and compile: the
    files' content is the target's.
    """
    where = view.resolve(prefix)
    if where is None:
        return []
    top = view.host_path(where)
    found: list[tuple[str, int]] = []
    for folder, _dirs, files in os.walk(top):  # links (the kept files) are not followed
        for name in files:
            parsed = _parse(name)
            if parsed is not None and _ours(os.path.join(folder, name)):
                found.append((f"{folder[len(top):]}/{parsed[0]}.py", parsed[1]))
    return found


def wanted(names: Sequence[tuple[str, int]], kept: Path,
           skip: Sequence[str]) -> list[tuple[str, int]]:
    """Those of ``names`` (``written``) the host has not kept yet, none under ``skip``
    (our mounts), at most ``MAX_FILES``."""
    return [(source, optimize) for source, optimize in names
            if not any(source.startswith(s.rstrip("/") + "/") for s in skip)
            and not (kept / pyc_name(source, optimize)).exists()][:MAX_FILES]


def harvest(view: Any, names: Sequence[tuple[str, int]]) -> list[tuple[str, int, bytes]]:
    """``(path, optimize, source)`` for each of ``names``, the source read in ``view``
    (missing, not a regular file, or larger than ``MAX_SOURCE``: left out)."""
    found: list[tuple[str, int, bytes]] = []
    for source, optimize in names:
        text = view.read(source, limit=MAX_SOURCE + 1)
        if text is not None and len(text) <= MAX_SOURCE:
            found.append((source, optimize, text))
    return found


def _ours(path: str) -> bool:
    """Whether ``path`` is a regular file that starts with this Python's magic number."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        with open_regular(path) as fh:
            return bool(fh.read(len(MAGIC)) == MAGIC)
    except OSError:
        return False


def store(kept: Path, items: Sequence[tuple[str, int, bytes]],
          said: Callable[[CodeType], bytes] | None = None) -> int:
    """Keep ``items`` in ``kept``; how many were kept.  ``said(code)``, where given, is kept
    beside each new object (``imports_file``: what the compile imports, which
    ``precompile`` reads to link the object for another image without compiling it again).

    Each compiled file is an object named by the SHA-256 of its source (beside the images'
    folders, never mounted), linked into every image's folder that has that source: the
    same ``torch`` in two agents' images is compiled and stored once.  The object is the
    source's whole compile, so only its own source can name it (Python's own check, by a
    64-bit SipHash with a public key, is never what picks a file across images).  Each
    file is written whole (a reader never sees half).
    """
    done = 0
    for source, optimize, text in items:
        if not plain_path(source):
            continue
        obj = object_of(kept, hashlib.sha256(text).hexdigest(), optimize)
        try:
            if not obj.exists():
                code = compiled(text, source, optimize)
                if code is None:
                    continue
                write_object(kept, obj, pyc_of(text, code))
                if said is not None and not optimize:
                    write_object(kept, imports_file(obj), said(code))
            link(kept, source, optimize, obj)
            done += 1
        except OSError:
            continue
    return done


def module_of(source: str) -> str | None:
    """The dotted module the kept ``source`` is, where it lies under a site folder or the
    standard library (``.../site-packages/a/b.py``: ``a.b``; a package's ``__init__.py``:
    the package), or None (the checkout's own files, a part that is not a name): another
    image finds the same module wherever its interpreter keeps it."""
    found = list(_MODULE_ROOTS.finditer(source))
    if not found or not source.endswith(".py"):
        return None
    parts = source[found[-1].end():-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    name = ".".join(parts)
    return name if _MODULE_NAME.fullmatch(name) else None


def learned_path(kept: Path) -> Path:
    """The names learned for every image (``learn``), beside the images' folders."""
    return kept.parent / f"learned.{TAG}"


def learned(kept: Path) -> list[str]:
    """The module names learned so far (``learn``) for the compile before an image's first
    stage; none where nothing was learned or the file cannot be read."""
    try:
        lines = learned_path(kept).read_text().splitlines()[:MAX_LEARNED]
    except (OSError, UnicodeDecodeError):
        return []
    return [n for n in lines if _MODULE_NAME.fullmatch(n)]


def learn(kept: Path, sources: Iterable[str]) -> int:
    """Learn the modules of ``sources`` (what a stage still compiled for itself, each read in
    a container of the image): the host compiles them before the first stage of every later
    image too, from that image's own files (``precompile``).  How many names were new.

    Names, not bytecode, cross images: a later image that lacks the module, or has other
    bytes for it, is only looked up or compiled as its own.  Two runs that learn at once
    may each keep only their own names (the file is replaced whole): an optimisation lost,
    nothing else.
    """
    have = set(learned(kept))
    new = {m for m in map(module_of, sources) if m is not None} - have
    if not new or len(have) >= MAX_LEARNED:
        return 0
    names = sorted(have | new)[:MAX_LEARNED]
    with contextlib.suppress(OSError):
        _whole(learned_path(kept), lambda tmp: tmp.write_text("\n".join(names) + "\n"))
        return len(new)
    return 0


def plain_path(source: str) -> bool:
    """Whether ``source`` is an absolute path with no empty, ``.`` or ``..`` part: one that
    names a kept file inside the image's folder and nowhere else."""
    return source.startswith("/") and not any(
        p in ("", ".", "..") or "\0" in p for p in source.split("/")[1:])


def object_of(kept: Path, digest: str, optimize: int) -> Path:
    """Where the compile of the source whose SHA-256 is ``digest`` is stored, for every
    image (``kept``: one image's folder, beside which the objects lie)."""
    opt = f".opt-{optimize}" if optimize else ""
    return kept.parent / "objects" / str(TAG) / digest[:2] / f"{digest}{opt}.pyc"


def imports_file(obj: Path) -> Path:
    """Where what the compile ``obj`` imports is kept, beside it (``precompile``)."""
    return obj.with_name(obj.name[:-4] + ".imports")


def write_object(kept: Path, obj: Path, data: bytes) -> None:
    """``obj`` (``object_of``) written whole, its folders made readable."""
    _folders(kept.parent, obj.parent)
    _whole(obj, lambda tmp: tmp.write_bytes(data))


def link(kept: Path, source: str, optimize: int, obj: Path) -> None:
    """The kept file of ``source`` in the image's folder ``kept``: a link to ``obj``."""
    dest = kept / pyc_name(source, optimize)
    _folders(kept, dest.parent)
    _whole(dest, lambda tmp: _link(obj, tmp))


def _folders(base: Path, folder: Path) -> None:
    """``folder`` and its parents up to ``base`` made, readable by the container's root
    (whatever the umask); those already there are left as they are."""
    if folder.is_dir():  # most often: one look, not one per level
        return
    rel = folder.relative_to(base)
    for part in [*reversed(rel.parents[:-1]), rel]:
        made = base / part
        if not made.is_dir():
            made.mkdir(exist_ok=True)
            os.chmod(made, 0o755)


def _whole(dest: Path, make: Callable[[Path], object]) -> None:
    """``dest`` made by ``make(tmp)`` beside it and renamed into place, mode 0644."""
    tmp = dest.parent / f".new-{secrets.token_hex(6)}"
    try:
        make(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _link(obj: Path, tmp: Path) -> None:
    """A hard link to ``obj`` at ``tmp``; a copy where the file system refuses one more."""
    try:
        os.link(obj, tmp)
    except OSError:  # EMLINK (an empty __init__.py is in thousands of places), EXDEV
        tmp.write_bytes(obj.read_bytes())


def spawn(kept: Path, items: Sequence[tuple[str, int, bytes]]) -> None:
    """Compile ``items`` into ``kept`` in a process of its own, at low priority, that the
    run does not wait for (as ``git gc --auto`` detaches): a pyramid is not made longer by
    filling the cache for the next one.  It needs nothing of the run, so it may outlive it;
    it ends when the items are stored (a removed cache folder: it stores nothing)."""
    if not items:
        return
    with _lock:  # those already done are reaped, so a long matrix leaves no zombie behind
        _workers[:] = [p for p in _workers if p.poll() is None]
        proc = subprocess.Popen([sys.executable, "-m", "pytest_reb.targets.bytecode", str(kept)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        _workers.append(proc)
    payload = pickle.dumps(list(items), protocol=pickle.HIGHEST_PROTOCOL)

    def feed() -> None:  # through a pipe: the sources never touch the host's disk
        assert proc.stdin is not None
        with contextlib.suppress(OSError):
            proc.stdin.write(payload)
            proc.stdin.close()

    threading.Thread(target=feed, name="reb-bytecode-feed", daemon=True).start()


def seed(target: Any, profile: str, gpus: Sequence[str]) -> dict[str, str] | None:
    """A new folder for one stage in ``target``'s container, filled with links to the kept
    files; the env its commands get (bytecode written there), or None when it cannot be made."""
    folder = f"{PYCACHE_DIR}/{secrets.token_hex(6)}"
    res = target.exec([*target.util("sh"), "-c", SEED_SCRIPT, "sh", folder, MOUNT],
                      timeout=60, profile=profile, gpus=gpus, scaled=False)
    if res.exit_code != 0 or res.timed_out:
        return None
    # an empty value is unset for Python: it writes, and only into the stage's folder
    return {PYCACHE_ENV: folder, "PYTHONDONTWRITEBYTECODE": ""}


def keep(target: Any, kept: Path, env: Mapping[str, str], devices: Sequence[str],
         skip: Sequence[str]) -> dict[str, int] | None:
    """After a stage that ran with ``env`` (``seed``): the names of what its interpreters
    compiled for themselves; the sources read in a container of the image's own where
    nothing of the image ever ran (``Target.sibling``: its init and keep-alive are ours),
    so what the host compiles is the image's code even where the stage changed a file; sent
    to be compiled by the host.

    An optimisation only: whatever goes wrong here leaves the stage's verdict alone.
    """
    folder = stage_folder(env)
    if folder is None:
        return None
    items: list[tuple[str, int, bytes]] = []
    try:
        found = hostview.view(target, devices)
        names = [] if found is None else written(found, folder)
        new = wanted(names, kept, skip)
        pristine = target.sibling() if new else None
        if pristine is not None:
            try:
                view = hostview.view(pristine)
                items = [] if view is None else harvest(view, new)
            finally:
                pristine.retire()
        learnt = learn(kept, [source for source, _optimize, _text in items])
    except Exception:  # the container lost, the engine gone: nothing kept
        return None
    spawn(kept, items)
    return {"compiled_in_stage": len(names), "sent_to_host": len(items), "learned": learnt}


def main(argv: list[str]) -> int:
    """The worker: the items on stdin (pickled by our own process) into the folder named."""
    import json

    from pytest_reb.targets.codeimports import imports_of

    os.nice(10)
    items = pickle.load(sys.stdin.buffer)  # written by the pytest-reb that started us
    store(Path(argv[0]), items, lambda code: json.dumps(imports_of(code)).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
