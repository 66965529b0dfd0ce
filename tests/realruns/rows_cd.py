"""The real runs' rows of batches C and D (``table.py`` joins them).

Later batches' changes to a row are marked where they are made (``# batch F: ...``).
"""

from __future__ import annotations

from realenv import TORCH_AUDIO, TORCH_CPU, TORCH_VISION, RealEnv

ROWS: tuple[RealEnv, ...] = (
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
)
