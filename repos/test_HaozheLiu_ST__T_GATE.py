"""T-GATE — training-free acceleration of text-to-image diffusion by gating cross-attention.

Repository: https://github.com/HaozheLiu-ST/T-GATE
Commit: ab2a88fa50319cbb0bfcdc2772405573b266fa13
Domain: image generation: training-free diffusion acceleration (diffusers pipelines)
Category: 1_single_gpu_only (tiers that apply: C0 C2 C3 C5)

Only C3 runs (C1 and C4: repo_not_supported): main.py with one inference step. main.py hard-codes
its model ids, so prepare downloads the first candidate pipeline that is anonymously available
(multi-GB, network) and --model names it; the reference records the normal choice, pixart_alpha.
The repository has no dependency file.
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run, Synthetic, hf_asset

repo = Repo(
    "HaozheLiu-ST/T-GATE",
    commit="ab2a88fa50319cbb0bfcdc2772405573b266fa13",
    c2_compat=C2Variant(no_python="missing_report:none", missing="unknown:none",
        not_executable="unknown:none", directory="unknown:none", timeout="unknown:none",
        crashed="insufficient_hardware", failed="insufficient_hardware",
        silent="insufficient_hardware", garbage="insufficient_hardware"),
    c5_compat=CompatVariant(silent_python_ok=False, torch_import="always", torch_probe="json",
        # every capability is judged only beside a cuda block that gave both values
        capabilities_need_python=True, cuda_from="observed_bool", gpu_null_zero=True,
        gpu_needs_stage="block"),
    imports_total=16,  # the C0 denominator
    domain="image generation: training-free diffusion acceleration (diffusers pipelines)",
    assets=[
        Asset(
            "prompts", "data", "synthetic",
            path="{assets}/dataset/prompts.txt",
            dest="dataset/prompts.txt",
            synthetic=Synthetic.lines(
                "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k"),
            note=(
                "one line: 'Astronaut in a jungle, cold color palette, muted colors, detailed, "
                "8k'; the repo's assets/teaser.png is also copied there for the SVD variant"
            ),
        ),
        hf_asset(
            "pixart_alpha", "PixArt-alpha/PixArt-XL-2-1024-MS",
            dest="cache/hf_home/hub",
            hf_cache=True,
            note=(
                "multi-GB snapshot_download into the HF hub cache {assets}/cache/hf_home/hub. "
                "main.py hard-codes its model ids, so prepare takes the first candidate that "
                "downloads anonymously, in order: pixart_alpha, pixart_sigma "
                "(PixArt-alpha/PixArt-Sigma-XL-2-1024-MS), lcm_pixart "
                "(PixArt-alpha/PixArt-LCM-XL-2-1024-MS), sdxl "
                "(stabilityai/stable-diffusion-xl-base-1.0), lcm_sdxl (sdxl base + "
                "latent-consistency/lcm-sdxl), svd "
                "(stabilityai/stable-video-diffusion-img2vid-xt); HF_TOKEN used if set"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "main.py",
            "--model", "pixart_alpha",
            "--prompt", "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k",
            "--saved_path", "{out}/generated",
            "--inference_step", "1", "--gate_step", "1", "--sp_interval", "1",
            "--fi_interval", "1", "--warm_up", "0",
        ],
        env={
            "CUDA_VISIBLE_DEVICES": "0",
            "HF_HOME": "{assets}/cache/hf_home",
            "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf_home/hub",
            "TRANSFORMERS_CACHE": "{assets}/cache/hf_home/transformers",
            "DIFFUSERS_CACHE": "{assets}/cache/hf_home/diffusers",
            "HF_DATASETS_CACHE": "{assets}/cache/hf_home/datasets",
            "XDG_CACHE_HOME": "{assets}/cache/xdg",
            "TORCH_HOME": "{assets}/cache/torch",
            "PIP_CACHE_DIR": "{assets}/cache/pip",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "TOKENIZERS_PARALLELISM": "false",
        },
        timeout=600,
        entrypoint="main.py",
        note=(
            "--model is the key prepare selected (normally pixart_alpha) and --prompt is the first "
            "line of prompts.txt. If the svd model was selected the command uses '--image "
            "{assets}/dataset/teaser.png' instead of --prompt."
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"cpu": "repo_not_supported", "multi_gpu": "repo_not_supported"},
)
