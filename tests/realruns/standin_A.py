"""Stand-ins for the batch-A rows of ``table.py``: hub assets their C1 stages read.

The hub is not reachable here, so a C1 stage that loads a model or data set
by hub id gets a stand-in instead: the repository's own model class with
random weights (or a tiny synthetic file in the format the code reads),
made in a container of the row's image with the network off, and put in the
asset cache with ``AssetCache.ingest(..., origin="stand-in: ...")`` so every
outcome that uses it says what it is.  ``build.py`` calls each function as
``standin_A:function`` with the image's tag and the asset cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import standin

#: The venv every ``build.py`` image has (``build.VENV``; not imported: build imports us).
PYTHON = "/opt/envs/research/bin/python"
REPO_DIR = "/data/project/repo"


def in_image(image: str) -> list[str]:
    """A ``docker run`` prefix for the image's venv python, network off, ``{scratch}`` at /out."""
    return ["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
            "-v", "{scratch}:/out", "--entrypoint", PYTHON, image]


def dav2_model(image: str, cache: Path) -> None:
    """Depth-Anything-V2's metric checkpoint (``DepthAnythingV2(vits, max_depth=20)``), made
    by the repository's class under the image's venv (``standin.dav2_model``)."""
    standin.dav2_model(in_image(image), REPO_DIR, cache)


#: How many samples each synthetic MNIST split holds (the C1 stage trains one step of batch 1).
MNIST_SAMPLES = {"train": 16, "t10k": 8}
MNIST_ORIGIN = ("stand-in: synthetic MNIST idx files (random 28x28 uint8 images, labels 0-9; "
                "16 train, 8 test) in the format torchvision.datasets.MNIST reads (the CVDF "
                "mirror is not reachable here)")


def idx_file(data: bytes, dims: tuple[int, ...]) -> bytes:
    """An idx (SN3 PascalVincent) file of unsigned bytes: magic 0x08 with the rank, then dims."""
    header = bytes([0, 0, 0x08, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims)
    return header + data


def auto1111_mnist(image: str, cache: Path) -> None:
    """Auto1111SDK's MNIST, as the cache stores it (unpacked idx files), synthetic; ``image``
    is not needed: the files are data, written here."""
    import random
    import tempfile

    from pytest_reb.assets.cache import AssetCache

    rng = random.Random(0)
    repo = standin.load_repo(standin.ROOT / "repos" / "test_Auto1111SDK__Auto1111SDK.py")
    with tempfile.TemporaryDirectory() as scratch:
        raw = Path(scratch) / "raw"
        raw.mkdir()
        for split, n in MNIST_SAMPLES.items():
            pixels = bytes(rng.randrange(256) for _ in range(n * 28 * 28))
            labels = bytes(i % 10 for i in range(n))
            (raw / f"{split}-images-idx3-ubyte").write_bytes(idx_file(pixels, (n, 28, 28)))
            (raw / f"{split}-labels-idx1-ubyte").write_bytes(idx_file(labels, (n,)))
        AssetCache(cache).ingest(repo, "mnist", raw, origin=MNIST_ORIGIN)
