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
#: The CUDA torch with the newest torchaudio on PyPI (2.11.1: its wheel requires ``torch>=2.11``
#: and has no CPython tag, ``py3-none``; no torchaudio 2.14 exists), for repositories that
#: import torchaudio (added by batch A; not yet built, so not yet seen to load beside 2.14.1).
TORCH_AUDIO = ("torch==2.14.1", "torchaudio==2.11.1")
#: pip's option for a pure-Python package published only as an sdist (no wheel of the pinned
#: version): it is downloaded as the sdist and built in the image by pip, with ``setuptools``
#: from the wheelhouse, as an agent's own ``pip install`` would.
def sdists(*names: str) -> tuple[str, ...]:
    """The ``--no-binary`` option for ``names``, and setuptools to build them offline."""
    return (f"--no-binary={','.join(names)}", "setuptools")


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
    RealEnv(
        repo="DepthAnything/Depth-Anything-V2",
        commit="e5a2732d3ea2cddc081d7bfd708fc0bf09f812f1",
        env="depth_anything_v2",
        packages=(*TORCH_VISION, "opencv-python-headless", "matplotlib"),
        source="requirements.txt and metric_depth/requirements.txt: torch, torchvision, "
               "opencv-python (its headless build: no display here), matplotlib",
        standin="standin_A:dav2_model",
        left_out={"gradio==4.29.0, gradio_imageslider": "the web demo app.py only",
                  "open3d": "metric_depth/depth_to_pointcloud.py only (a large binary wheel; "
                            "the C1 stage runs metric_depth/run.py)"},
    ),
    RealEnv(
        repo="NVIDIA/kvpress",
        commit="ef2a1ca5f81bec64a382e5bb66d5a77d4af853f2",
        env="kvpress",
        standin="standin_A:kvpress_assets",
        packages=(TORCH_CPU, "numpy>=2.0.0,<3", "transformers>=4.56,<5",
                  "sentencepiece>=0.2.0,<0.3", "protobuf>=5.27.2,<6", "datasets>=2.21.0,<3",
                  "pandas>=2.2.2,<3",
                  "accelerate>=1.0.0,<2", "requests>=2.32.3,<3", "cachetools>=5.5.2,<6",
                  "fire>=0.6.0,<0.7", "rouge>=1.0.1,<2", "nltk>=3.9.1,<4", "tqdm>=4.66.4,<5",
                  "scipy>=1.13.1,<2", "bert-score>=0.3.13,<0.4", "hatchling",
                  *sdists("fire")),
        install_repo=True,
        source="pyproject.toml: dependencies (torch>=2.3.1,<3 pinned to the CPU 2.13.0; "
               "transformers>=4.56 held below 5, the major release of the commit's date: with "
               "5.24 the press hook's kwargs['past_key_values'] raised KeyError) and the "
               "[eval] extra, which evaluation/evaluate.py imports; fire 0.6 has no wheel and is "
               "built from its sdist; hatchling, its build backend, to install the checkout",
        left_out={"flash-attn": "the optional [flash-attn] extra: a CUDA build",
                  "pytest and the dev group": "tests/ and the notebooks only",
                  "jieba, fuzzywuzzy": "imported by benchmark scorers the C1 dataset (loogle) "
                                       "does not use"},
    ),
    RealEnv(
        repo="GeeeekExplorer/nano-vllm",
        commit="2f214426530e2841e7d24c73ee0dfa914d62df56",
        env="nanovllm",
        packages=(TORCH_CPU, "triton>=3.0.0", "transformers>=4.51.0", "xxhash"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch>=2.4.0 pinned to the CPU 2.13.0); the "
               "package nano-vllm installed from the checkout",
        left_out={"flash-attn": "a CUDA build compiled against the installed torch (no CPU "
                                "build; nanovllm/layers/attention.py imports it)"},
    ),
    RealEnv(
        repo="HaozheLiu-ST/T-GATE",
        commit="ab2a88fa50319cbb0bfcdc2772405573b266fa13",
        env="tgate",
        packages=(TORCH_CPU, "diffusers>=0.29.0", "DeepCache==0.1.1", "transformers",
                  "accelerate", "sentencepiece"),
        source="README's requirements (no dependency file): pytorch>=2.0.0 (the CPU 2.13.0), "
               "diffusers>=0.29.0, DeepCache==0.1.1, transformers, accelerate; sentencepiece, "
               "which PixArt's T5 tokenizer loads with",
        left_out={"torch_xla": "TPU only, imported under diffusers' is_torch_xla_available"},
    ),
    RealEnv(
        repo="FunAudioLLM/SenseVoice",
        commit="1a90d46cb933ef9e213b7d90292b9301b3e20f40",
        env="sensevoice",
        packages=(*TORCH_AUDIO, "modelscope", "huggingface", "huggingface_hub", "funasr>=1.1.3",
                  "numpy<=1.26.4", "gradio", "fastapi>=0.111.1", "uvicorn",
                  *sdists("antlr4-python3-runtime")),
        source="requirements.txt: torch<=2.3 (the CUDA 2.14.1 with torchaudio 2.11.1: no "
               "torchaudio release pairs with torch<=2.3 and the shared pins), torchaudio, "
               "modelscope, huggingface, huggingface_hub, funasr>=1.1.3, numpy<=1.26.4, gradio, "
               "fastapi>=0.111.1; uvicorn, which api.py runs; hydra-core's antlr4 runtime 4.9 "
               "has no wheel and is built from its sdist",
        left_out={"onnxruntime, onnx, funasr_onnx, funasr_torch, kaldi_native_fbank":
                  "the ONNX/libtorch export and demo scripts (export.py, demo_onnx.py, "
                  "demo_libtorch.py), not in requirements.txt",
                  "ffmpeg, libsndfile": "system packages of the repository's Dockerfile "
                                        "(audio decoding for the web demo)"},
    ),
    RealEnv(
        repo="Auto1111SDK/Auto1111SDK",
        commit="4f3cd1504d0afa344fd322df0c4ac3e9eec7a129",
        env="auto1111sdk",
        standin="standin_A:auto1111_mnist",
        packages=(*TORCH_VISION, "GitPython==3.1.32", "Pillow==9.5.0", "accelerate==0.21.0",
                  "blendmodes==2022", "clean-fid==0.1.35", "einops==0.4.1", "fastapi==0.94.0",
                  "gradio==3.41.2", "httpcore==0.15", "inflection==0.5.1", "jsonmerge==1.8.0",
                  "kornia==0.6.7", "lark==1.1.2", "numpy==1.23.5", "omegaconf==2.2.3",
                  "open-clip-torch==2.20.0", "piexif==1.1.3", "psutil==5.9.5",
                  "pytorch_lightning==1.9.4", "resize-right==0.0.2", "safetensors==0.3.1",
                  "scikit-image==0.21.0", "timm==0.9.2", "tomesd==0.1.3", "torchdiffeq==0.2.3",
                  "torchsde==0.2.6", "transformers==4.30.2", "httpx==0.24.1",
                  *sdists("jsonmerge", "antlr4-python3-runtime"), "setuptools<70"),
        source="setup.py install_requires (= requirements.txt), every pin kept but torch==2.1.0 "
               "(the shared CUDA 2.14.1 with torchvision 0.29.1: the sgm toy trainer reads MNIST "
               "through torchvision); jsonmerge 1.8.0 and omegaconf's antlr4 runtime 4.9 have no "
               "wheel and are built from their sdists; setuptools held below 70, whose "
               "pkg_resources lightning_fabric 1.9.4 imports (the newest setuptools has none)",
        left_out={"basicsr==1.4.2, gfpgan==1.3.8, realesrgan==0.3.0": "sdist only, and "
                  "basicsr's setup.py imports torch to build (it cannot build in pip's isolated "
                  "build); face restoration and upscaling only, not the sgm trainer",
                  "clip": "the name is OpenAI's CLIP, installed from its git repository; the "
                          "PyPI project of that name is an unrelated package"},
    ),

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
