"""What an image's content alone decides, kept on the host by the image's id.

An image is immutable and its id is the digest of its content, so a reading
that depends on nothing else (the prefix's size, the checkout's commit, the
checkout against its pinned tree before any command ran) is the same in every
container made from it.  Each such reading is made once per image and kept
under ``$XDG_CACHE_HOME/pytest-reb/<kind>/`` (``~/.cache`` by default): on the
host, where nothing the image runs can write.  The key holds the image id, the
reading's own parameters and a digest of the code that makes it, so a change
of that code is a new reading.  Only a complete reading is stored (the caller
says which); anything unreadable is read again next time.  Targets without an
image (``local://``, ``ssh://``) are read every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def code_digest(*files: Path) -> str:
    """The digest of the files whose code makes a reading (a changed probe: a new reading)."""
    h = hashlib.sha256()
    for f in files:
        with contextlib.suppress(OSError):
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def image_id(target: Any) -> str | None:
    """The target's image id, or None for a target that has no image."""
    found = getattr(target, "image_id", None)
    return found if isinstance(found, str) and found else None


def folder(kind: str, *parts: str) -> Path:
    """Where readings of ``kind`` are kept, or the one named by ``parts`` (hashed) under it."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"))
    where = base / "pytest-reb" / kind
    return where / hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32] if parts else where


def _file(kind: str, image: str, parts: Iterable[str]) -> Path:
    at = folder(kind, image, *parts)
    return at.with_name(f"{at.name}.json")


def load(kind: str, image: str | None, parts: Iterable[str]) -> Any | None:
    """The kept reading, or None (no image, none kept, or a file that does not parse)."""
    if image is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        return json.loads(_file(kind, image, parts).read_text())
    return None


def store(kind: str, image: str | None, parts: Iterable[str], value: Any) -> None:
    """Keep ``value`` (JSON) for the image; atomic, so parallel workers read a whole file."""
    if image is None:
        return
    path = _file(kind, image, parts)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as tmp:
            json.dump(value, tmp)
        os.replace(tmp.name, path)
