"""Where each file a stage loaded came from: the facts ``rules/loaded.py`` decides on.

Every file the kernel saw a stage's processes open (``loaded.Watch``) that can change
what Python runs is placed in one of these, read from the engine's layer folders:

- ``checkout``: under the checkout; tracked (its bytes are the integrity check's) or not;
- ``site``: under a ``site-packages`` or ``dist-packages`` folder, with what the
  ``RECORD`` files of that folder say of it, *in every image layer that holds a copy*:
  a ``RECORD`` is the image's own word, so the copies that earlier layers kept are a
  second witness (an installed file edited and its ``RECORD`` rewritten above the layer
  that installed it disagrees with the install's own ``RECORD``), and the layer that
  wrote the file is compared with the layers that wrote its ``RECORD``;
- ``stdlib``: under the interpreter's ``lib/pythonX.Y`` (the folder that holds its
  ``os.py``), with the layer of that ``os.py``: the standard library is what the layer
  that installed the interpreter wrote;
- ``elsewhere``: any other module file (a package reached through a symlink, a folder
  put on ``sys.path``);

and, for each, whether the container itself wrote it (its writable layer holds it) and,
for a file no image layer holds, whether it was written during this stage.

Facts of a file that only image layers hold depend on the image alone and are kept per
image id (``imagecache``), so each installed file is hashed once per image, and only
the files a run loaded.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pytest_reb.evidence import loaded
from pytest_reb.evidence.loaded import Watch
from pytest_reb.targets import imagecache

#: Files Python runs as code, wherever they are.
MODULE_SUFFIXES = (".py", ".pyc", ".pyo", ".pth", ".so", ".zip", ".egg", ".pyz", ".whl")
SITE_DIR = re.compile(r"^(.*?/(?:site|dist)-packages)/(.+)$")
STDLIB_DIR = re.compile(r"^(.*?/lib/python3\.\d+)/(.+)$")
#: Debian keeps its interpreter's ``sitecustomize.py`` here, linked from the standard
#: library's folder: the same package's file, judged as the standard library is.
DEBIAN_ETC = re.compile(r"^/etc/(python3\.\d+)/(.+)$")
#: Bounds on what one ``RECORD`` copy makes the host read and parse.
MAX_RECORD = 32 << 20
#: Threads hashing installed files after a stage (the first run of an image hashes what it
#: loaded; later runs read the kept rows).
HASHERS = max(2, min(8, os.cpu_count() or 2))
CODE_DIGEST = imagecache.code_digest(Path(__file__), Path(loaded.__file__))


def is_module(path: str) -> bool:
    """Whether Python may run ``path`` as code (an extension's versioned name included)."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(MODULE_SUFFIXES) or ".so." in name


def _stdlib_dir(path: str) -> str | None:
    """The standard library's folder ``path`` belongs to (``…/lib/python3.X``), or None."""
    m = STDLIB_DIR.match(path)
    if m is not None:
        return m.group(1)
    etc = DEBIAN_ETC.match(path)
    return None if etc is None else f"/usr/lib/{etc.group(1)}"


def _outside_module(path: str) -> bool:
    """A module file outside the checkout and Python's folders: Python source or bytecode,
    a ``.pth``, an archive, or an extension named as Python names them (``.cpython-``,
    ``.abi3``); other shared libraries are the system's, outside this verdict."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".so") or ".so." in name:
        return ".cpython-" in name or ".abi3." in name
    return is_module(path)


def facts(watch: Watch, checkout: str, tracked: set[str], image: str | None,
          ours: tuple[str, ...] = ()) -> dict[str, Any]:
    """The stage's evidence record: the channel, whether it is complete, and one row per
    loaded file that can change what runs (``rules/loaded.py`` reads it); files under the
    folders ``ours`` (the harness's) are left out."""
    base = checkout.rstrip("/") + "/"
    mine = tuple(p.rstrip("/") + "/" for p in ours)
    kept = imagecache.load("loaded", image, (CODE_DIGEST,))
    cache: dict[str, Any] = kept if isinstance(kept, dict) else {}
    records = _Records(watch)
    rows, pending = [], []
    for path in sorted(watch.paths):
        if mine and path.startswith(mine):
            continue
        if path.startswith(base):
            rel = path[len(base):]
            if rel in tracked or is_module(path):
                rows.append(_own(watch, path, {"path": path, "where": "checkout", "rel": rel,
                                               "tracked": rel in tracked}))
            continue
        site, stdlib = SITE_DIR.match(path), _stdlib_dir(path)
        if site is None and stdlib is None and not _outside_module(path):
            continue
        row = cache.get(path)
        if row is not None and not _still_the_images(watch, row, site):
            row = None
        if row is None:
            row = _own(watch, path, {"path": path})
            if site is not None:
                row["where"] = "site"
                pending.append((row, site.group(1), site.group(2)))
            elif stdlib is not None:
                row.update(where="stdlib", os_layer=loaded.layer_of(watch, f"{stdlib}/os.py"))
            else:
                row["where"] = "elsewhere"
        rows.append(row)
    records.judge(pending)
    for row in rows:
        if "rel" not in row and (row["layer"] or 0) > 0 and row.get("record_layer") != 0:
            cache[row["path"]] = row  # the image's alone: the same in every container of it
    rows = [r for r in rows if not (r.get("where") == "site" and not r.get("listed")
                                    and not is_module(r["path"]))]  # a package's data, caches
    imagecache.store("loaded", image, (CODE_DIGEST,), cache)
    return {"channel": "fanotify", "opened": len(watch.paths), "incomplete": watch.problem,
            "files": rows}


def _kept_hashes(root: str) -> dict[str, str]:
    """The hashes kept for one image layer's folder (image layers are read-only, and shared
    by every image built on them: the demo's environment by every hostile image)."""
    kept = imagecache.load("layer-hashes", root, (CODE_DIGEST,))
    return kept if isinstance(kept, dict) else {}


def _still_the_images(watch: Watch, row: dict[str, Any], site: re.Match[str] | None) -> bool:
    """Whether a kept row still holds: neither the file nor its ``RECORD`` was written by
    this container (its writable layer holds neither)."""
    if loaded.layer_stat(watch.upper, row["path"]) is not None:
        return False
    dist = row.get("dist")
    return not (site and dist and loaded.layer_stat(
        watch.upper, f"{site.group(1)}/{dist}/RECORD") is not None)


def _own(watch: Watch, path: str, row: dict[str, Any]) -> dict[str, Any]:
    """``layer`` (0: the container wrote it; None: in no layer) and, for a file the image
    does not hold, ``in_image`` and ``this_stage``: last written during this stage or an
    earlier stage of the container whose loaded files were all sound (``Watch.checked``)."""
    layer = loaded.layer_of(watch, path)
    row["layer"] = layer
    if layer in (0, None):
        row["in_image"] = any(loaded.layer_stat(d, path) is not None for d in watch.lowers)
        at = loaded.written_at(watch, path)
        row["this_stage"] = at is not None and watch.by_checked_code(at)
    return row


class _Records:
    """The ``RECORD`` copies of the distributions in one site folder, layer by layer."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self.roots = [watch.upper, *watch.lowers]
        self.index: dict[str, dict[str, list[tuple[str, int, str]]]] = {}

    def judge(self, pending: list[tuple[dict[str, Any], str, str]]) -> None:
        """Fill each row with what the ``RECORD`` copies say of its file; the files are hashed
        on threads (reads and ``hashlib`` leave the interpreter's lock), listed ones only."""
        listed = [(row, site, rel, self._site(site).get(posixpath.normpath(rel), []))
                  for row, site, rel in pending]
        want = {(self.roots[row["layer"]], f"{site}/{rel}") for row, site, rel, entries
                in listed if entries and row["layer"] is not None}
        layers = {root: _kept_hashes(root) for root in {r for r, _ in want}
                  if root != self.watch.upper}
        hashes = {(root, p): layers[root][p] for root, p in want
                  if p in layers.get(root, {})}
        todo = sorted(want - set(hashes))
        with ThreadPoolExecutor(max_workers=HASHERS) as pool:
            hashes.update(zip(todo, pool.map(lambda a: loaded.hash_beneath(*a), todo),
                              strict=True))
        for root, kept in layers.items():  # an image layer never changes: kept by its folder
            new = {p: h for (r, p), h in hashes.items() if r == root and h and p not in kept}
            if new:
                imagecache.store("layer-hashes", root, (CODE_DIGEST,), {**kept, **new})
        for row, site, rel, entries in listed:
            got = None if row["layer"] is None else hashes.get(
                (self.roots[row["layer"]], f"{site}/{rel}"))
            row.update(self._of(entries, got))

    def _of(self, entries: list[tuple[str, int, str]], got: str | None) -> dict[str, Any]:
        """What the ``RECORD`` copies (``entries``) say of a file whose hash is ``got``."""
        if not entries:
            return {"listed": False}
        dist = entries[0][0]
        hashed = [(lay, want) for d, lay, want in entries if d == dist and want]
        return {"listed": True, "dist": dist, "hash": got,
                "record_layer": min((lay for _, lay, _ in entries), default=None),
                "agree": [lay for lay, want in hashed if want == got],
                "disagree": [lay for lay, want in hashed if want != got],
                "unhashed": not hashed}

    def _site(self, site: str) -> dict[str, list[tuple[str, int, str]]]:
        if site in self.index:
            return self.index[site]
        per_root = [_records(root, site) if i == 0 else _layer_records(root, site)
                    for i, root in enumerate(self.roots)]
        found: dict[str, list[tuple[str, int, str]]] = {}
        for name in sorted(set().union(*per_root)):
            for i, records in enumerate(per_root):
                for rel, want in records.get(name, ()):
                    found.setdefault(rel, []).append((name, i, want))
        self.index[site] = found
        return found


def _records(root: str, site: str) -> dict[str, list[tuple[str, str]]]:
    """``(file, sha256)`` of each row of each ``RECORD`` in the site folder ``site`` of one
    layer's folder ``root``, by distribution (its ``.dist-info`` folder's name)."""
    fd = loaded.beneath(root, site)
    if fd is None:
        return {}
    try:
        names = sorted(n for n in os.listdir(f"/proc/self/fd/{fd}") if n.endswith(".dist-info"))
    except OSError:
        names = []
    finally:
        os.close(fd)
    found: dict[str, list[tuple[str, str]]] = {}
    for name in names:
        data = loaded.read_beneath(root, f"{site}/{name}/RECORD", MAX_RECORD)
        if data is None:
            continue
        rows = found[name] = []
        for row in csv.reader(io.StringIO(data.decode("utf-8", "replace"))):
            if row and row[0]:
                rows.append((posixpath.normpath(row[0]), row[1].removeprefix("sha256=")
                             if len(row) > 1 and row[1].startswith("sha256=") else ""))
    return found


#: ``_records`` of an image's layer (never the container's own, the first root), read once per
#: process: an image layer never changes, and every image built on it reads the same (the
#: demo's environment, torch's 20,000-row ``RECORD`` among it, under each hostile image).
_layer_records = functools.lru_cache(maxsize=64)(_records)
