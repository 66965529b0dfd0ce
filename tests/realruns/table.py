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
    #: pure-Python packages PyPI has as source only, built into wheels on the host first
    sdists: tuple[str, ...] = ()
    #: the function that puts a stand-in of a hub asset into the asset cache: a name in
    #: ``standin.py``, or ``module:function`` of another module in this folder
    standin: str | None = None
    #: shell steps run in the image after the installs and the checkout's copy (bash, the
    #: network off; ``$VENV`` is the venv, ``$REPO`` the checkout), each said in ``source``
    after: tuple[str, ...] = ()


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
    RealEnv(
        repo="flagos-ai/FlagGems",
        commit="c5af8839c871a7f626d693476ba7f18d30ba04a4",
        env="flag_gems",
        packages=(TORCH_CPU, "triton", "packaging", "pybind11", "PyYAML", "sqlalchemy",
                  "pytest>=7.1.0", "numpy>=1.26", "scipy>=1.14", "transformers>=4.40.2"),
        source="pyproject.toml: dependencies (torch>=2.2.0 pinned to the CPU 2.13.0), the "
               "[test] and [example] extras; triton, which every operator imports (the CPU "
               "torch wheel does not depend on it)",
        left_out={"flagtree==0.3.0rc1+3.3": "flag_tree_requirements/requirements_nvidia.txt: "
                  "a private index; the docs say native Triton may be used instead",
                  "the checkout as a package": "pip install . needs scikit-build-core, CMake "
                  "and a C++ toolchain; the stages put {repo}/src on PYTHONPATH instead"},
    ),
    RealEnv(
        repo="kotaro-kinoshita/yomitoku",
        commit="f68b55702cf5712524ff4a7b4665ebde622132ca",
        env="yomitoku",
        standin="standin_C:yomitoku_models",
        packages=(*TORCH_VISION, "huggingface-hub>=0.26.1", "lxml>=5.3.0", "omegaconf>=2.3.0",
                  "opencv-python-headless>=4.10.0.84", "pyclipper>=1.3.0.post6",
                  "pydantic>=2.9.2", "shapely>=2.0.6", "timm>=1.0.11", "pypdfium2==4.30.0",
                  "onnx>=1.17.0", "onnxruntime>=1.20.1", "reportlab>=4.4.1", "jaconv>=0.4.0",
                  "onnxscript>=0.5.4"),
        source="pyproject.toml: dependencies (torch>=2.6.0, torchvision>=0.21.0 as the shared "
               "CUDA pair; opencv-python as its headless build: no display or libGL here); the "
               "README's pip install yomitoku as 0.10.2, the last release before the pinned "
               "commit, with --no-deps (yomitoku/__init__.py reads its version from the "
               "installed metadata; the checkout's hatch build needs git for "
               "uv-dynamic-versioning, which the image has not; the release's own dependencies "
               "would add opencv-python, whose cv2 needs libxcb); the stages put {repo}/src on "
               "PYTHONPATH, so the checkout's code runs",
        sdists=("yomitoku==0.10.2",),  # its wheel, fetched by pip wheel --no-deps
        after=("$VENV/bin/pip install --no-index --find-links /mnt/wheels --no-deps "
               "--no-cache-dir --quiet yomitoku==0.10.2",),
        left_out={"mcp[cli]": "the optional [mcp] extra (the MCP server, not the OCR CLI)",
                  "pytest, ruff, mkdocs*": "uv dev-dependencies (tests, lint, docs)"},
    ),
    RealEnv(
        repo="lightly-ai/lightly-train",
        commit="9716e64a7043c1a4857ece3b3436d831e9d97722",
        env="lightly_train",
        standin="standin_C:lightly_train_assets",
        sdists=("antlr4-python3-runtime==4.9.3",),  # lightly -> hydra-core
        packages=(*TORCH_VISION, "albumentations>=1.3.1,!=1.4.5,!=1.4.9,!=1.4.16,!=1.4.17,"
                  "!=1.4.18,!=1.4.19,!=1.4.20,!=1.4.21,!=1.4.22,!=1.4.23",
                  "eval-type-backport>=0.2", "filelock>=3.0.0", "fsspec>=2023.1.0",
                  "lightly>=1.5.20", "omegaconf>=2.3", "psutil>=5.0", "pyarrow>=15.0.0",
                  "pytorch_lightning>=2.1", "tensorboard>=2.10.0", "torchmetrics[detection]>=0.8",
                  "transformers>=4.46", "tqdm>=4.0.0", "setuptools-scm"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch>=2.1.0, torchvision>=0.16.0 as the shared "
               "CUDA pair); the package lightly_train installed from the checkout (its "
               "lightly-train console script, which the official probe prefers), setuptools-scm "
               "for its build",
        left_out={"the [dev] extra": "lint, type checks, tests and docs",
                  "rfdetr, super-gradients, ultralytics, timm, wandb, mlflow, xformers, onnx, "
                  "onnxruntime, onnxslim, pydicom, notebook": "optional extras for other model "
                  "families, loggers and exporters; the probe pretrains a DINOv3 ViT-T with "
                  "SimCLR, which needs none of them"},
    ),
    RealEnv(
        repo="hustvl/Vim",
        commit="dd0358ad1e42701f22afbefa0717cc8825cf9f45",
        env="vim",
        sdists=("antlr4-python3-runtime==4.9.3", "fvcore==0.1.5.post20221221"),
        packages=(*TORCH_VISION, "numpy<2", "iopath==0.1.9", "cloudpickle==2.2.1",
                  "omegaconf==2.3.0", "Pillow", "requests", "sympy", "pycocotools", "Shapely",
                  "fvcore", "hydra-core", "tabulate", "termcolor", "yacs", "matplotlib",
                  "timm", "einops", "transformers", "tensorboard", "scipy"),
        source="det/README.md (VimDet, for Python 3.9: numpy 1.23.4, here numpy<2; iopath "
               "0.1.9, cloudpickle 2.2.1, omegaconf 2.3.0, Pillow, requests, sympy, pycocotools, "
               "Shapely; detectron2's own needs "
               "from det/setup.py: fvcore, hydra-core, tabulate, termcolor, yacs, matplotlib) and "
               "the vim/ code's imports (timm, einops, transformers, tensorboard, scipy), torch "
               "2.1.1+cu118 replaced by the shared CUDA pair; the stages put {repo}/det on "
               "PYTHONPATH (detectron2 not built)",
        left_out={"mamba_ssm, causal_conv1d (the vendored mamba-1p1p1/ and causal-conv1d/)":
                  "CUDA extensions compiled with nvcc against the installed torch; no toolchain "
                  "or GPU here. The vendored detectron2 imports the Vim backbone "
                  "(det/detectron2/modeling/backbone/vim.py: models_mamba, which imports "
                  "mamba_ssm) at import detectron2.modeling, so C1 cannot run without it",
                  "detectron2's _C extension": "pip install -e det compiles C++; the base has no "
                  "C++ toolchain, and Faster R-CNN on CPU needs none of its ops",
                  "mmcv==1.3.8, mmsegmentation==0.14.1": "seg/ only; mmcv 1.x compiles its ops "
                  "against torch, no wheel for torch 2.14 or Python 3.11",
                  "apex, colossalai, fla, causal_conv1d (det-requirements.txt)": "local paths and "
                  "git URLs of the authors' machine",
                  "the rest of vim/vim_requirements.txt's exact pins": "a Python 3.10 / torch "
                  "2.1.1 freeze (triton 2.1.0, timm 0.4.12, which imports torch._six, gone in "
                  "torch 2); the packages the code imports are installed unpinned"},
    ),
    RealEnv(
        repo="hpcaitech/Open-Sora",
        commit="d0cd5ac50da79e9a9d2285a952d4dcd806e6c8fc",
        env="opensora",
        packages=(*TORCH_VISION, "mmengine>=0.10.3", "ftfy>=6.2.0", "accelerate>=0.29.2",
                  "av==13.1.0", "liger-kernel==0.5.2", "pandas>=2.0.3", "openai>=1.52.2",
                  "wandb>=0.17.0", "tensorboard>=2.14.0", "pre-commit>=3.5.0",
                  "omegaconf>=2.3.0", "pyarrow", "transformers", "safetensors", "einops"),
        install_repo=True,
        source="requirements.txt (torch==2.4.0/torchvision==0.19.0 replaced by the shared CUDA "
               "pair: the README asks for torch >= 2.4.0), through setup.py's install_requires; "
               "transformers, safetensors and einops, which opensora imports; the package "
               "opensora installed from the checkout",
        left_out={"colossalai>=0.4.4": "published as a source distribution only; the builder "
                  "installs wheels (no C++ toolchain in the base)",
                  "pandarallel>=1.6.5": "published as a source distribution only",
                  "xformers==0.0.27.post2, flash-attn": "CUDA builds from PyTorch's index / "
                  "compiled against torch (README)"},
    ),
    RealEnv(
        repo="kyegomez/MultiModalMamba",
        commit="58db40bcbd2e957c7981b6eed6de165b6a5ccd42",
        env="mm_mamba",
        packages=(*TORCH_VISION, "zetascale", "einops", "matplotlib", "datasets",
                  "huggingface-hub<1.0"),
        source="requirements.txt and pyproject.toml (torch==2.1.2 and zetascale==1.4.0 "
               "loosened: zetascale 1.4.0 pins torch 2.1.2, TensorFlow, JAX and skypilot; its "
               "current release, which needs torchvision, still exports every name mm_mamba "
               "imports); einops; what import zeta needs and zetascale does not declare "
               "(matplotlib, datasets; huggingface-hub<1.0 for its transformers<5)",
        left_out={"swarms==4.1.1": "only scripts/auto_tests_docs (LLM doc writers) import it; "
                  "an agents framework with its own large pinned tree",
                  "python-dotenv, toml": "scripts/ only"},
    ),
    RealEnv(
        repo="kyegomez/VisionMamba",
        commit="c88e09a52240910e08c4af754d340ad946112487",
        env="vision_mamba",
        packages=(*TORCH_VISION, "zetascale", "einops", "matplotlib", "datasets",
                  "huggingface-hub<1.0"),
        source="pyproject.toml and requirements.txt: torch, zetascale (which needs "
               "torchvision: the shared CUDA pair), einops; what import zeta needs and "
               "zetascale does not declare (matplotlib, datasets; huggingface-hub<1.0 for its "
               "transformers<5)",
        left_out={"swarms": "requirements.txt names it but no file imports it (an agents "
                  "framework with a large pinned tree)"},
    ),
    RealEnv(
        repo="facebookresearch/large_concept_model",
        commit="fd7db8022113ae2d2ff1219d9a4cb4def897e3ff",
        env="lcm",
        # fairseq2n 0.3.0's native library is built against exactly this torch: the one
        # pin set of batch C's own (PyPI's CUDA builds)
        packages=("torch==2.5.1", "torchaudio==2.5.1", "fairseq2n==0.3.0", "fairseq2[arrow]==0.3.0",
                  "dacite>=1.8.1", "fire>=0.7.0", "hydra-core>=1.3.2", "importlib-resources~=6.4",
                  "numpy>=1.21", "polars>=1.16.0", "pyarrow>=16.1.0", "retrying>=1.3.4",
                  "sentence-splitter>=1.4", "sonar-space==0.3.2", "stopes==2.2.1",
                  "tensorboard>=2.18.0", "xxhash", "sacremoses", "sentencepiece", "emoji",
                  "accelerate>=1.2.0", "bert-score>=0.3.13", "editdistance>=0.8.1",
                  "jinja2>=3.1.3", "nltk>=3.9.1", "rouge-score>=0.1.2", "sacrebleu>=2.4.3",
                  "scikit-learn>=1.5.2", "spacy>=3.7.5", "tiktoken>=0.8.0",
                  "transformers>=4.45.0", "fairscale>=0.4.13", "numba>=0.60.0", "scipy>=1.14",
                  "datasets>=2.18.0", "wtpsplit>=2.1.0", "textdescriptives>=2.8.2",
                  "flit_core>=3.2,<4"),
        install_repo=True,
        source="pyproject.toml and the README's pip route: fairseq2 and fairseq2n first, then "
               "the package lcm from the checkout with its [data,eval] extras; the [cpu] "
               "extra's torch 2.5.1 and torchaudio 2.5.1 pinned exactly (fairseq2n's native "
               "library is built against that torch) as PyPI's builds, and fairseq2/fairseq2n "
               "0.3.0rc1 as PyPI's 0.3.0; sonar-space 0.3.2 and stopes 2.2.1 as uv.lock has "
               "them, stopes' [mono] extra without fasttext; flit_core for the build",
        left_out={"fairseq2==0.3.0rc1, fairseq2n==0.3.0rc1, torch==2.5.1+cpu": "pyproject's "
                  "uv sources: a private fairseq2 index and PyTorch's CPU index (PyPI's 0.3.0 "
                  "and the PyPI torch build installed instead)",
                  "en_core_web_sm": "the [data] extra names it by a GitHub release URL",
                  "fasttext, pythainlp, indic-nlp-library, botok, khmer-nltk, laonlp, hasami":
                  "stopes' [mono] extra: language tools for other scripts (fasttext is a "
                  "source distribution only); lcm imports none of them"},
    ),
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
