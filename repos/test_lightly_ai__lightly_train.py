"""LightlyTrain — self-supervised pretraining and distillation for vision models.

Repository: https://github.com/lightly-ai/lightly-train
Commit: 9716e64a7043c1a4857ece3b3436d831e9d97722
Domain: vision: self-supervised pretraining / distillation library (Lightning-based CLI)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages run the lightly-train CLI (pretrain, SimCLR, one step) on coco128_unlabeled with a
DINOv3 ViT-T/16 checkpoint, both downloaded by URL. The probe prefers a 'lightly-train' console
script next to the report python when there is one. C4 lets Lightning spawn the DDP ranks.
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run, self_launching

#: Environment shared by every stage.
ENV = {
    "LIGHTLY_TRAIN_EVENTS_DISABLED": "1",
    "LIGHTLY_TRAIN_CACHE_DIR": "{assets}/cache/lightly-train",
    "LIGHTLY_TRAIN_MODEL_CACHE_DIR": "{assets}/model/dinov3_vitt16",
    "LIGHTLY_TRAIN_DATA_CACHE_DIR": "{assets}/cache/lightly-train/data",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HOME": "{assets}/cache/hf",
    "TRANSFORMERS_CACHE": "{assets}/cache/hf/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "PYTHONPATH": "{repo}/src",
}

#: The CLI call and its arguments up to batch_size, in every stage: SimCLR on coco128.
PRETRAIN = [
    "{python}", "-c", "from lightly_train._cli import _cli_entrypoint; _cli_entrypoint()",
    "pretrain",
    "out={out}/run",
    "overwrite=true",
    "data={assets}/dataset/coco128_unlabeled",
    "model=dinov3/vitt16",
    "method=simclr",
    "epochs=1",
    "batch_size=1",
]

#: The arguments after the devices: one step.
ONE_STEP = ["trainer_args.max_steps=1", "trainer_args.limit_train_batches=1"]

repo = Repo(
    "lightly-ai/lightly-train",
    commit="9716e64a7043c1a4857ece3b3436d831e9d97722",
    c2_compat=C2Variant(failed_exit="unavailable", no_python="missing_report",
        missing="runtime", not_executable="runtime", directory="runtime", timeout="timeout",
        crashed="runtime", failed="runtime", silent="runtime:empty", garbage="runtime"),
    # the device count is int() of the cuda stage's, never the interpreter's
    c5_compat=CompatVariant(compare_empty_observed=True, torch_import="always",
        gpu_observed_coerce=True, gpu_absent_zero=True, ddp_without_count=True),
    imports_total=81,  # the C0 denominator
    domain="vision: self-supervised pretraining / distillation library (Lightning-based CLI)",
    assets=[
        Asset(
            "coco128_unlabeled", "dataset", "url",
            url="https://github.com/lightly-ai/coco128_unlabeled/releases/download/v0.0.1/coco128_unlabeled.zip",
            dest="dataset/coco128_unlabeled",
            extract=True,
            note="extracted to {assets}/dataset/coco128_unlabeled",
        ),
        Asset(
            "dinov3_vitt16", "model", "url",
            url="https://lightly-train-checkpoints.s3.us-east-1.amazonaws.com/dinov3/dinov3_vitt16_distillationv2.pth",
            dest="model/dinov3_vitt16/dinov3_vitt16_distillationv2.pth",
            note=(
                "placed at {assets}/model/dinov3_vitt16/dinov3_vitt16_distillationv2.pth; that "
                "folder is passed as LIGHTLY_TRAIN_MODEL_CACHE_DIR so model=dinov3/vitt16 resolves "
                "without a download"
            ),
        ),
    ],
    cpu=Run(
        [*PRETRAIN, "num_workers=0", "accelerator=cpu", "devices=1", *ONE_STEP],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="src/lightly_train/_cli.py",
        note=(
            "When a 'lightly-train' console script exists next to the report python the probe runs "
            "'<bindir>/lightly-train pretrain ...' instead of the python -c entry call. "
            "LIGHTLY_TRAIN_EVENTS_DISABLED turns telemetry off."
        ),
    ),
    single_gpu=Run(
        [*PRETRAIN, "num_workers=0", "accelerator=gpu", "devices=1", *ONE_STEP],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="src/lightly_train/_cli.py",
        note="Console script preferred when present, as in the CPU stage.",
    ),
    multi_gpu=self_launching(
        [
            *PRETRAIN, "loader_args.batch_size=1",
            "num_workers=0", "accelerator=gpu", "devices=2", "strategy=ddp",
            *ONE_STEP,
        ],
        launcher="lightning",
        nproc=2,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="src/lightly_train/_cli.py",
        note=(
            "devices = torch.cuda.device_count() with the device list applied (2 normally); "
            "Lightning launches the DDP ranks. Console script preferred when present. Devices "
            "override via the probe's --cuda-visible-devices flag."
        ),
    ),
)
