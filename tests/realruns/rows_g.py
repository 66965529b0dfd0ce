"""The real runs' rows of batch G, built at the head of each repository's default branch
(``table.py`` joins them).
"""

from __future__ import annotations

from realenv import TORCH_CPU, TORCH_VISION, RealEnv

ROWS: tuple[RealEnv, ...] = (
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
