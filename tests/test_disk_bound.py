"""The disk bound's reading (``diskuse.Bound``): the filesystems' used bytes against an anchor.

On ``/dev/shm`` (a filesystem of its own, which few jobs of this machine write): the sum of
the anchored figure and what the filesystem gained since says when an exact look is due.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_reb.targets import diskuse

SHM = Path("/dev/shm")


@pytest.fixture
def folder() -> Iterator[Path]:
    if not SHM.is_dir():
        pytest.skip("no /dev/shm here")
    path = SHM / f"reb-bound-{os.getpid()}"
    path.mkdir()
    try:
        yield path
    finally:
        for f in path.iterdir():
            f.unlink()
        path.rmdir()


def test_growth_past_the_limit_calls_for_an_exact_look(folder: Path) -> None:
    bound = diskuse.Bound(16 << 20, [str(folder)])
    bound.anchor(8 << 20)  # 8 MiB held, 16 allowed
    assert not bound.suspect()
    (folder / "grown").write_bytes(b"x" * (32 << 20))
    assert bound.suspect()  # 8 + 32 > 16: only an exact look can say
    bound.anchor(8 << 20)  # that look found the growth was another's
    assert not bound.suspect()


def test_each_filesystem_counts_once_and_none_readable_is_no_reading(folder: Path) -> None:
    once = diskuse.fs_used([str(folder)])
    assert once is not None and diskuse.fs_used([str(folder), str(SHM)]) == once
    assert diskuse.fs_used(["/nonexistent/reb"]) is None
    blind = diskuse.Bound(1, ["/nonexistent/reb"])
    blind.anchor(10)
    assert not blind.suspect()  # the periodic walk alone bounds it then


def test_the_layer_and_volumes_are_where_the_container_writes() -> None:
    attrs = {"GraphDriver": {"Data": {"UpperDir": "/var/lib/docker/overlay2/x/diff"}},
             "Mounts": [{"Type": "volume", "Source": "/var/lib/docker/volumes/v/_data"},
                        {"Type": "bind", "Source": "/host/tools"}]}
    assert diskuse.holding_paths(attrs, "/var/lib/docker") == [
        "/var/lib/docker/overlay2/x/diff", "/var/lib/docker/volumes/v/_data"]
    assert diskuse.holding_paths({}, "/var/lib/docker") == ["/var/lib/docker"]
