"""Sapiens (Meta) — foundation models for human-centric vision.

Repository: https://github.com/facebookresearch/sapiens
Commit: 08dce797f7b40f5b41388f518cac85535c3f5d13
Domain: human-centric vision foundation models (MMSeg surface-normal fine-tune)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages fine-tune the 0.3B surface-normal model for one iteration with the vendored MMSeg
(seg/tools/train.py) on one sample of the toy dataset, from the pretrain checkpoint (about 1.2 GB);
both come from the Hugging Face hub. norm_cfg.type=BN replaces SyncBN so C1 and C3 need no process
group. The vendored mmcv ops must be compiled against the installed torch/CUDA.

The prepared view holds the raw toy dataset download at {assets}/dataset/sapiens_toy_dataset/;
each stage's setup step (shims/prune_toy_dataset.py) does what the official prepare did to it:
it keeps one sample, the first image by name and the mask and normal map of the same stem (from
the download's images/, masks/, normals/ folders or its zip archives), in
{out}/sapiens_toy_dataset_min1, which the run's dataset_train.data_root names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script that cuts the downloaded toy dataset down to its one-sample copy.

#: How this module spells what the reference argv leaves to run time: the one-sample dataset is
#: the copy the setup step wrote into {out}.
TOKENS = {
    "dataset_train.data_root={assets}/dataset/sapiens_toy_dataset_min1": [
        "dataset_train.data_root={out}/sapiens_toy_dataset_min1"],
}

#: Every stage first prunes the downloaded toy dataset to one sample (the official prepare).
SETUP = [[
    "{python}", "{shims}/prune_toy_dataset.py",
    "--raw", "{assets}/dataset/sapiens_toy_dataset", "--out", "{out}/sapiens_toy_dataset_min1",
]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step copies the one sample (first image by name, its mask and normal map) out of "
    "the raw download into {out}/sapiens_toy_dataset_min1."
)

#: Environment shared by every stage.
ENV = {
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HOME": "{assets}/cache/hf_home",
    "TORCH_HOME": "{assets}/cache/torch_home",
    "TORCH_EXTENSIONS_DIR": "{assets}/cache/torch_extensions",
    "MPLCONFIGDIR": "{assets}/cache/mpl",
    "NUMBA_CACHE_DIR": "{assets}/cache/numba",
    "HOME": "{assets}/cache/home",
    "TMPDIR": "{assets}/cache/tmp",
    "TMP": "{assets}/cache/tmp",
    "TEMP": "{assets}/cache/tmp",
}

#: The script and config every stage trains.
TRAIN = [
    "seg/tools/train.py",
    "seg/configs/sapiens_normal/normal_general/sapiens_0.3b_normal_general-1024x768.py",
]

#: The config overrides of every stage: one sample, batch 1, one epoch, plain BN, no eval.
CFG_OPTIONS = [
    "--cfg-options", "dataset_train.data_root={out}/sapiens_toy_dataset_min1",
    "model.backbone.init_cfg.checkpoint={assets}/model/sapiens_0.3b_pretrain/sapiens_0.3b_epoch_1600_clean.pth",
    "train_dataloader.batch_size=1",
    "train_dataloader.num_workers=0",
    "train_dataloader.persistent_workers=False",
    "train_dataloader.dataset.metainfo.from_file=seg/configs/_base_/datasets/render_people.py",
    "norm_cfg.type=BN",
    "train_cfg.max_epochs=1",
    "train_cfg.val_interval=999999",
    "default_hooks.logger.interval=1",
    "default_hooks.checkpoint.interval=999999",
    "default_hooks.visualization.interval=999999",
]

repo = Repo(
    "facebookresearch/sapiens",
    commit="08dce797f7b40f5b41388f518cac85535c3f5d13",
    c2_compat=C2Variant(failed_exit="unavailable", no_python="path_hallucination",
        missing="path_hallucination", not_executable="path_hallucination", directory="unknown",
        timeout="unknown", crashed="runtime", failed="runtime", silent="runtime",
        garbage="unknown"),
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, version_claim="truthy",
        torch_claim="truthy", gpu_count_coerce=True, gpu_observed_coerce=True),
    imports_total=186,  # the C0 denominator
    domain="human-centric vision foundation models (MMSeg surface-normal fine-tune)",
    assets=[
        Asset(
            "sapiens_toy_dataset_min1", "dataset", "hf_dataset",
            id="facebook/sapiens_toy_dataset",
            dest="dataset/sapiens_toy_dataset/",
            note=(
                "downloaded/extracted and pruned to one sample with images/, masks/, normals/ at "
                "{assets}/dataset/sapiens_toy_dataset_min1"
            ),
        ),
        hf_asset(
            "sapiens-pretrain-0.3b", "facebook/sapiens-pretrain-0.3b",
            files=["sapiens_0.3b_epoch_1600_clean.pth"],
            dest="model/sapiens_0.3b_pretrain/",
            note=(
                "about 1.2 GB; pattern-filtered snapshot_download (fallback "
                "sapiens_0.3b_epoch_1600.pth), copied to {assets}/model/sapiens_0.3b_pretrain/; "
                "the stages take the first *.pth there"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", *TRAIN, "--work-dir", "{out}/work_dir", *CFG_OPTIONS],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="seg/tools/train.py",
        note=(
            "norm_cfg.type=BN replaces SyncBN so the run works without a process group; one sample "
            "with batch 1 and max_epochs 1 gives one iteration. The stage writes a placeholder "
            "failure result first, so an interrupted run still counts as failed. Timeout override "
            "SCIMLOPSBENCH_CPU_TIMEOUT_SEC." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        ["{python}", *TRAIN, "--work-dir", "{out}/work_dir", *CFG_OPTIONS],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="seg/tools/train.py",
        note="Runner flag --min-gpus 1 checks the GPU count under the report python first."
             + SETUP_NOTE,
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nproc_per_node=2",
            "--master_port=29500",
            *TRAIN,
            "--launcher", "pytorch", "--work-dir", "{out}/work_dir",
            *CFG_OPTIONS,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="seg/tools/train.py",
        note=(
            "Overrides: SCIMLOPSBENCH_MULTI_GPU_DEVICES (0,1; nproc = number of ids), "
            "SCIMLOPSBENCH_MULTI_GPU_MASTER_PORT (29500). Runner flag --min-gpus 2." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
