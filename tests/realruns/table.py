"""The honest environments of the real runs: one row per repository, read by ``build.py``.

Each row is what a careful agent would install from the repository's own
install instructions and requirement files at the pinned commit, with
packages from PyPI only (downloaded on the host into one wheelhouse; the image
is built with its network off).  What the row leaves out is said in ``left_out``
with the reason, so the C0 figure it gets can be read against it.

Torch is pinned everywhere, never left open: an open ``torch`` pulls a CUDA
build of several GB.  ``2.13.0`` is the CPU build on this machine's disk; a
repository that needs torchvision gets ``2.14.1`` and ``0.29.1`` (the pair that
loads together; PyPI's torchvision does not load beside the CPU-only torch,
docs/real-runs.md).  The pins below are facts about the pinned trees, read
from them; nothing here is collected by pytest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: The CPU build of torch on this machine's disk.
TORCH_CPU = "torch==2.13.0"
#: The CUDA pair from this machine's disk, for repositories that import torchvision.
TORCH_VISION = ("torch==2.14.1", "torchvision==0.29.1")


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
    #: the function that puts a stand-in of a hub asset into the asset cache: a name in
    #: ``standin.py``, or ``module:function`` of another module in this folder
    standin: str | None = None


ENVIRONMENTS: tuple[RealEnv, ...] = (
    RealEnv(
        repo="feifeibear/long-context-attention",
        commit="a52d85007ced2065dd71c498be65a02d62b51cac",
        env="yunchang",
        packages=(TORCH_CPU, "numpy", "einops", "triton"),
        install_repo=True,
        source="pyproject.toml: dependencies torch>=2.3.0; einops and triton, which yunchang "
               "imports, from its code; the package yunchang installed from the checkout",
        left_out={"flash-attn, flash_attn_interface": "the optional [flash] extra: a CUDA "
                  "build compiled against the installed torch; the probe runs --attn_type torch",
                  "flashinfer, sageattention, spas_sage_attn, aiter": "optional attention "
                  "kernels for CUDA/ROCm, each imported under try",
                  "torch_npu, torch_musa": "vendor builds of torch for Ascend and Moore "
                  "Threads devices"},
    ),
    RealEnv(
        repo="KRLabsOrg/LettuceDetect",
        commit="b302fdb8568f257615d1c4a9d2d2ee69e11c5b72",
        env="lettucedetect",
        packages=(TORCH_CPU, "transformers>=4.48.3", "tqdm>=4.65.0", "scikit-learn>=1.6.1",
                  "numpy>=2.2.2", "openai>=1.66.3", "rag-fact-checker"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch>=2.6.0 pinned to the CPU 2.13.0); the "
               "package installed from the checkout",
        left_out={"fastapi, pydantic-settings, httpx": "the optional [api] extra (the REST "
                                                        "service, not the detector)",
                  "pytest, ruff": "the [dev] extra"},
    ),
    RealEnv(
        repo="LiheYoung/Depth-Anything",
        commit="1d03336771fe09c5398ffdd211441e33941a97dc",
        env="depth_anything",
        packages=(*TORCH_VISION, "opencv-python-headless", "huggingface_hub", "tqdm",
                  "safetensors"),
        source="requirements.txt: torch, torchvision, opencv-python, huggingface_hub (opencv "
               "as its headless build: no display here); tqdm, which run.py imports; "
               "safetensors, which from_pretrained of huggingface_hub's mixin loads with",
        standin="da1_model",
        left_out={"gradio==4.14.0, gradio_imageslider": "the web demo app.py only"},
    ),

    # ---------------------------------------------------------------------------------------
    # batch A: rows added by the batch-A run (keep each batch's rows under its own heading)
    # ---------------------------------------------------------------------------------------

    # ---------------------------------------------------------------------------------------
    # batch B: rows added by the batch-B run (keep each batch's rows under its own heading)
    # ---------------------------------------------------------------------------------------

    # ---------------------------------------------------------------------------------------
    # batch C: rows added by the batch-C run (keep each batch's rows under its own heading)
    # ---------------------------------------------------------------------------------------

    # ---------------------------------------------------------------------------------------
    # batch D: rows added by the batch-D run (keep each batch's rows under its own heading)
    # ---------------------------------------------------------------------------------------
)


def find(repo: str) -> RealEnv:
    """The row of ``repo`` (owner/name)."""
    for row in ENVIRONMENTS:
        if row.repo == repo:
            return row
    raise KeyError(f"no real-run environment for {repo}; rows: "
                   + ", ".join(r.repo for r in ENVIRONMENTS))
