"""The real runs' first three rows and those of batches A and B (``table.py`` joins them).

Later batches' changes to a row are marked where they are made (``# batch H: ...``).
"""

from __future__ import annotations

from realenv import FFMPEG_LIBS, TORCH_AUDIO, TORCH_CPU, TORCH_VISION, RealEnv

ROWS: tuple[RealEnv, ...] = (
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
)
