"""Derived test images: built from an in-memory context, tagged by content, reused (not collected).

``tests/support/breakage.py`` (images in which a root-cause fault really happens) and
``tests/support/images.py`` (images holding what a hostile agent leaves) both put
a few files on top of the demo image.  Each names its image
``<repository>:<hash of its recipe>``; this module makes that tag exist: under a
host-wide lock per repository (xdist workers build it once) it reuses the image
when present, otherwise builds it without network or pull from the files given,
and then drops the tags of the repository's earlier recipes.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock

#: The files of a build context by path, or a callable making them only when a build is due.
Files = Mapping[str, bytes] | Callable[[], Mapping[str, bytes]]


def ensure_image(client: Any, tag: str, files: Files, *, locks: Path,
                 labels: Mapping[str, str] | None = None) -> str:
    """Return ``tag``, building it from ``files`` (a ``Dockerfile`` among them) when missing."""
    from docker.errors import BuildError, ImageNotFound

    repository = tag.partition(":")[0]
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(locks / f"{repository}.lock"):
        try:
            client.images.get(tag)
            return tag
        except ImageNotFound:
            pass
        context = files() if callable(files) else files
        try:
            client.images.build(fileobj=build_context(context), custom_context=True, tag=tag,
                                rm=True, forcerm=True, pull=False, network_mode="none",
                                labels=dict(labels) if labels else None)
        except BuildError as exc:
            log = " | ".join(str(c.get("stream", c.get("error", ""))).strip()
                             for c in exc.build_log if c)[-1500:]
            raise RuntimeError(f"building {tag} failed: {exc.msg}: {log}") from None
        remove_superseded(client, tag)
    return tag


def build_context(files: Mapping[str, bytes]) -> io.BytesIO:
    """An uncompressed tar of ``files``, sorted, with fixed modes and times."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def remove_superseded(client: Any, tag: str) -> None:
    """Drop the repository's images of earlier recipes (one in use by a container stays)."""
    from docker.errors import APIError

    repository = tag.partition(":")[0]
    for image in client.images.list(name=repository):
        for old in image.tags:
            if old != tag and old.startswith(repository + ":"):
                with contextlib.suppress(APIError):
                    client.images.remove(old)
