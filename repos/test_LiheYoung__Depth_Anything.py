"""Depth Anything (v1) — monocular depth estimation.

Repository: https://github.com/LiheYoung/Depth-Anything
Commit: 1d03336771fe09c5398ffdd211441e33941a97dc
Domain: vision: monocular depth estimation v1 (inference)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 run run.py with the ViT-S encoder on one repository image. run.py loads
LiheYoung/depth_anything_vits14 by hub id, so the prepared Hugging Face cache (network) is what
matters. C4 does not apply (CSV: not_applicable).
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/huggingface",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "run.py",
    "--encoder", "vits",
    "--img-path", "{assets}/dataset/examples_1",
    "--outdir", "{out}/out", "--pred-only", "--grayscale",
]

repo = Repo(
    "LiheYoung/Depth-Anything",
    commit="1d03336771fe09c5398ffdd211441e33941a97dc",
    c2_compat=C2Variant(no_python="insufficient_hardware", missing="insufficient_hardware",
        not_executable="insufficient_hardware", directory="insufficient_hardware"),
    c5_compat=CompatVariant(cuda_from="observed", gpu_observed_coerce=True),
    imports_total=64,  # the C0 denominator
    domain="vision: monocular depth estimation v1 (inference)",
    assets=[
        Asset(
            "demo1", "dataset", "repo",
            path="assets/examples/demo1.png",
            dest="dataset/examples_1/",
            note="one image copied into {assets}/dataset/examples_1/",
        ),
        hf_asset(
            "depth_anything_vits14", "LiheYoung/depth_anything_vits14",
            dest="cache/huggingface/hub",
            hf_cache=True,
            note=(
                "snapshot into {assets}/model/LiheYoung__depth_anything_vits14 and the HF cache "
                "{assets}/cache/huggingface/hub; run.py loads it by hub id through "
                "from_pretrained, so the HF cache is what matters; encoder selectable "
                "(vits/vitb/vitl) at prepare time"
            ),
        ),
    ],
    cpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="run.py",
        note="--encoder is derived from the prepared model id (vits by default).",
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="run.py",
        note=(
            "Pre-check: torch under the report python must report CUDA available and at least 1 "
            "device, otherwise failure (insufficient_hardware)."
        ),
    ),
    multi_gpu=None,  # C4 does not apply: not_applicable
)
