"""Comic Translate — a PySide6 app that detects, reads, translates and inpaints comic text.

Repository: https://github.com/ogkalu2/comic-translate
Commit: 2a43edd0565bd07a391725d4e104ddb90cacae0d
Domain: comic/manga translation desktop app (PySide6 GUI; ONNX detection/OCR/inpainting)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

The GUI is not run: the official driver, fed on stdin, builds RTDetrV2ONNXDetection
(modules/detection/rtdetr_v2_onnx.py, the declared entrypoint) and detects text blocks in one
image, with the model files looked up locally instead of through hf_hub_download and a dummy font
engine (shim). Our rewrite is repos/shims/test_ogkalu2__comic_translate/detect_one_image.py, run
as a script instead of from stdin; both stages run the same command, and as officially the C1
stage's empty CUDA_VISIBLE_DEVICES selects device cpu, any other value device cuda. C3 needs
onnxruntime's CUDAExecutionProvider. torch is not a repository dependency, yet C2 probes torch, so
C2 only passes if a CUDA torch is installed anyway. C4 does not apply (CSV: repo_not_supported).
"""

from pytest_reb import SHIMS, Asset, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official stdin driver, mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time: `python -` read the
#: driver from stdin; we run our copy of it as a script with the same two arguments (after
#: "--": a one-element spelling would also replace the "-" inside other elements).
TOKENS = {"-": ["{shims}/detect_one_image.py", "--"]}

#: Environment shared by every stage.
ENV = {
    "HF_HUB_OFFLINE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "HF_HOME": "{assets}/cache/hf_home",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface_hub",
    "HF_HUB_CACHE": "{assets}/cache/huggingface_hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/transformers",
    "HF_DATASETS_CACHE": "{assets}/cache/datasets",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg_cache",
    "XDG_CONFIG_HOME": "{assets}/cache/xdg_config",
    "XDG_DATA_HOME": "{assets}/cache/xdg_data",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "timeout", "600s",
    "{python}", "{shims}/detect_one_image.py", "--",
    "{assets}/dataset/hopper.jpg",
    "{assets}/model/comic-text-and-bubble-detector",
]

repo = Repo(
    "ogkalu2/comic-translate",
    commit="2a43edd0565bd07a391725d4e104ddb90cacae0d",
    # torch is probed (plainly) for a non-blank torch_version claim and an executable file,
    # whatever the version probe said; a launch that never ran does not judge the ddp claim
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1,
        torch_needs_version=False, torch_needs_file=True, version_strip=True,
        torch_strip=True, torch_import="if_nonblank", torch_compare_empty=True,
        cuda_from="observed",
        gpu_observed_coerce=True,
        ddp_excused=frozenset({"args_unknown", "entrypoint_not_found", "missing_report",
                               "invalid_json"})),
    imports_total=83,  # the C0 denominator
    domain="comic/manga translation desktop app (PySide6 GUI; ONNX detection/OCR/inpainting)",
    assets=[
        Asset(
            "hopper", "dataset", "url",
            url="https://raw.githubusercontent.com/python-pillow/Pillow/master/Tests/images/hopper.jpg",
            dest="dataset/hopper.jpg",
            note="saved as {assets}/dataset/hopper.jpg",
        ),
        hf_asset(
            "comic-text-and-bubble-detector", "ogkalu/comic-text-and-bubble-detector",
            files=["detector.onnx", "config.json"],
            dest="model/comic-text-and-bubble-detector",
            note=(
                "allow-pattern snapshot via "
                "{assets}/cache/hf_models/ogkalu__comic-text-and-bubble-detector, final copy at "
                "{assets}/model/comic-text-and-bubble-detector"
            ),
        ),
    ],
    cpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="modules/detection/rtdetr_v2_onnx.py",
        shim=(
            "The inline driver (fed on stdin) replaces the detection module's hf_hub_download with "
            "a lookup in the local model folder and swaps FontEngineFactory for a dummy so no font "
            "models are fetched, then builds RTDetrV2ONNXDetection(settings=None), calls "
            "initialize(device='cpu', confidence_threshold=0.3) and detect() on the image, "
            "printing 'cpu_infer_ok num_blocks=N'."
        ),
        note=(
            "Not run through the probe runner; the stage script uses coreutils timeout and writes "
            "results itself. SCIMLOPSBENCH_CPU_COMMAND (or --command) replaces the default driver. "
            "detect_one_image.py is that default driver; CUDA_VISIBLE_DEVICES='' makes it use "
            "device cpu and print 'cpu_infer_ok num_blocks=N image=hopper.jpg'."
        ),
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="modules/detection/rtdetr_v2_onnx.py",
        shim=(
            "Same inline driver with device='cuda'; it first raises unless "
            "onnxruntime.get_available_providers() contains CUDAExecutionProvider (then the "
            "failure is classed deps)."
        ),
        note=(
            "Devices from SCIMLOPSBENCH_SINGLE_GPU_DEVICES (default 0); "
            "SCIMLOPSBENCH_SINGLE_GPU_COMMAND replaces the default driver. detect_one_image.py "
            "with CUDA_VISIBLE_DEVICES=0: the provider check, device cuda, and "
            "'single_gpu_infer_ok num_blocks=N ...'."
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
