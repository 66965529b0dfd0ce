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
#: Batch D: the CUDA pair with torchaudio 2.11.1, the newest torchaudio (it requires
#: torch>=2.11 and ships no compiled extension), for repositories that import torchaudio.
TORCH_AUDIO = (*TORCH_VISION, "torchaudio==2.11.1")
#: pip's option for a pure-Python package published only as an sdist (no wheel of the pinned
#: version): it is downloaded as the sdist and built in the image by pip, with ``setuptools``
#: from the wheelhouse, as an agent's own ``pip install`` would.
def sdists(*names: str) -> tuple[str, ...]:
    """The ``--no-binary`` option for ``names``, and setuptools to build them offline."""
    return (f"--no-binary={','.join(names)}", "setuptools")

# batch B: PyPI's newest torchaudio, 2.11.1, requires torch>=2.11 (no exact pin, unlike the
# releases before it), so it goes with the shared CUDA 2.14.1 pair; one base for every row
# that imports torchaudio.
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
        standin="standin_H:lettuce_assets",
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
        # batch H: batch A's stand-ins and those of pytest-reb's two additions (the module's)
        standin="standin_H:kvpress_assets",
        packages=(TORCH_CPU, "numpy>=2.0.0,<3", "transformers>=4.56,<5",
                  "sentencepiece>=0.2.0,<0.3", "protobuf>=5.27.2,<6", "datasets>=2.21.0,<3",
                  "pandas>=2.2.2,<3",
                  "accelerate>=1.0.0,<2", "requests>=2.32.3,<3", "cachetools>=5.5.2,<6",
                  "fire>=0.6.0,<0.7", "rouge>=1.0.1,<2", "nltk>=3.9.1,<4", "tqdm>=4.66.4,<5",
                  "scipy>=1.13.1,<2", "bert-score>=0.3.13,<0.4", "hatchling"),
        # batch H: the sdist built on the host (``sdists=``): ``--no-binary`` in ``packages``
        # cannot go with the download's ``--python-version`` (pip refuses the pair)
        sdists=("fire>=0.6.0,<0.7",),
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
        standin="standin_J:nano_vllm_qwen3",
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
        standin="standin_K:tgate_pixart",
    ),
    RealEnv(
        repo="FunAudioLLM/SenseVoice",
        commit="1a90d46cb933ef9e213b7d90292b9301b3e20f40",
        env="sensevoice",
        packages=(*TORCH_AUDIO, "modelscope", "huggingface", "huggingface_hub", "funasr>=1.1.3",
                  "numpy<=1.26.4", "gradio", "fastapi>=0.111.1", "uvicorn", "torchcodec"),
        debian=FFMPEG_LIBS,
        standin="standin_E:sensevoice_assets",
        sdists=("antlr4-python3-runtime==4.9.3", "jieba", "oss2", "crcmod"),
        source="requirements.txt: torch<=2.3 (the CUDA 2.14.1 with torchaudio 2.11.1: no "
               "torchaudio release pairs with torch<=2.3 and the shared pins), torchaudio, "
               "modelscope, huggingface, huggingface_hub, funasr>=1.1.3, numpy<=1.26.4, gradio, "
               "fastapi>=0.111.1; uvicorn, which api.py runs; torchcodec and FFmpeg's shared "
               "libraries (Debian's, as the repository's Dockerfile installs ffmpeg), which "
               "torchaudio 2.11's load needs; hydra-core's antlr4 runtime 4.9 "
               "and funasr's jieba, oss2 and crcmod have no wheel and are built from their "
               "sdists",
        left_out={"onnxruntime, onnx, funasr_onnx, funasr_torch, kaldi_native_fbank":
                  "the ONNX/libtorch export and demo scripts (export.py, demo_onnx.py, "
                  "demo_libtorch.py), not in requirements.txt",
                  "ffmpeg (the program), libsndfile": "system packages of the repository's "
                  "Dockerfile: its shared libraries are installed (FFMPEG_LIBS), the program "
                  "is not; soundfile's wheel carries its own libsndfile"},
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
                  "setuptools>=77.0.3,<82",
                  "wandb", "natsort", "matplotlib", "webdataset", "torchdata==0.9.0"),
        debian=("libcurl4",),
        source="setup.py install_requires (= requirements.txt), every pin kept but torch==2.1.0 "
               "(the shared CUDA 2.14.1 with torchvision 0.29.1: the sgm toy trainer reads MNIST "
               "through torchvision); jsonmerge 1.8.0 and omegaconf's antlr4 runtime 4.9 have no "
               "wheel and are built from their sdists; setuptools held below 82, the last "
               "releases with the pkg_resources lightning_fabric 1.9.4 imports (torch 2.14.1 "
               "requires setuptools>=77.0.3); what the bundled sgm trainer (modules/generative, "
               "whose own pyproject names only pytest) imports and setup.py does not: wandb, "
               "natsort, matplotlib (main.py), webdataset and torchdata 0.9.0, the last with "
               "datapipes (sgm/data/dataset.py), whose extension links libcurl (Debian's "
               "libcurl4)",
        sdists=("jsonmerge==1.8.0", "antlr4-python3-runtime==4.9.3"),
        left_out={"basicsr==1.4.2, gfpgan==1.3.8, realesrgan==0.3.0": "sdist only, and "
                  "basicsr's setup.py imports torch to build (it cannot build in pip's isolated "
                  "build); face restoration and upscaling only, not the sgm trainer",
                  "clip": "the name is OpenAI's CLIP, installed from its git repository; the "
                          "PyPI project of that name is an unrelated package"},
    ),

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
        standin="standin_J:ml_aim_assets",
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
        packages=(*TORCH_VISION, "dataclass-wizard<1", "einops", "httpx==0.24.1", "mlx-data",
                  "numpy<2", "simple-parsing==0.1.5", "transformers<5", "sentencepiece",
                  "matplotlib", "gradio<6", "boto3", "torchmetrics", "torchinfo",
                  "tensorboard", "tensorboardX", "rotary-embedding-torch",
                  "pytorch-model-summary", "imageio"),
        source="ml-mdm-matryoshka/pyproject.toml: dependencies and the [training] extra "
               "(torch==2.2.2 replaced by the shared 2.14.1 pair: nothing in the code needs "
               "2.2; tensorboard and tensorboardX unpinned), imageio of [web_demo]; "
               "dataclass-wizard, transformers and gradio held below their next majors (1, 5 "
               "and 6, all after the commit of 2025-03-27; dataclass-wizard 1.0 has no "
               "top-level YAMLWizard, which ml_mdm/reader.py imports: C1 failed there); "
               "with the two others open, huggingface-hub 1.x's httpx2 beside the "
               "pinned httpx==0.24.1 kept pip backtracking through httpcore2 releases; the "
               "package ml-mdm-matryoshka installed from a copy of its folder with --no-deps "
               "(the README's pip install -e .: the stages run ml_mdm/clis/train_parallel.py "
               "as a script, whose `from ml_mdm import ...` needs it installed; run from the "
               "folder uninstalled, C1 failed `No module named 'ml_mdm'`)",
        left_out={"tensorflow==2.5.0 ([cpu] and [gpu] extras)": "no wheel for Python 3.11 "
                  "(2.5 supports 3.6 to 3.9); no code at this commit imports it",
                  "torch==2.2.2+cpu / +cu111": "local-version builds from PyTorch's own index",
                  "img2dataset": "the [data_prep] tool, imported by clis/scrape_cc12m.py only; "
                  "its pins (albumentations<2, opencv, wandb) beside numpy<2 kept pip "
                  "backtracking for over seven minutes without a resolution",
                  "pytest, pytest-cov, pre-commit": "the [dev] extra",
                  "mlx": "Apple silicon only (unet_mlx.py, the MLX port)"},
        standin="standin_B:ml_mdm_t5",
        after=("cp -r /mnt/repo/ml-mdm-matryoshka /tmp/mm && $VENV/bin/pip install --no-index "
               "--no-deps --no-build-isolation --no-cache-dir --quiet /tmp/mm && rm -rf /tmp/mm",),
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
        # batch H: batch B's stand-ins and the BLEU metric files of pytest-reb's additions
        standin="standin_H:texo_assets",
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
        # before the squash, as docs/real-runs.md (Diffusion-Planner) says
        commit="16cffef4ae84a2efcb466fb7b2f5cf9defbe386d",
        env="diffusion_planner",
        packages=(*TORCH_VISION, "timm", "tensorboard", "wandb", "mmengine", "tqdm", "numpy",
                  "shapely", "nuplan-devkit"),
        # batch F: nuplan-devkit is on no package index; the README clones it and runs
        # pip install -e . there. Its wheel is built here from the session's fetch mirror
        # (motional/nuplan-devkit at its head e924167, version 1.2.2; setup.py declares no
        # dependencies), so the image gets it from the wheelhouse like the rest.
        sdists=("git+file:///work/.mirror/motional+nuplan-devkit/repo"
                "@e9241677997dd86bfc0bcd44817ab04fe631405b",),
        source="the README: nuplan-devkit cloned and installed (pip install ., its head "
               "e924167: the README names no commit), then requirements_torch.txt "
               "(torch==2.0.0+cu118, torchvision 0.15.1+cu118 replaced by the shared CUDA pair; "
               "pytorch_lightning 2.0.1 left out, below; timm, tensorboard, mmengine unpinned); "
               "wandb, tqdm, numpy, which train_predictor.py imports; shapely, which "
               "data_process/map_process.py imports (nuplan's requirements name it)",
        left_out={"nuplan-devkit's requirements.txt": "nuPlan's simulation and nuBoard stack "
                  "pinned for Python 3.9 (numpy 1.23.4, ray, bokeh, ...); the training path "
                  "imports nuplan.common.actor_state.vehicle_parameters only (pure Python)",
                  "pytorch_lightning==2.0.1": "requirements_torch.txt names it; no file of the "
                  "checkout imports it",
                  "the checkout as a package (pip install -e .)": "the stages run "
                  "train_predictor.py from the checkout's root, where diffusion_planner "
                  "imports as a folder"},
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
               "isolation; hydra's antlr4 runtime 4.9, transformers_stream_generator and vocos' "
               "encodec have no wheel and are built from their sdists; FFmpeg's shared "
               "libraries from Debian, which torchcodec (a dependency: torchaudio 2.11 loads "
               "audio through it) needs",
        left_out={"faster_whisper==0.10.1, funasr, jiwer, modelscope, zhconv, zhon": "the "
                  "[eval] extra (WER and speaker-similarity evaluation)",
                  "tensorrt, tensorrt_llm, tritonclient, triton_python_backend_utils":
                  "runtime/triton_trtllm, the TensorRT-LLM serving recipe (CUDA builds)",
                  "flash_attn": "an optional CUDA kernel, imported under try",
                  "pyaudio": "socket_client.py only (needs PortAudio)"},
        sdists=("antlr4-python3-runtime==4.9.3", "transformers_stream_generator", "encodec"),
        debian=FFMPEG_LIBS,
        standin="standin_E:f5_tts_models",
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
               "the build requirement, so the checkout installs without build isolation; "
               "argbind, and funasr's jieba, oss2, crcmod and hydra's antlr4 runtime 4.9, have "
               "no wheel and are built from their sdists",
        left_out={"the [dev] extra": "pytest, black, flake8, mypy, pre-commit",
                  "FFmpeg shared libraries": "torchcodec loads them at run time; a Debian "
                  "package, not installed in a venv (the image is built with its network off)"},
        sdists=("argbind", "antlr4-python3-runtime==4.9.3", "jieba", "oss2", "crcmod"),
        standin="standin_K:voxcpm_model",
    ),

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
        standin="standin_J:flaggems_bert_tokenizer",
    ),
    RealEnv(
        repo="kotaro-kinoshita/yomitoku",
        commit="f68b55702cf5712524ff4a7b4665ebde622132ca",
        env="yomitoku",
        standin="standin_I:yomitoku_models",
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
        standin="standin_F:vim_assets",
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
        standin="standin_J:multimodal_mamba_assets",
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
                  "dacite==1.8.1", "fire>=0.7.0", "hydra-core==1.3.2", "importlib-resources==6.4.5",
                  "numpy==1.26.4", "polars==1.17.1", "pyarrow==18.1.0", "retrying==1.3.4",
                  "sentence-splitter==1.4", "sonar-space==0.3.2", "stopes==2.2.1",
                  "tensorboard==2.18.0", "xxhash==3.5.0", "sacremoses==0.1.1",
                  "sentencepiece==0.2.0", "emoji==2.14.0", "accelerate==1.2.0",
                  "bert-score==0.3.13", "editdistance==0.8.1", "jinja2==3.1.4", "nltk==3.9.1",
                  "rouge-score==0.1.2", "sacrebleu==2.4.3", "scikit-learn==1.6.0", "spacy==3.7.5",
                  "tiktoken==0.8.0", "transformers==4.45.2", "fairscale==0.4.13", "numba==0.60.0",
                  "scipy==1.14.1", "datasets==3.2.0", "wtpsplit==2.1.2", "textdescriptives==2.8.2",
                  "flit_core>=3.2,<4"),
        # batch F: the direct dependencies at uv.lock's versions (unpinned, pip backtracked
        # for minutes over wtpsplit and datasets); PyPI has these as source only (uv.lock's
        # sdist-only entries; fire 0.7.0 too, so fire>=0.7.0 takes 0.7.1's wheel): built into
        # wheels first, pure Python all
        sdists=("rouge-score==0.1.2", "fairscale==0.4.13", "antlr4-python3-runtime==4.9.3",
                "mosestokenizer==1.2.1", "docopt==0.6.2", "toolwrapper==2.1.0",
                "uctools==1.3.0"),
        install_repo=True,
        source="pyproject.toml and the README's pip route: fairseq2 and fairseq2n first, then "
               "the package lcm from the checkout with its [data,eval] extras; the [cpu] "
               "extra's torch 2.5.1 and torchaudio 2.5.1 pinned exactly (fairseq2n's native "
               "library is built against that torch) as PyPI's builds, and fairseq2/fairseq2n "
               "0.3.0rc1 as PyPI's 0.3.0; sonar-space 0.3.2 and stopes 2.2.1 as uv.lock has "
               "them, stopes' [mono] extra without fasttext, the other direct dependencies at "
               "uv.lock's versions; flit_core for the build",
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
    RealEnv(
        repo="meta-pytorch/torchft",
        commit="86c42910df9140bdfee68fbba29233c3cab84288",
        env="torchft",
        packages=(*TORCH_VISION, "torchdata", "numpy", "opentelemetry-api>=1.39.0",
                  "opentelemetry-sdk>=1.39.0", "opentelemetry-exporter-otlp-proto-http>=1.39.0",
                  "torchft-nightly==2025.12.27"),
        source="pyproject.toml: dependencies (torch>=2.7, opentelemetry-*); torchvision and "
               "torchdata, which train_ddp.py imports (README); the package's Rust extension "
               "from torchft-nightly 2025.12.27, the build of the day after the pinned commit "
               "(2025-12-26, main's head until 2026-01-12, so the build of that tree): no Rust "
               "toolchain or protoc on this machine for maturin; its _torchft extension is "
               "copied into the checkout's torchft/, where the README's pip install -e . "
               "(maturin develop) puts it (*.so is git-ignored there), since the stages run "
               "the checkout's torchft (PYTHONPATH={repo})",
        after=("cp $VENV/lib/python3.11/site-packages/torchft/_torchft.*.so $REPO/torchft/",),
        standin="standin_H:torchft_assets",
        left_out={"a maturin build of the checkout": "needs cargo and protoc, not on this "
                  "machine; the nightly wheel of the next day stands in for it",
                  "pytest, parameterized, expecttest, torchx-nightly, lintrunner": "the [dev] "
                  "extra"},
    ),
    RealEnv(
        repo="metavoiceio/metavoice-src",
        commit="de3fa211ac4621e03a5f990651aeecc64da418f5",
        env="metavoice",
        packages=(*TORCH_AUDIO, "librosa==0.10.1", "tqdm", "tiktoken==0.5.1", "numpy==1.26.4",
                  "fastapi==0.110.0", "uvicorn==0.27.1", "tyro==0.7.3", "deepfilternet==0.5.6",
                  "pydub==0.25.1", "huggingface_hub==0.21.4", "click", "posthog",
                  "python-dotenv", "einops==0.7.0", "julius", "soundfile", "av==12.0.0",
                  "sentencepiece", "transformers==4.39.2", "num2words", "spacy==3.7.4",
                  "torchmetrics", "gradio==4.24.0"),
        source="requirements.txt (poetry export) and pyproject.toml, with torch 2.14.1 and "
               "torchaudio 2.11.1 for its torch==2.1.0/torchaudio==2.1.0: the code imports no "
               "xformers, which is what ties it to 2.1.0; audiocraft's own dependencies "
               "that have wheels (julius, av, sentencepiece, ...) installed by name",
        left_out={"audiocraft==1.2.0": "no wheel on PyPI (an sdist only, and it pins "
                  "torch==2.1.0); fam/llm/decoders.py imports it",
                  "encodec==0.1.1, flashy==0.0.2, demucs==4.0.1, hydra-core, omegaconf":
                  "audiocraft's: sdists only, or (hydra-core 1.3.2, omegaconf 2.3.0) needing "
                  "antlr4-python3-runtime 4.9.3, an sdist only",
                  "xformers==0.0.22.post7": "a CUDA build paired with torch 2.1.0; no module "
                  "of fam imports it",
                  "torch==2.1.0, torchaudio==2.1.0": "the shared 2.14.1 build and the "
                  "torchaudio release that pairs with it instead (one torch per machine)",
                  "wandb, pre-commit, pytest, ipdb": "the [observable] extra and dev tools"},
    ),
    RealEnv(
        repo="modelscope/ClearerVoice-Studio",
        commit="6b3774dc79c46ae8bed2a4fa5f706f0ac8c75c61",
        env="clearervoice",
        packages=(*TORCH_AUDIO, "scipy>=1.10.1", "soundfile==0.12.1", "yamlargparse==1.31.1",
                  "torchinfo==1.8.0", "tqdm==4.67.0", "pyyaml", "museval", "resampy",
                  "onnxruntime", "gammatone", "librosa==0.10.2.post1",
                  "opencv-python-headless", "numpy>=1.24.3", "tensorboard==2.14.0",
                  "torch-complex>=0.4.4", "rotary-embedding-torch==0.8.3", "typeguard==4.3.0",
                  "scenedetect", "huggingface-hub>=0.26.2", "gdown==5.2.0", "pydub",
                  "einops", "joblib", "packaging", "soupsieve<=2.10", "pystoi==0.3.3",
                  "pesq==0.0.4"),
        source="requirements.txt (torch>=2.0.1 and torchaudio>=2.0.2 as the shared 2.14.1 "
               "build with torchaudio 2.11.1; opencv-python==4.10.0.84 as its headless build: "
               "no display here); einops and joblib, which the training code imports; "
               "soupsieve (gdown's beautifulsoup4) held at 2.10 for the image's Python 3.11.2; "
               "pesq 0.0.4 (an sdist with a C extension, which solver.py needs through "
               "utils/misc.py) built into a wheel on the host, Debian bookworm as the image "
               "(glibc 2.36, CPython 3.11 ABI), as an agent with a compiler would build it; "
               "pystoi 0.3.3 (source only) built into a wheel there too",
        standin="standin_I:clearervoice_frcrn",
        # pesq: a C extension, built on the host (no compiler in the image); pystoi 0.3.3:
        # pure Python, published as an sdist only
        sdists=("pesq==0.0.4", "pystoi==0.3.3"),
        left_out={"pyworld, pysptk, fastdtw": "sdists with C extensions, no "
                  "wheel for Python 3.11 on PyPI and no compiler in the image; the speechscore "
                  "metrics only, which no stage runs",
                  "pymcd, xls_r_sqa": "the speechscore metrics, which need pyworld/pysptk",
                  "mir_eval==0.7, python_speech_features==0.6": "sdists only (no wheel); "
                  "the speechscore and the AV demos only"},
    ),
    RealEnv(
        repo="ogkalu2/comic-translate",
        commit="2a43edd0565bd07a391725d4e104ddb90cacae0d",
        env="comic_translate",
        packages=("mahotas>=1.4.18", "pillow>=11.0.0", "numpy>=2.2.6", "setuptools",
                  "PySide6>=6.8.0", "msgpack>=1.1.0", "requests>=2.31.0", "pdfplumber>=0.11.5",
                  "py7zr>=0.20.8", "rarfile>=4.1", "img2pdf>=0.5.1",
                  "azure-ai-vision-imageanalysis>=1.0.0b1", "deepl>=1.16.1",
                  "deep-translator>=1.11.4", "janome>=0.5.0",
                  "pythainlp>=5.1.2", "jaconv>=0.3.4", "huggingface-hub>=0.34.4",
                  "onnxruntime>=1.22.1", "shapely>=2.1.1", "pyclipper>=1.3.0.post6",
                  "six>=1.16.0", "soupsieve<=2.10"),
        source="requirements.txt, as written (no torch: the repository needs none); "
               "soupsieve (beautifulsoup4's, for deep-translator) held at 2.10, the last "
               "release for the image's Python 3.11.2 (the wheels are resolved on this host's "
               "3.11.7)",
        standin="standin_D:comic_detector",
        left_out={"jieba>=0.42.1, wget>=3.2": "sdists only, no wheel on PyPI (Chinese word "
                  "segmentation for the translators; a download helper)",
                  "requirements-dev.txt": "development tools"},
    ),
    RealEnv(
        repo="remsky/Kokoro-FastAPI",
        commit="3af45719940c915b53ad2a63f9cdb6f22680d276",
        env="kokoro_fastapi",
        packages=(TORCH_CPU, "fastapi==0.115.6", "uvicorn==0.34.0", "click>=8.0.0",
                  "pydantic==2.10.4", "pydantic-settings==2.7.0", "python-dotenv==1.0.1",
                  "sqlalchemy==2.0.27", "numpy>=1.26.0", "scipy==1.14.1", "soundfile==0.13.0",
                  "regex==2024.11.6", "aiofiles==23.2.1", "tqdm==4.67.1", "requests==2.32.3",
                  "munch==4.0.0", "tiktoken==0.8.0", "loguru==0.7.3", "openai>=1.59.6",
                  "pydub>=0.25.1", "matplotlib>=3.10.0", "mutagen>=1.47.0", "psutil>=6.1.1",
                  "espeakng-loader==0.2.4", "kokoro==0.9.4", "misaki[en,ko]==0.9.4",
                  "spacy==3.8.5", "inflect>=7.5.0", "phonemizer-fork>=3.3.2", "av>=14.2.0",
                  "text2num>=2.5.1"),
        source="pyproject.toml: dependencies and the [cpu] extra (torch==2.8.0 as the shared "
               "CPU build 2.13.0)",
        left_out={"en-core-web-sm": "a direct URL to a GitHub release, not a package index",
                  "misaki's [ja] and [zh] extras": "pyopenjtalk (an sdist with C++ code, no "
                  "compiler in the image) and jieba (an sdist only) have no wheel; the "
                  "Japanese and Chinese voices only",
                  "torch==2.8.0+cu129, torch==2.8.0+rocm6.4": "the [gpu]/[rocm] extras, from "
                  "PyTorch's own indexes",
                  "pytest, pytest-cov, httpx, pytest-asyncio, tomli, jinja2": "the [test] extra"},
        standin="standin_H:kokoro_model",
    ),
    RealEnv(
        repo="rllm-team/rllm",
        commit="0c0e4ec9b158318d72a09d810c060e0c9529c074",
        env="rllm",
        packages=(TORCH_CPU, "langchain==1.0.2", "langchain_community==0.4.1",
                  "langchain_core==1.0.1", "networkx==3.0", "numpy", "pandas<3", "scikit_learn",
                  "scipy", "tqdm", "transformers<=4.30.0", "pyarrow"),
        install_repo=True,
        source="requirements.txt (torch>=2.1.0,<=2.3.0 as the shared CPU build 2.13.0: the "
               "code uses no API removed since 2.3; pandas as pandas<3: its dataset code "
               "writes into the arrays that pandas 3's copy-on-write hands out read-only); "
               "the package rllm installed from the checkout",
        left_out={"torch<=2.3.0": "the shared CPU build 2.13.0 instead (one torch per "
                  "machine)",
                  "sentence-transformers": "not in requirements.txt, imported by "
                  "rllm/datasets/relbench/utils.py; 2.2.2, the last release that accepts "
                  "transformers<=4.30.0, is an sdist only (no wheel)"},
        standin="standin_K:rllm_rel_f1",
    ),
    RealEnv(
        repo="sgl-project/SpecForge",
        commit="077f286269a7e10ca7b18f7a33e49e8c6cbeac4f",
        env="specforge",
        packages=(*TORCH_AUDIO, "transformers==4.57.1", "qwen-vl-utils==0.0.11", "datasets",
                  "setuptools", "tqdm", "wandb", "psutil", "numpy", "accelerate", "pydantic",
                  "openai-harmony", "yunchang"),
        install_repo=True,
        source="requirements.txt, with the shared torch 2.14.1 / torchvision 0.29.1 and "
               "torchaudio 2.11.1 for its 2.9.1 / 0.24.1 / 2.9.1 pins; the package specforge "
               "installed from the checkout (--no-deps: setup.py reads requirements.txt)",
        left_out={"sglang[all]==0.5.6": "pins torch==2.9.1 and pulls CUDA-only kernels "
                  "(sgl-kernel, flashinfer); the probe's --target-model-backend hf runs no "
                  "SGLang engine",
                  "torch==2.9.1, torchvision==0.24.1, torchaudio==2.9.1": "the shared 2.14.1 "
                  "builds instead (one torch per machine)",
                  "pre-commit": "a development tool"},
        standin="standin_K:specforge_assets",
    ),
    RealEnv(
        repo="yuanze-lin/Olympus",
        commit="d49bffd878dcb96e7cd4d9312e0852b26e34eab8",
        env="olympus",
        standin="standin_I:olympus_assets",
        packages=(*TORCH_VISION, "accelerate==0.28.0", "transformers==4.38.2",
                  "tokenizers==0.15.2", "peft==0.10.0", "huggingface-hub==0.30.0",
                  "numpy==1.26.4", "pandas==2.2.3", "pillow==11.1.0", "safetensors==0.5.3",
                  "scikit-learn==1.6.1", "scipy==1.15.2", "sentencepiece", "einops",
                  "opencv-python-headless", "matplotlib==3.10.1", "openpyxl==3.1.5",
                  "beautifulsoup4==4.13.3", "gdown==5.2.0", "wandb==0.19.8", "timm",
                  "protobuf==5.29.4", "tqdm==4.67.1", "pydantic==2.11.1", "psutil==7.0.0",
                  "soupsieve<=2.10"),
        source="requirements.txt (a pip freeze for Python 3.10), with the shared torch 2.14.1 "
               "and torchvision 0.29.1 for its 2.2.0+cu118 builds; soupsieve (beautifulsoup4's) "
               "held at 2.10, the last release for the image's Python 3.11.2",
        left_out={"torch==2.2.0+cu118, torchvision==0.17.0+cu118, torchaudio==2.2.0+cu118, "
                  "nvidia-*-cu11": "CUDA 11.8 builds from PyTorch's own index",
                  "deepspeed==0.12.5": "an sdist only (no wheel; its build needs torch and a "
                  "compiler); the multi-GPU stage only",
                  "triton==2.2.0": "paired with torch 2.2.0; the shared torch brings its own",
                  "ninja, nvidia-ml-py, pynvml": "build and NVML helpers for deepspeed"},
    ),

    # ---------------------------------------------------------------------------------------
    # batch G: the pinned commits are not in the public snapshot; each row is built at the
    # head of the repository's default branch (every pin is newer than its snapshot, as far as
    # can be told), so build.py passes --reb-allow-commit-mismatch
    # ---------------------------------------------------------------------------------------
    RealEnv(
        repo="MoonshotAI/MoBA",
        # the pinned b5d5836 is not in the fetched repository (12 commits); master's head
        commit="61e456bc956c5a25fd9c84e5496b661329cb1b72",
        env="moba",
        packages=(TORCH_CPU, "transformers>=4.48.3", "accelerate>=1.3.0", "einops>=0.8.1"),
        install_repo=True,
        source="requirements.txt (torch>=2.1.0 as the shared CPU build 2.13.0), which "
               "pyproject.toml reads as its dependencies; the package moba installed from the "
               "checkout (the README's pip install .)",
        left_out={"flash-attn==2.6.3": "a CUDA build compiled against the installed torch (no "
                  "wheel on PyPI); moba/moba_efficient.py imports it"},
    ),
    RealEnv(
        repo="microsoft/renderformer",
        # the pinned c51f870 is not in the fetched repository (20 commits); main's head
        commit="5b0b18f61de8fdc4a2c1caa0675181f3d88c90d6",
        env="renderformer",
        packages=(TORCH_CPU, "dacite", "einops", "roma", "huggingface_hub", "safetensors",
                  "trimesh", "scipy", "pymeshlab", "h5py", "natsort", "imageio[ffmpeg]",
                  "simple-ocio"),
        source="requirements.txt, as written, with the README's PyTorch 2.0+ as the shared CPU "
               "build 2.13.0 (the code imports no torchvision); the stages run from the "
               "checkout (no package to install); the shared libraries pymeshlab loads, from "
               "Debian (the official base image has them: libgl1, ffmpeg)",
        standin="standin_G:renderformer_model",
        # pymeshlab (scene_processor/remesh.py, the converter's) loads libGL, libOpenGL, libX11,
        # libxcb, fontconfig and freetype: the official base image's libgl1 and ffmpeg bring them
        debs=("libgl1", "libglvnd0", "libglx0", "libopengl0", "libx11-6", "libx11-data",
              "libxcb1", "libxau6", "libxdmcp6", "libbsd0", "libmd0", "libfontconfig1",
              "fontconfig-config", "fonts-dejavu-core", "libfreetype6", "libpng16-16",
              "libbrotli1", "libexpat1"),
        left_out={"renderformer-liger-kernel (git+https://github.com/iamNCJ/...)": "a git "
                  "URL, not a package index; Triton kernels infer.py applies on CUDA only",
                  "flash-attn": "the README's optional CUDA build; ATTN_IMPL=sdpa is set by "
                  "every stage"},
    ),
    RealEnv(
        repo="InternLM/InternEvo",
        # the pinned a5b3972 is not in the fetched repository (its newest commit is of
        # 2024-03-28); the default branch develop's head
        commit="c628a8c87411258e90c50f6a49f6a5e1f507ddb8",
        env="internevo",
        packages=(TORCH_CPU, "transformers<4.30.0", "sentencepiece", "numpy", "tqdm", "psutil",
                  "packaging", "ninja", "gputil", "boto3", "botocore", "pyecharts",
                  "py-libnuma", "pynvml", "tensorboard"),
        sdists=("gputil==1.4.0",),  # GPUtil is an sdist only (pure Python)
        source="requirements/runtime.txt (less its development tools); requirements/torch.txt's "
               "torch==2.1.0+cu118 as the shared CPU build 2.13.0 (the code imports neither "
               "torchvision nor torchaudio); the stages run train.py from the checkout (the "
               "README does not install the package)",
        left_out={"torch==2.1.0+cu118, torchvision==0.16.0+cu118, torchaudio==2.1.0+cu118":
                  "CUDA 11.8 builds from PyTorch's own index; the shared CPU torch instead",
                  "torch-scatter": "an sdist on PyPI (a C++/CUDA extension; the file names "
                  "PyG's own wheel index, not reachable here)",
                  "flash-attn, apex (third_party submodules)": "CUDA builds from git "
                  "submodules, not fetched; optional (use_flash_attn=False)",
                  "pre-commit, pytest": "development tools"},
    ),
    RealEnv(
        repo="LMCache/LMCache",
        # the pinned de25f0f is not in the fetched repository (its newest commit is of
        # 2024-10-25); the default branch dev's head
        commit="54641cad896b0bacde6b119a9f349cbd56af49b5",
        env="lmcache",
        packages=(TORCH_CPU, "numpy==1.26.4", "pyyaml", "redis", "nvtx", "safetensors",
                  "setuptools", "async-timeout>=4.0.3"),
        install_repo=True,
        source="requirements.txt and setup.py's install_requires (torch>=2.2.0 as the shared "
               "CPU build 2.13.0); the package lmcache 0.1.2 installed from the checkout; "
               "async-timeout named, which redis requires below Python 3.11.3 (the image has "
               "3.11.2, the host that downloads the wheels 3.11.7, so pip's marker skipped it)",
        standin="standin_G:lmcache_tiny_gpt2",
        left_out={"torchac_cuda>=0.2.5": "an sdist only (a CUDA extension compiled with nvcc); "
                  "the CacheGen serde imports it",
                  "lmcache_vllm, vllm, openai, streamlit, transformers": "what only examples/ "
                  "and tests/ import (the vLLM integration lives in another repository)",
                  "requirements-lint.txt, requirements-test.txt": "development tools"},
    ),
    RealEnv(
        repo="thu-pacman/chitu",
        # the pinned d2cc0f5 is not in the fetched repository (its newest commit is of
        # 2025-03-15, the v0.1.0 release); the default branch public-main's head
        commit="6261b7a06d348b865154dab5d018168bd92e75da",
        env="chitu",
        packages=(TORCH_CPU, "setuptools", "wheel", "cmake", "ninja", "protobuf", "sentencepiece",
                  "numpy<2.0.0", "cython", "packaging", "accelerate", "transformers", "fire",
                  "tiktoken==0.4.0", "blobfile", "faker", "hydra-core", "fastapi", "uvicorn",
                  "tqdm", "bitsandbytes", "triton"),
        sdists=("antlr4-python3-runtime==4.9.3",),  # hydra-core -> omegaconf
        source="requirements-build.txt, as written, and the README's torch (the cu124 build) "
               "as the shared CPU build 2.13.0; triton, which chitu/ imports and PyPI's CUDA "
               "torch brings; the stages run from the checkout (PYTHONPATH)",
        left_out={"chitu (pip install --no-build-isolation .)": "setup.py builds the "
                  "chitu_backend CUDAExtension with nvcc (and Cython modules): no CUDA "
                  "toolkit or compiler here",
                  "flash_attn, awq_inference_engine, auto_gptq, EETQ, w8a8gemm, w8a8gemv":
                  "optional attention and quantisation kernels (CUDA builds), each imported "
                  "under try"},
    ),
    RealEnv(
        repo="vllm-project/vllm-omni",
        # the pinned 8c12593 is not in the fetched repository (its main ends at be81443c,
        # 2025-12-28); main's head
        commit="be81443c8a52f863452253ee6ea1d9f263bd2fb6",
        env="vllm_omni",
        packages=(TORCH_CPU, "omegaconf>=2.3.0", "librosa>=0.11.0", "resampy>=0.4.3",
                  "diffusers>=0.36.0", "accelerate==1.12.0", "gradio==5.50", "soundfile>=0.13.1",
                  "cache-dit==1.1.8", "transformers", "setuptools", "wheel"),
        sdists=("antlr4-python3-runtime==4.9.3",),  # omegaconf
        install_repo=True,
        source="pyproject.toml: dependencies (vllm is commented out there); transformers, "
               "which vllm_omni imports and vllm brings; the package vllm-omni installed from "
               "the checkout (the installation guide's uv pip install -e .)",
        left_out={"vllm==0.12.0": "the guide's first step; its wheel pins torch==2.9.0 with "
                  "CUDA kernels (xformers, flashinfer): the shared CPU torch 2.13.0 instead "
                  "(one torch per machine), so vllm, which vllm_omni imports throughout, is "
                  "missing",
                  "vllm_ascend, torch_npu, torch_musa, mindiesd, amdsmi": "vendor backends "
                  "(Ascend, Moore Threads, ROCm)",
                  "flash_attn, sageattention, mooncake, ray": "optional CUDA kernels and "
                  "distributed connectors",
                  "dev and docs extras": "pytest, mypy, pre-commit, mkdocs"},
    ),
    RealEnv(
        repo="facebookresearch/sapiens",
        # the pinned 08dce79 is not in the fetched repository (its main ends at 3e829ac,
        # 2024-10-24); main's head
        commit="3e829ac27476e4a70b6a01f85e487492afe02df1",
        env="sapiens",
        packages=(*TORCH_VISION, "scipy", "munkres", "tqdm", "cython", "fsspec", "yapf==0.40.1",
                  "matplotlib", "packaging", "omegaconf", "ftfy", "regex", "json_tricks",
                  "terminaltables", "modelindex", "prettytable", "albumentations", "addict",
                  "numpy", "pyyaml", "rich", "termcolor", "pillow", "ninja", "psutil", "einops",
                  "importlib-metadata", "mat4py", "opencv-python-headless", "xtcocotools",
                  "pycocotools", "shapely", "six", "setuptools>=77.0.3,<81", "wheel"),
        sdists=("antlr4-python3-runtime==4.9.3",),  # omegaconf
        after=tuple(
            f"cp -r $REPO/{d} /tmp/sapiens-{d} && (cd /tmp/sapiens-{d} && MMCV_WITH_OPS=0 "
            "$VENV/bin/pip install --no-index --no-deps --no-build-isolation --no-cache-dir "
            f"--quiet .) && rm -rf /tmp/sapiens-{d}"
            for d in ("engine", "cv", "pretrain", "pose", "det", "seg")),
        source="_install/conda.sh: its two pip lines and the runtime requirements of the six "
               "vendored packages it installs (engine, cv, pretrain, pose, det, seg: mmengine, "
               "mmcv, mmpretrain, mmpose, mmdet, mmseg), with conda's pytorch, torchvision "
               "(pytorch-cuda 12.1) as the shared 2.14.1 pair, opencv as its headless build; "
               "the six installed from copies of their folders with pip --no-deps (not "
               "editable: the checkout stays clean), mmcv with MMCV_WITH_OPS=0; setuptools "
               "held below 81 (torch 2.14.1 requires >=77.0.3), since the six setup.py files "
               "import pkg_resources, which the newest setuptools no longer ships",
        left_out={"mmcv's compiled ops (mmcv._ext)": "a C++/CUDA build of cv/ (no compiler or "
                  "CUDA toolkit in the image, and PyPI has no mmcv wheel); mmcv installed "
                  "without them, so mmcv.ops, which mmseg's losses import, cannot load",
                  "chumpy": "an sdist only whose setup.py imports pip (fails to build on "
                  "Python 3.11); the SMPL tools of pose/ only",
                  "libcom": "imported under try by the seg transforms (colour transfer)",
                  "ipdb": "a debugger",
                  "seg/requirements/optional.txt, the tests requirements": "the multimodal "
                  "extras from git (CLIP, stable-diffusion, taming-transformers) and test "
                  "tools"},
    ),
)


def find(repo: str) -> RealEnv:
    """The row of ``repo`` (owner/name)."""
    for row in ENVIRONMENTS:
        if row.repo == repo:
            return row
    raise KeyError(f"no real-run environment for {repo}; rows: "
                   + ", ".join(r.repo for r in ENVIRONMENTS))
