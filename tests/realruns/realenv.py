"""What a row of the real runs' table is (``RealEnv``), and the pins the rows share.

Torch is pinned everywhere, never left open: an open ``torch`` pulls a CUDA
build of several GB.  ``2.13.0`` is the CPU build on this machine's disk; a
repository that needs torchvision gets ``2.14.1`` and ``0.29.1`` (the pair that
loads together; PyPI's torchvision does not load beside the CPU-only torch,
docs/real-runs.md).  The rows themselves are in ``table.py``'s modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The CPU build of torch on this machine's disk.
TORCH_CPU = "torch==2.13.0"
#: The CUDA pair from this machine's disk, for repositories that import torchvision.
TORCH_VISION = ("torch==2.14.1", "torchvision==0.29.1")
#: Batch B: PyPI's newest torchaudio, 2.11.1, requires torch>=2.11 (no exact pin, unlike the
#: releases before it) and ships no compiled extension, so it goes with the shared CUDA 2.14.1
#: pair; one base for every row that imports torchaudio.
TORCH_AUDIO = (*TORCH_VISION, "torchaudio==2.11.1")
#: Batch E: FFmpeg 5.1's shared libraries (bookworm), which torchcodec's
#: ``libtorchcodec_core5.so`` links; torchaudio 2.9+ (``TORCH_AUDIO``'s 2.11.1) loads and saves
#: audio only through torchcodec, so ``torchaudio.load`` needs them.
FFMPEG_LIBS = ("libavutil57", "libavcodec59", "libavformat59", "libavdevice59", "libavfilter8",
               "libswscale6", "libswresample4")


@dataclass(frozen=True)
class RealEnv:
    """One repository's environment: its venv's packages, and whether the checkout is installed."""

    repo: str
    commit: str
    #: the venv's name under /opt/envs (the report's env_name)
    env: str
    packages: tuple[str, ...]
    #: ``pip install --no-deps`` of the checkout itself (a copy, so the checkout stays clean)
    install_repo: bool = False
    #: where the package list came from, in a sentence (goes into the report's notes)
    source: str = ""
    #: packages the repository names that were not installed, each with its reason
    left_out: dict[str, str] = field(default_factory=dict)
    #: pure-Python packages PyPI has as source only, built into wheels on the host first
    sdists: tuple[str, ...] = ()
    #: the function that puts a stand-in of a hub asset into the asset cache: a name in
    #: ``standin.py``, or ``module:function`` of another module in this folder
    standin: str | None = None
    #: shell steps run in the image after the installs and the checkout's copy (bash, the
    #: network off; ``$VENV`` is the venv, ``$REPO`` the checkout), each said in ``source``
    after: tuple[str, ...] = ()
    #: Debian packages (bookworm, the base's suite) the official base image has and the
    #: project's base lacks (official-harness.md, section 11.2: libgl1 and its neighbours),
    #: fetched on the host with ``apt-get download`` and installed in the image with dpkg
    debs: tuple[str, ...] = ()

    #: Debian packages (the image's bookworm) installed with apt-get before the venv's packages,
    #: as an agent does for a system library the repository needs (FFmpeg's shared libraries for
    #: torchcodec, which torchaudio 2.9+ loads audio with); the one build step with the network
    #: on, in a container of its own, said in ``source``
    debian: tuple[str, ...] = ()
