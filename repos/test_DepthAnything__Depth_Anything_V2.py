"""Depth Anything V2 — monocular depth estimation models and inference scripts.

Repository: https://github.com/DepthAnything/Depth-Anything-V2
Commit: e5a2732d3ea2cddc081d7bfd708fc0bf09f812f1
Domain: vision: monocular metric depth estimation (inference)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 run metric_depth/run.py on one demo image from the repository with the metric Hypersim
ViT-S checkpoint (about 100 MB from the Hugging Face hub, so preparing needs network). C4 does not
apply (CSV: not_applicable): this is single-image inference.
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "metric_depth/run.py",
    "--encoder", "vits",
    "--load-from", "{assets}/model/depth_anything_v2_metric_hypersim_vits.pth",
    "--max-depth", "20",
    "--img-path", "{assets}/dataset/images",
    "--outdir", "{out}/outputs", "--input-size", "224", "--pred-only", "--grayscale",
]

repo = Repo(
    "DepthAnything/Depth-Anything-V2",
    commit="e5a2732d3ea2cddc081d7bfd708fc0bf09f812f1",
    c2_compat=C2Variant(no_python="deps", missing="deps", not_executable="deps"),
    c5_compat=CompatVariant(silent_python_ok=False, version_claim="truthy",
        torch_claim="truthy", gpu_observed_coerce=True,
        # the count only beside a cuda stage; with none it is 0, so ddp is inconclusive
        gpu_needs_stage="file", gpu_default=0, ddp_without_count=True, ddp_underclaim=True),
    imports_total=27,  # the C0 denominator
    domain="vision: monocular metric depth estimation (inference)",
    assets=[
        Asset(
            "demo_image", "dataset", "repo",
            path="assets/examples/demo01.jpg",
            dest="dataset/images/",
            note="one image copied into {assets}/dataset/images/",
        ),
        Asset(
            "metric_hypersim_vits", "model", "hf",
            id="depth-anything/Depth-Anything-V2-Metric-Hypersim-Small",
            url="https://huggingface.co/depth-anything/Depth-Anything-V2-Metric-Hypersim-Small/resolve/main/depth_anything_v2_metric_hypersim_vits.pth?download=true",
            files=["depth_anything_v2_metric_hypersim_vits.pth"],
            dest="model/depth_anything_v2_metric_hypersim_vits.pth",
            note=(
                "about 100 MB; fetched by plain URL download (curl/wget), placed at "
                "{assets}/model/depth_anything_v2_metric_hypersim_vits.pth"
            ),
        ),
    ],
    cpu=Run(ARGV, env={"CUDA_VISIBLE_DEVICES": ""}, timeout=600, entrypoint="metric_depth/run.py"),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0"},
        timeout=600,
        entrypoint="metric_depth/run.py",
    ),
    multi_gpu=None,  # C4 does not apply: not_applicable
)
