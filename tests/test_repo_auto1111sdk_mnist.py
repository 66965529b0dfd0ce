"""Auto1111SDK's MNIST asset: the cache holds the idx files unpacked, as torchvision reads them.

The C1-C4 stages train the sgm toy config, whose ``MNISTLoader`` builds
``torchvision.datasets.MNIST(root=".data/", download=True)`` in the prepared
dataset folder.  Finding only the four ``.gz`` files there, torchvision checks
their checksums and gunzips each next to itself; the official prepare's folder
is writable, pytest-reb's asset view is mounted read-only, so the stage failed
with a read-only file system before any training.  The module now declares the
asset ``extract=True`` and the fetcher unpacks a lone ``.gz``: the view holds
``train-images-idx3-ubyte`` and the rest, which MNIST loads without writing.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import pytest
from support.repomodules import module

from pytest_reb.assets import fetchers
from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.fetchers import AssetError

MNIST = module("test_Auto1111SDK__Auto1111SDK").repo
RAW = "dataset/mnist/.data/MNIST/raw"


def test_mnist_is_stored_unpacked(tmp_path: Path, served: tuple[str, Path]) -> None:
    base, www = served
    asset = next(a for a in MNIST.assets if a.name == "mnist")
    contents = {}
    for name in asset.files:
        contents[name[:-3]] = f"idx bytes of {name}".encode()
        (www / name).write_bytes(gzip.compress(contents[name[:-3]]))
    local = dataclasses.replace(MNIST, assets=[dataclasses.replace(asset, url=f"{base}/")])
    cache = AssetCache(tmp_path / "cache")
    [result] = cache.prepare(local, network=True, only=[local.assets[0]])
    assert result.status == "ready", result.detail
    raw = cache.view(local) / RAW
    assert sorted(p.name for p in raw.iterdir()) == sorted(contents)
    for name, data in contents.items():
        assert (raw / name).read_bytes() == data


def test_a_broken_gz_is_a_clear_error(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(b"x" * 100)[:20])
    with pytest.raises(AssetError, match="not a whole gzip file"):
        fetchers._extract_all(staging, "raw")
