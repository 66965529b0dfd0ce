"""Files copied out of a container or an image through the engine's archive API.

Exact bytes, streamed, and nothing of the image executed to read them: what
the Docker target and the integrity and asset readers use.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
from collections.abc import Iterable
from typing import Any

from pytest_reb.targets.base import labels
from pytest_reb.targets.errors import TargetError


class _ChunkReader(io.RawIOBase):
    """A file over an iterator of byte chunks, for ``tarfile``'s streaming mode."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while not self._rest:
            self._rest = next(self._chunks, b"")
            if not self._rest:
                return 0
        n = min(len(buf), len(self._rest))
        buf[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n


def archive_file(container: Any, path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of a regular file, copied out through the Docker API.

    Exact bytes (no decoding), streamed: a 100 MB file costs ``limit`` bytes
    of memory, and nothing in the container is executed to read it.
    """
    from docker.errors import DockerException

    try:
        stream, _ = container.get_archive(path)
        with tarfile.open(fileobj=_ChunkReader(stream), mode="r|") as tar:
            member = tar.next()
            if member is None or not member.isfile():
                return None
            fh = tar.extractfile(member)
            return fh.read(limit) if fh else None
    except (DockerException, tarfile.TarError, OSError):
        return None


def image_file(client: Any, image: str, path: str, limit: int = 1 << 16) -> bytes | None:
    """A small file from an image, through a created-but-never-started container."""
    from docker.errors import DockerException

    ctr = None
    try:
        ctr = client.containers.create(image, entrypoint=["true"], network_mode="none",
                                       labels=labels("peek"))
        return archive_file(ctr, path, limit)
    except DockerException:
        return None
    finally:
        if ctr is not None:
            with contextlib.suppress(Exception):
                ctr.remove(force=True, v=True)  # and the image's VOLUMEs' anonymous volumes


def image_tar(client: Any, image: str, run_id: str, path: str) -> io.BytesIO:
    """``path`` of ``image`` (a file or a folder) as a tar archive in memory, through a
    created, never started container and the engine's archive API (its anonymous volumes go
    with it); ``TargetError`` when the engine cannot give it."""
    from docker.errors import DockerException

    ctr = None
    try:
        ctr = client.containers.create(image, entrypoint=["true"], network_mode="none",
                                       labels=labels(run_id, **{"reb.profile": "assets"}))
        stream, _ = ctr.get_archive(path)
        return io.BytesIO(b"".join(stream))
    except DockerException as exc:
        raise TargetError(str(exc)[:200]) from None
    finally:
        if ctr is not None:
            with contextlib.suppress(Exception):
                ctr.remove(force=True, v=True)
