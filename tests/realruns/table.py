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

# batch B: PyPI's newest torchaudio, 2.11.1, requires torch>=2.11 (no exact pin, unlike the
# releases before it), so it goes with the shared CUDA 2.14.1 pair; one base for every row
# that imports torchaudio.
TORCH_AUDIO = (*TORCH_VISION, "torchaudio==2.11.1")


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
    RealEnv(
        repo="apple/ml-aim",
        commit="bd9e06893f3ad68bda56b34ac2158fda2680b7fc",
        env="aim",
        packages=(*TORCH_VISION, "huggingface_hub", "safetensors"),
        source="aim-v1/pyproject.toml and aim-v2/pyproject.toml: dependencies torch>=2.0.0, "
               "torchvision, huggingface_hub, safetensors (the README installs both "
               "subfolders from git; main_attnprobe.py imports aim from its own folder, so "
               "neither is installed)",
        left_out={"jax, flax": "the JAX backend (aim/v1/jax, aim/v2/jax), not the torch probe",
                  "mlx": "the MLX backend, for Apple silicon only",
                  "loralib": "imported lazily by LoraAttention only, named by no install file",
                  "pytest, transformers, numpy": "the [test] extras"},
    ),
    RealEnv(
        repo="emidan19/deep-tempest",
        # the pinned 096081c is not in the fetched repository (no ref holds it); main's head
        commit="18235965f8a15d44c2415fad7e165fb572e1eafb",
        env="deep_tempest",
        packages=(*TORCH_VISION, "opencv-python-headless", "scikit-image", "pillow",
                  "hdf5storage", "ninja", "lmdb", "requests", "timm", "einops", "numpy",
                  "scipy", "matplotlib", "scikit-learn", "pandas", "tqdm", "numba"),
        source="end-to-end/requirement.txt (opencv as its headless build); numpy, scipy, "
               "matplotlib, scikit-learn, pandas, tqdm and numba (utils/DTutils.py, which the "
               "trainer imports), which end-to-end/ imports, from the "
               "conda spec requirements.txt (python 3.9, pytorch 2.0 with CUDA 11.8: not a pip "
               "file), unpinned",
        left_out={"gnuradio, pmt, tempest_swig, PyQt5": "gr-tempest, the GNU Radio capture "
                  "module (C++ and SWIG, built with cmake against GNU Radio): not on PyPI and "
                  "not needed to train",
                  "fastwer, pytesseract, optuna": "the evaluation and tuning scripts "
                  "(main_test_*, tempest_evaluation.py, optuna_drunet.py), not training"},
        standin="standin_B:deep_tempest_drunet",
    ),
    RealEnv(
        repo="c2g-dev/city2graph",
        # the pinned db9fcb9 is not in the fetched repository (its main ends at b83a76d,
        # 2025-06-15); the module's env_hints were read from the repository's head as well
        commit="b83a76dc30c736585a613e6e84863e5f8d579b7a",
        env="city2graph",
        packages=(TORCH_CPU, "torch_geometric>=2.6.1", "networkx>=2.8", "osmnx>=2.0.3",
                  "shapely>=2.1.0", "geopandas>0.12.0", "libpysal>=4.12.1", "momepy",
                  "overturemaps", "hatchling"),
        install_repo=True,
        source="pyproject.toml: dependencies and the [torch] extra (torch>=2.4.0 as the CPU "
               "2.13.0, torch_geometric>=2.6.1); hatchling, its build backend, so the checkout "
               "installs without build isolation",
        left_out={"PyG extensions (torch_scatter, torch_sparse)": "the extra's comment says "
                  "they are installed separately, from PyG's own wheel index (not reachable "
                  "here); torch_geometric runs without them",
                  "docs and dev groups": "sphinx, jupyter, pytest and the plotting helpers"},
    ),
    RealEnv(
        repo="apple/ml-mdm",
        commit="dfa4718be3e327d8f7b46a2ab9f6c1c28e2f3ce0",
        env="ml_mdm",
        packages=(*TORCH_VISION, "dataclass-wizard", "einops", "httpx==0.24.1", "mlx-data",
                  "numpy<2", "simple-parsing==0.1.5", "transformers", "sentencepiece",
                  "matplotlib", "gradio", "boto3", "torchmetrics", "torchinfo",
                  "tensorboard", "tensorboardX", "rotary-embedding-torch",
                  "pytorch-model-summary", "imageio"),
        source="ml-mdm-matryoshka/pyproject.toml: dependencies and the [training] extra "
               "(torch==2.2.2 replaced by the shared 2.14.1 pair: nothing in the code needs "
               "2.2; tensorboard and tensorboardX unpinned), imageio of [web_demo]; the "
               "package is run from its folder (the stages' cwd), not installed",
        left_out={"tensorflow==2.5.0 ([cpu] and [gpu] extras)": "no wheel for Python 3.11 "
                  "(2.5 supports 3.6 to 3.9); no code at this commit imports it",
                  "torch==2.2.2+cpu / +cu111": "local-version builds from PyTorch's own index",
                  "img2dataset": "the [data_prep] tool, imported by clis/scrape_cc12m.py only; "
                  "its pins (albumentations<2, opencv, wandb) beside numpy<2 kept pip "
                  "backtracking for over seven minutes without a resolution",
                  "pytest, pytest-cov, pre-commit": "the [dev] extra",
                  "mlx": "Apple silicon only (unet_mlx.py, the MLX port)"},
        standin="standin_B:ml_mdm_t5",
    ),
    RealEnv(
        repo="alephpi/Texo",
        commit="a462c537a9726545d2bcfb639c9f99224d1e36c2",
        env="texo",
        packages=(*TORCH_VISION, "albumentations>=2.0.2", "datasets==4.0.0", "evaluate>=0.4.5",
                  "ftfy>=6.3.1", "lightning>=2.5.3", "opencv-python-headless>=4.10.0.84",
                  "optimum-onnx[onnxruntime]>=0.0.1", "pillow>=11.1.0", "rapidfuzz>=3.13.0",
                  "rich>=10.2.2", "tensorboard>=2.20.0", "transformers==4.40.0", "wand>=0.6.13",
                  "hydra-core>=1.3.2", "omegaconf>=2.3.0", "torchinfo>=1.8.0", "hatchling"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch==2.7.0 replaced by the shared 2.14.1 pair: "
               "the code uses nothing of 2.7 alone; opencv as its headless build), and of the "
               "dev group what src/ imports (hydra-core, omegaconf, torchinfo); hatchling, the "
               "build backend, so the checkout installs without build isolation",
        left_out={"onnxruntime-gpu>=1.23.0": "the CUDA build; optimum-onnx[onnxruntime] brings "
                  "the CPU onnxruntime, the same module, which only src/test_onnx.py imports",
                  "jupyterlab, pytest, viztracer, modelscope, hydra-submitit-launcher, "
                  "tensorboard-plugin-profile, torch-tb-profiler, matplotlib, orjson":
                  "the rest of the dev group (notebooks, profiling, hub scripts)",
                  "paddle, ppocr, ptocr, debugpy": "scripts/python/convert_model.py, the "
                  "PaddleOCR weight converter"},
        sdists=("antlr4-python3-runtime==4.9.3",),
        standin="standin_B:texo_formulanet",
    ),
    RealEnv(
        repo="RingBDStack/SocialED",
        commit="660e9d84b114a4084a3972cc00b1451c11c87f67",
        env="socialed",
        packages=(TORCH_CPU, "sentence-transformers", "transformers", "numpy", "pandas",
                  "scikit-learn", "scipy", "networkx", "matplotlib", "gensim", "spacy",
                  "torch_geometric", "GitPython", "hdbscan", "geoopt", "munkres",
                  "pytorch-ignite", "huggingface_hub", "tqdm", "requests"),
        source="requirements.txt (and setup.py, which reads it) is a frozen pip list of 190 "
               "pins that cannot be installed together (torch 2.3.1 with both CUDA 11 and 12 "
               "libraries, dgl 0.6.0 and dgl-cu110, faiss-gpu, numpy 1.24 wheels for <=3.11 "
               "only partly); installed instead, unpinned, the packages SocialED/ imports "
               "(torch as the CPU 2.13.0)",
        left_out={"dgl==0.6.0, dgl-cu110": "no wheel for Python 3.11 on PyPI (the CUDA 11.0 "
                  "build is on DGL's own index); imported by clkd, etgnn, finevent, kpgnn, "
                  "qsgnn, rplmsed",
                  "torch_scatter": "a compiled PyG extension from PyG's own wheel index",
                  "faiss-gpu==1.7.2": "a CUDA build, named by requirements.txt, imported by no "
                  "file at this commit",
                  "Sphinx and the docs toolchain, pytest, twine": "documentation, tests, "
                  "release"},
        standin="standin_B:socialed_sbert",
    ),
    RealEnv(
        repo="ZhengYinan-AIR/Diffusion-Planner",
        # the pinned 3558eac is not in the public history (squashed upstream): the last commit
        # before the squash, as docs/real-runs.md section 3 ran it
        commit="16cffef4ae84a2efcb466fb7b2f5cf9defbe386d",
        env="diffusion_planner",
        packages=(*TORCH_VISION, "timm", "tensorboard", "wandb", "mmengine", "tqdm", "numpy"),
        source="what the CPU training path imports, as in section 3 (the repository's "
               "requirements are nuPlan's simulation stack with numpy 1.23); torchvision "
               "because timm imports torchvision.ops",
        left_out={"nuplan-devkit": "on no package index; section 3 installed its fetched "
                  "source with --no-deps, which this builder (PyPI wheels only) does not: "
                  "data_augmentation.py imports nuplan.common.actor_state.vehicle_parameters",
                  "shapely": "data_process/map_process.py only (nuPlan preprocessing)"},
    ),
    RealEnv(
        repo="SWivid/F5-TTS",
        commit="27e20fcf39fbce3f187a61d4a3e92065d2d9b947",
        env="f5-tts",
        packages=(*TORCH_AUDIO, "accelerate>=0.33.0", "bitsandbytes>0.37.0", "cached_path",
                  "click", "datasets", "ema_pytorch>=0.5.2", "gradio>=6.0.0", "hydra-core>=1.3.0",
                  "librosa", "matplotlib", "pydantic<=2.10.6", "pydub", "pypinyin", "rjieba",
                  "safetensors", "soundfile", "tomli", "torchcodec", "torchdiffeq",
                  "tqdm>=4.65.0", "transformers", "transformers_stream_generator", "unidecode",
                  "vocos", "wandb", "x_transformers>=1.31.14", "setuptools-scm>=8.0"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch and torchaudio as the shared pins); "
               "setuptools-scm, its build requirement, so the checkout installs without build "
               "isolation",
        left_out={"faster_whisper==0.10.1, funasr, jiwer, modelscope, zhconv, zhon": "the "
                  "[eval] extra (WER and speaker-similarity evaluation)",
                  "tensorrt, tensorrt_llm, tritonclient, triton_python_backend_utils":
                  "runtime/triton_trtllm, the TensorRT-LLM serving recipe (CUDA builds)",
                  "flash_attn": "an optional CUDA kernel, imported under try",
                  "pyaudio": "socket_client.py only (needs PortAudio)"},
        sdists=("antlr4-python3-runtime==4.9.3",),
    ),
    RealEnv(
        repo="OpenBMB/VoxCPM",
        commit="6ecc00a5d3b7efcb9179a66dcef393b04f39e2a6",
        env="voxcpm",
        packages=(*TORCH_AUDIO, "torchcodec", "transformers>=4.36.2", "einops", "gradio<6",
                  "inflect", "addict", "wetext", "modelscope>=1.22.0", "datasets>=3,<4",
                  "huggingface-hub", "pydantic", "tqdm", "simplejson", "sortedcontainers",
                  "soundfile", "librosa", "matplotlib", "funasr", "spaces", "argbind",
                  "safetensors", "tensorboardX", "setuptools-scm>=8"),
        install_repo=True,
        source="pyproject.toml: dependencies (torch and torchaudio as the shared pins); "
               "tensorboardX, which scripts/train_voxcpm_finetune.py imports; setuptools-scm, "
               "the build requirement, so the checkout installs without build isolation",
        left_out={"the [dev] extra": "pytest, black, flake8, mypy, pre-commit",
                  "FFmpeg shared libraries": "torchcodec loads them at run time; a Debian "
                  "package, not installed in a venv (the image is built with its network off)"},
    ),

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
