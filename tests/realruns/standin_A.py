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
