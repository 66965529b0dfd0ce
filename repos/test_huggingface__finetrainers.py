"""finetrainers — LoRA and full fine-tuning of diffusion video models.

Repository: https://github.com/huggingface/finetrainers
Commit: f476c3717da6cbfb1070505a99ee989426b46d9c
Domain: video generation: diffusion video-model LoRA fine-tuning
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: not_applicable). C3 and C4 LoRA-train Wan2.1-T2V-1.3B (multi-GB, Hugging
Face) for one step on crush-smol. finetrainers can log an error and still exit 0, so the log must
contain neither 'An error occurred during training:' nor a traceback (reject_log). C3 sets the
torch.distributed variables itself; its MASTER_PORT is {port}, a free port picked at run time.

The prepared view holds the crush-smol snapshot as {assets}/dataset/ and the Wan snapshot as
{assets}/model/current, which the run loads. Each stage's setup step (shims/dataset_config.py)
writes the dataset config the official prepare wrote, with data_root = {assets}/dataset as the
target sees it, to {out}/dataset_config.json. The official manifest.json is not written: the
stages took from it only the model_name 'wan', which is in argv, and an LD_LIBRARY_PATH prefix
that the prepare step always left empty.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script that writes the dataset config.

#: How this module spells what the reference argv leaves to run time: the dataset config is the
#: one the setup step wrote into {out}.
TOKENS = {"{assets}/dataset/dataset_config.json": ["{out}/dataset_config.json"]}

#: Every stage first writes the dataset config around the prepared snapshot (official prepare).
SETUP = [["{python}", "{shims}/dataset_config.py", "{assets}/dataset",
          "{out}/dataset_config.json"]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step writes {out}/dataset_config.json: one video dataset at the prepared "
    "snapshot, id_token PIKA_CRUSH, bucket [49, 480, 832], bicubic, caption prefixes removed."
)

#: Environment shared by every stage.
ENV = {
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HOME": "{assets}/cache/hf_home",
    "HF_HUB_CACHE": "{assets}/cache/hf_home/hub",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf_home/hub",
    "HF_DATASETS_CACHE": "{assets}/cache/hf_home/datasets",
    "TRANSFORMERS_CACHE": "{assets}/cache/hf_home/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "WANDB_MODE": "offline",
    "WANDB_DIR": "{out}/wandb",
    "NCCL_P2P_DISABLE": "1",
    "TORCH_NCCL_ENABLE_MONITORING": "0",
}

#: train.py's options after the parallel backend, in both stages: one LoRA step on one sample.
LORA_STEP = [
    "--model_name", "wan",
    "--pretrained_model_name_or_path", "{assets}/model/current",
    "--dataset_config", "{out}/dataset_config.json",
    "--training_type", "lora",
    "--target_modules", "blocks.*(to_q|to_k|to_v|to_out.0)",
    "--batch_size", "1", "--train_steps", "1", "--max_data_samples", "1",
    "--checkpointing_steps", "0",
]

#: The last options of both stages: no reporting, output under {out}.
OUTPUT = [
    "--report_to", "none",
    "--output_dir", "{out}/run_output",
    "--logging_dir", "{out}/logging",
]

#: finetrainers can log an error and still exit 0: these must not appear in the log.
FAILED = ["An error occurred during training:", "Traceback (most recent call last):"]

repo = Repo(
    "huggingface/finetrainers",
    commit="f476c3717da6cbfb1070505a99ee989426b46d9c",
    # any failed import counts; int(gpu_count) raises on "two"; int(observed or 0) makes a
    # null count 0
    c2_compat=C2Variant(no_device="fails", failed_exit="fails",
        no_python="missing_report:none", missing="runtime:none", not_executable="runtime:none",
        directory="runtime:none", timeout="runtime:none", crashed="insufficient_hardware",
        failed="insufficient_hardware", silent="insufficient_hardware",
        garbage="insufficient_hardware"),
    # torch_version is compared with what an import that exited 0 printed, "" too
    c5_compat=CompatVariant(version_claim="truthy", torch_claim="truthy", torch_import="always",
        torch_compare_empty=True,
        gpu_count_coerce=True, gpu_coerce_crash=True, gpu_observed_coerce=True,
        gpu_null_zero=True),
    imports_total=72,  # the C0 denominator
    domain="video generation: diffusion video-model LoRA fine-tuning",
    assets=[
        Asset(
            "crush-smol", "dataset", "hf_dataset",
            id="finetrainers/crush-smol",
            dest="dataset/",
            note=(
                "tiny video dataset; prepare writes {assets}/dataset/dataset_config.json for "
                "finetrainers; override BENCH_DATASET_ID / BENCH_DATASET_REVISION"
            ),
        ),
        hf_asset(
            "Wan2.1-T2V-1.3B", "Wan-AI/Wan2.1-T2V-1.3B-Diffusers",
            dest="model/current",
            note=(
                "multi-GB; linked as {assets}/model/current with model_name 'wan' recorded in "
                "{assets}/manifest.json (plus a torchcodec/FFmpeg probe); fallback candidate "
                "a-r-r-o-w/LTX-Video-diffusers (model_name ltx_video); overrides BENCH_MODEL_NAME "
                "/ BENCH_MODEL_ID / BENCH_MODEL_REVISION"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: not_applicable
    single_gpu=Run(
        ["{python}", "train.py", "--parallel_backend", "accelerate", *LORA_STEP, *OUTPUT],
        env={
            "CUDA_VISIBLE_DEVICES": "0",
            "WORLD_SIZE": "1",
            "RANK": "0",
            "LOCAL_RANK": "0",
            "LOCAL_WORLD_SIZE": "1",
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": "{port}",
            **ENV,
        },
        timeout=600,
        entrypoint="train.py",
        reject_log=FAILED,
        note=(
            "MASTER_PORT is a free local port picked at run time (fallback 29500). finetrainers "
            "can log an error and still exit 0, so the log must match neither fail pattern. "
            "--target_modules depends on model_name (ltx_video/cogvideox use "
            "'(transformer_blocks|single_transformer_blocks).*(to_q|to_k|to_v|to_out.0)'; override "
            "BENCH_TARGET_MODULES). LD_LIBRARY_PATH gets the FFmpeg/torchcodec prefix from "
            "manifest.json when present. MASTER_PORT is {port}, a free loopback port chosen when "
            "the run starts." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nnodes=1", "--nproc_per_node=2",
            "train.py",
            "--parallel_backend", "ptd", "--pp_degree", "1", "--dp_degree", "2",
            "--dp_shards", "1", "--cp_degree", "1", "--tp_degree", "1",
            *LORA_STEP,
            "--init_timeout", "600", "--nccl_timeout", "600",
            *OUTPUT,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="train.py",
        reject_log=FAILED,
        note=(
            "Data parallel over the ranks (dp_degree = number of ids in BENCH_MULTI_GPU_IDS / "
            "--gpu-ids, default 0,1). Gate: torch.cuda.device_count() >= 2 under the report "
            "python. Same fail patterns and LD_LIBRARY_PATH handling as the single-GPU stage."
            + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
