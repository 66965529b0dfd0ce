"""Olympus — a multimodal LLM that routes vision tasks (Mipha/LLaVA-style training code).

Repository: https://github.com/yuanze-lin/Olympus
Commit: d49bffd878dcb96e7cd4d9312e0852b26e34eab8
Domain: multimodal LLM (vision-language task router on Mipha/LLaVA-style training code)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages train the projector for one step on the first example of Olympus.json with the multi-GB
Yuanze/Olympus model (Hugging Face). C4 is the only multi-GPU stage launched with DeepSpeed (ZeRO-3
config from the repository). The HF caches are repo-relative paths (benchmark_assets/cache/...), as
in the official probe.

Prepare downloads Olympus.json raw (to {assets}/dataset/Olympus.json); a setup step of every stage
(our shims/.../minimal_train.py) cuts it to the official one-example minimal_train.json in {out}
(first example, image field removed, at most two turns), which --data_path then names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, deepspeed, hf_asset

# Our setup script (minimal_train.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time.
TOKENS = {"{assets}/dataset/minimal_train.json": ["{out}/minimal_train.json"]}

#: Every stage first writes the one-example training file from the raw Olympus.json.
SETUP = [["{python}", "{shims}/minimal_train.py", "{assets}/dataset/Olympus.json",
          "{out}/minimal_train.json"]]

#: What each stage's note adds after the reference note.
MADE = (" Our setup step writes the one-example minimal_train.json (first example of Olympus.json, "
        "no image, at most two turns) into {out}.")

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "benchmark_assets/cache/hf_home",
    "TRANSFORMERS_CACHE": "benchmark_assets/cache/transformers_cache",
    "HF_DATASETS_CACHE": "benchmark_assets/cache/hf_datasets_cache",
    "TORCH_HOME": "benchmark_assets/cache/torch_cache",
    "TORCH_EXTENSIONS_DIR": "{assets}/cache/torch_extensions",
    "WANDB_DISABLED": "true",
    "WANDB_MODE": "disabled",
    "WANDB_DIR": "{out}/wandb",
    "WANDB_CONFIG_DIR": "{out}/wandb_config",
    "WANDB_CACHE_DIR": "{out}/wandb_cache",
    "WANDB_DATA_DIR": "{out}/wandb_data",
    "TMPDIR": "{out}/tmp",
    "PIP_CACHE_DIR": "{assets}/cache/pip_cache",
    "XDG_CACHE_HOME": "{assets}/cache/xdg_cache",
    "XDG_CONFIG_HOME": "{assets}/cache/xdg_config",
    "XDG_DATA_HOME": "{assets}/cache/xdg_data",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "{out}/pycache",
    "TOKENIZERS_PARALLELISM": "false",
}

#: train.py's options before the precision flags, in every stage: model, data, what is frozen.
MODEL_DATA = [
    "--model_name_or_path", "{assets}/model/model",
    "--version", "v0",
    "--data_path", "{out}/minimal_train.json",
    "--image_folder", "{assets}/dataset",
    "--tune_mm_mlp_adapter", "True",
    "--freeze_vision_tower", "True",
    "--freeze_backbone", "True",
    "--mm_use_im_start_end", "False",
    "--mm_use_im_patch_token", "False",
    "--image_aspect_ratio", "pad",
    "--group_by_modality_length", "False",
]

#: train.py's options after the precision flags: one step, no eval, no save, no reporting.
ONE_STEP = [
    "--output_dir", "{out}/artifacts",
    "--overwrite_output_dir", "True",
    "--max_steps", "1",
    "--per_device_train_batch_size", "1",
    "--gradient_accumulation_steps", "1",
    "--evaluation_strategy", "no", "--save_strategy", "no",
    "--learning_rate", "1e-6", "--logging_steps", "1", "--tf32", "False",
    "--model_max_length", "128",
    "--gradient_checkpointing", "False",
    "--dataloader_num_workers", "0",
    "--lazy_preprocess", "True", "--report_to", "none",
]

repo = Repo(
    "yuanze-lin/Olympus",
    commit="d49bffd878dcb96e7cd4d9312e0852b26e34eab8",
    # str(python_path).strip(): 3 is the path "3"; a path that is missing or not executable
    # also fails the version probe (two items)
    c2_compat=C2Variant(no_device="unavailable", no_python="deps"),
    # a python_path that is no file is an item, and still run (a bare name through PATH);
    # torch is probed only for an executable file
    c5_compat=CompatVariant(strip_path=True, path_text=True, runs_missing="version",
        noexec_path_weight=2, torch_needs_version=False,
        version_claim="text_null", version_strip=True, torch_claim="text_null", torch_strip=True,
        torch_compare_empty=True, cuda_claim="truthy", gpu_count_coerce=True,
        gpu_observed_coerce=True),
    imports_total=44,  # the C0 denominator
    domain="multimodal LLM (vision-language task router on Mipha/LLaVA-style training code)",
    assets=[
        Asset(
            "olympus_min", "dataset", "hf_dataset",
            id="Yuanze/Olympus",
            files=["Olympus.json"],
            dest="dataset/",  # Olympus.json; setup cuts it
            note=(
                "first example of Olympus.json with its image field removed and at most two "
                "conversation turns, written to {assets}/dataset/minimal_train.json (override "
                "PREPARE_DATASET_REPO)"
            ),
        ),
        hf_asset(
            "Olympus", "Yuanze/Olympus",
            dest="model/model",
            note=(
                "multi-GB snapshot linked at {assets}/model/model (override PREPARE_MODEL_REPO); "
                "the vision tower may additionally be fetched from the HF hub at load time"
            ),
        ),
    ],
    cpu=Run(
        [
            "{python}", "mipha/train/train.py", *MODEL_DATA,
            "--bf16", "True", "--fp16", "False",
            *ONE_STEP,
            "--run_name", "scimlopsbench_cpu",
            "--no_cuda", "True",
        ],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="mipha/train/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=(
            "HF_HOME and the other HF/torch caches are set as repo-relative paths in the official "
            "probe." + MADE
        ),
    ),
    single_gpu=Run(
        [
            "{python}", "mipha/train/train.py", *MODEL_DATA,
            "--bf16", "False", "--fp16", "True",
            *ONE_STEP,
            "--run_name", "scimlopsbench_single_gpu",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="mipha/train/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note="Pre-check: torch GPU count >= 1 under the report python." + MADE,
    ),
    multi_gpu=deepspeed(
        "mipha/train/train.py",
        "--deepspeed", "{repo}/scripts/zero3.json",
        *MODEL_DATA,
        "--bf16", "False", "--fp16", "True",
        *ONE_STEP,
        "--run_name", "scimlopsbench_multi_gpu",
        nproc=2,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="mipha/train/train.py",
        note=(
            "The only repo whose multi-GPU stage uses the DeepSpeed launcher (ZeRO-3 config from "
            "the repo). Pre-checks: 'import deepspeed' works and >= 2 GPUs. --num_gpus = number of "
            "ids in SCIMLOPSBENCH_MULTI_GPU_DEVICES (0,1)." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
