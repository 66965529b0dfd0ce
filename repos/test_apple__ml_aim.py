"""AIM — Apple's autoregressive image models (AIM-v1 attentive-probe evaluation).

Repository: https://github.com/apple/ml-aim
Commit: bd9e06893f3ad68bda56b34ac2158fda2680b7fc
Domain: vision backbone (AIM) attentive-probe evaluation
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported; the entrypoint always initialises torch.distributed
with NCCL). C3 and C4 evaluate aim-600M (multi-GB checkpoints from the Hugging Face hub) on a
one-image ImageFolder through torchrun. A sitecustomize shim on PYTHONPATH makes AIMMixin.forward
return a pair, because main_attnprobe.py unpacks two values at this commit.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official shim (sitecustomize.py: the forward-return patch),
# mounted read-only at {repo}/benchmark_scripts.

#: Environment shared by every stage.
ENV = {
    "SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT": "1",
    "PYTHONPATH": "{repo}/benchmark_scripts",
    "HF_HOME": "{assets}/cache/huggingface",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "WANDB_MODE": "offline",
    "WANDB_DIR": "{out}/wandb",
    "TMPDIR": "{out}/tmp",
    "OMP_NUM_THREADS": "1",
}

#: The script and its options in both stages: aim-600M's last-layer probe on one image.
ATTNPROBE = [
    "aim-v1/main_attnprobe.py",
    "--model", "aim-600M", "--batch-size", "1", "--num_workers", "0",
    "--data-path", "{assets}/dataset/imagefolder_1img",
    "--probe-layers", "last",
    "--backbone-ckpt-path", "{assets}/model/aim-v1/aim-600M-last/backbone.pth",
    "--head-ckpt-path", "{assets}/model/aim-v1/aim-600M-last/head.pth",
]

repo = Repo(
    "apple/ml-aim",
    commit="bd9e06893f3ad68bda56b34ac2158fda2680b7fc",
    c2_compat=C2Variant(failed_exit="fails", missing="path_hallucination:empty",
        not_executable="path_hallucination:empty", directory="path_hallucination:empty",
        timeout="timeout:empty", crashed="runtime:empty", failed="runtime:empty",
        silent="success:empty", garbage="success:empty"),
    c5_compat=CompatVariant(version_claim="string", version_strip=True, torch_strip=True,
        torch_compare_empty=True, cuda_from="observed"),
    imports_total=24,  # the C0 denominator
    domain="vision backbone (AIM) attentive-probe evaluation",
    assets=[
        Asset(
            "imagefolder_1img", "dataset", "url",
            url="https://raw.githubusercontent.com/pytorch/hub/master/images/dog.jpg",
            dest="dataset/imagefolder_1img/val/class0/dog.jpg",
            note=(
                "one-image ImageFolder at {assets}/dataset/imagefolder_1img/val/class0/dog.jpg "
                "(ImageNet is not public)"
            ),
        ),
        hf_asset(
            "aim-600M_attnprobe", "apple/AIM",
            files=[
                "aim_600m_2bimgs_attnprobe_backbone.pth",
                "aim_600m_2bimgs_attnprobe_head_last_layers.pth",
            ],
            dest="model/aim-v1/aim-600M-last/",
            rename={"aim_600m_2bimgs_attnprobe_backbone.pth": "backbone.pth",
                    "aim_600m_2bimgs_attnprobe_head_last_layers.pth": "head.pth"},
            note=(
                "multi-GB, downloaded by https://huggingface.co/apple/AIM/resolve/main/<file> URLs "
                "and stored as {assets}/model/aim-v1/aim-600M-last/backbone.pth and head.pth; "
                "prepare options allow aim-1B/3B/7B and probe layers 'best'; paths are also "
                "written to {assets}/manifest.env which the stages source"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nnodes=1", "--nproc-per-node=1",
            *ATTNPROBE,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="aim-v1/main_attnprobe.py",
        shim=(
            "A sitecustomize.py in the probe folder (on PYTHONPATH, active when "
            "SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT=1) puts aim-v1 on sys.path and wraps "
            "AIMMixin.forward so that a single return value becomes (logits, None), because "
            "main_attnprobe.py unpacks a pair at this commit."
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nnodes=1", "--nproc-per-node=2",
            *ATTNPROBE,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="aim-v1/main_attnprobe.py",
        shim="Same sitecustomize forward-return patch as the single-GPU stage.",
        shim_dir=SHIMS,
        note=(
            "nproc defaults to the number of ids in the device list (probe flags "
            "--cuda-visible-devices, --nproc-per-node); the gate counts GPUs with torch under the "
            "report python."
        ),
    ),
    skip={"cpu": "repo_not_supported"},
)
