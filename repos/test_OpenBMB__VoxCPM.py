"""VoxCPM — tokenizer-free text-to-speech.

Repository: https://github.com/OpenBMB/VoxCPM
Commit: 6ecc00a5d3b7efcb9179a66dcef393b04f39e2a6
Domain: audio: tokenizer-free text-to-speech (LoRA fine-tune)
Category: 1_single_gpu_only (tiers that apply: C0 C2 C3 C5)

Only C3 runs: one LoRA fine-tuning step of VoxCPM-0.5B (Hugging Face hub) on the repository's
example wav, from a config the probe generated in {out}/config.yaml; our setup step
(shims/make_config.py) writes the same config, and the one-line training manifest it names, before
the run. The wav is the prepared asset {assets}/dataset/example.wav (copied from the checkout's
examples/example.wav, as the official prepare did); the manifest the official prepare wrote next to
it is written by that setup step into {out}. C1 does not apply (CSV: repo_not_supported), nor does
C4 (CSV: not_applicable; the probe's multi-GPU script also cites earlier NCCL /dev/shm failures).
torchcodec needs FFmpeg shared libraries.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official shim (the generated config.yaml), mounted read-only.

repo = Repo(
    "OpenBMB/VoxCPM",
    commit="6ecc00a5d3b7efcb9179a66dcef393b04f39e2a6",
    c2_compat=C2Variant(failed_exit="unavailable", missing="path_hallucination",
        not_executable="unknown", timeout="timeout", crashed="runtime"),
    c5_compat=CompatVariant(version_strip=True, torch_strip=True, torch_import="always",
        ddp_without_count=True),
    imports_total=50,  # the C0 denominator
    domain="audio: tokenizer-free text-to-speech (LoRA fine-tune)",
    assets=[
        Asset(
            "example_wav", "dataset", "repo",
            path="examples/example.wav",
            dest="dataset/example.wav",
            note=(
                "copied to {assets}/dataset/example.wav plus a one-line training manifest "
                "{assets}/dataset/train_manifest.jsonl"
            ),
        ),
        hf_asset(
            "VoxCPM-0.5B", "openbmb/VoxCPM-0.5B",
            dest="model/openbmb__VoxCPM-0.5B",
            note=(
                "snapshot linked at {assets}/model/openbmb__VoxCPM-0.5B; must contain config.json "
                "and audiovae.pth; override VOXCPM_MODEL_ID / VOXCPM_MODEL_REVISION (sample rate "
                "16000, or 44100 for VoxCPM1.5 ids)"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        ["{python}", "scripts/train_voxcpm_finetune.py", "--config_path", "{out}/config.yaml"],
        env={
            "CUDA_VISIBLE_DEVICES": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "XDG_CACHE_HOME": "{assets}/cache/xdg",
            "HF_HOME": "{assets}/cache/hf_home",
            "HF_HUB_CACHE": "{assets}/cache/hf_hub",
            "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf_hub",
            "HF_DATASETS_CACHE": "{assets}/cache/hf_datasets",
            "TRANSFORMERS_CACHE": "{assets}/cache/hf_transformers",
            "TORCH_HOME": "{assets}/cache/torch",
            "MPLCONFIGDIR": "{assets}/cache/matplotlib",
        },
        timeout=600,
        entrypoint="scripts/train_voxcpm_finetune.py",
        setup=[[
            "{python}", "{shims}/make_config.py", "{out}",
            "--model", "{assets}/model/openbmb__VoxCPM-0.5B",
            "--wav", "{assets}/dataset/example.wav",
        ]],
        shim=(
            "The probe generates {out}/config.yaml: pretrained_path = prepared model, "
            "train_manifest = prepared jsonl, empty val_manifest, sample_rate 16000, batch_size 1, "
            "grad_accum_steps 1, num_workers 0, num_iters 1, max_steps 1, warmup 0, lr 1e-4, "
            "weight_decay 0.01, max_batch_tokens 0, huge valid/save intervals, save_path and "
            "tensorboard under {out}, loss weights diff/stop 1.0, LoRA on LM and DiT (not proj) "
            "with r 4, alpha 4, dropout 0."
        ),
        note=(
            "Refuses to run unless the prepare stage status is success. The probe's own CPU and "
            "multi-GPU scripts skip by policy (the multi-GPU one cites earlier NCCL /dev/shm "
            "failures). Our setup refuses, like the probe, a model folder without config.json "
            "and audiovae.pth, then writes {out}/config.yaml with the probe's values and "
            "{out}/train_manifest.jsonl, the prepare step's one line (the prepared "
            "{assets}/dataset/example.wav, the same text and dataset_id 0); it also stops when "
            "that wav is missing, as the prepare step did."
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=None,  # C4 does not apply: not_applicable
    skip={"cpu": "repo_not_supported"},
)
