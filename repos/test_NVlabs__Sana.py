"""Sana — efficient high-resolution text-to-image generation with a linear DiT.

Repository: https://github.com/NVlabs/Sana
Commit: 08c656c373ab58991452aa1e3fc912428f32ae9f
Domain: image generation: text-to-image linear-DiT training
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 train one step from the Sana 600M checkpoint
(about 2.4 GB) on the toy webdataset with precomputed VAE features, both from the Hugging Face hub;
train.py may still fetch the Gemma-2-2b-it text encoder and the DC-AE VAE at run time.

The official harness helpers are reproduced by our setup steps (shims/test_NVlabs__Sana): a copy of
the 600M config with an empty resume_from set to 'latest' ({out}/config_patched.yaml), the work
folders, and a zero null-embedding .pth so train.py does not encode "" with Gemma. The random
master port is our free {port}; the checkpoint is the first sorted checkpoints/*.pth of the
prepared model folder, which is also the shortest name the official probe picked
(Sana_600M_1024px.pth sorts before Sana_600M_1024px_MultiLing.pth).
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official helpers (patch_train_config.py, ensure_null_embed.py).

#: The prepared checkpoint: the first sorted checkpoints/*.pth ('X.pth' sorts before 'X_*.pth',
#: so this is the shortest name the official probe chose).
CHECKPOINT = "{glob:{assets}/model/sana_600m_1024px/checkpoints/*.pth}"

#: How this module spells what the reference argv leaves to run time.
TOKENS = {
    "<random 20000-29999>": ["{port}"],
    "--load_from={assets}/model/sana_600m_1024px/checkpoints/<ckpt>.pth": [
        f"--load_from={CHECKPOINT}"],
}

#: The official helpers, run before torchrun in both stages: the patched config copy, the
#: folders the probe made, then the zero null embedding (Gemma-2-2b-it: 300 tokens x 2304).
SETUP = [
    ["{python}", "{shims}/patch_train_config.py",
     "{repo}/configs/sana_config/1024ms/Sana_600M_img1024.yaml", "{out}/config_patched.yaml"],
    ["mkdir", "-p", "{out}/work_dir", "{out}/null_embed_root", "{out}/valid_prompt_embed_root"],
    ["{python}", "{shims}/ensure_null_embed.py",
     "--path={out}/null_embed_root/null_embed_diffusers_gemma-2-2b-it_300token_2304.pth",
     "--max-length=300", "--hidden-size=2304"],
]

#: What our setup does, after the reference note.
OURS = (
    " Ours: setup runs shims/patch_train_config.py (the config copy; it fails the stage instead "
    "of falling back, as a config it cannot read could not train either), makes work_dir, "
    "null_embed_root and valid_prompt_embed_root, then shims/ensure_null_embed.py under the "
    "report python; --master_port is {port} and --load_from the first checkpoints/*.pth."
)

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}",
    "HOME": "{assets}/cache/home",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TMPDIR": "{assets}/cache/tmp",
    "HF_HOME": "{assets}/cache/huggingface",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
}

#: train.py and its options before --name, in both stages.
TRAIN = [
    "train_scripts/train.py",
    "--config_path={out}/config_patched.yaml",
    "--work_dir={out}/work_dir", "--report_to=tensorboard",
]

#: The options after --name: one step of batch 1 on the toy data from the prepared checkpoint.
ONE_STEP = [
    "--data.data_dir=[{assets}/dataset/toy_data]",
    "--data.type=SanaWebDatasetMS", "--data.load_vae_feat=true",
    "--load_from=" + CHECKPOINT,
    "--train.train_batch_size=1", "--train.num_workers=0",
    "--train.early_stop_hours=0", "--train.visualize=false",
    "--train.local_save_vis=false",
    "--train.null_embed_root={out}/null_embed_root",
    "--train.valid_prompt_embed_root={out}/valid_prompt_embed_root",
]

repo = Repo(
    "NVlabs/Sana",
    commit="08c656c373ab58991452aa1e3fc912428f32ae9f",
    c2_compat=C2Variant(no_python="unknown", missing="unknown", not_executable="unknown"),
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=2, directory_crash=True,
        torch_needs_version=False, version_claim="truthy", compare_empty_observed=True,
        torch_claim="truthy", torch_import="always", gpu_count_coerce=True,
        gpu_observed_coerce=True),
    imports_total=124,  # the C0 denominator
    domain="image generation: text-to-image linear-DiT training",
    assets=[
        Asset(
            "toy_data", "dataset", "hf_dataset",
            id="Efficient-Large-Model/toy_data",
            dest="dataset/toy_data",
            note=(
                "full snapshot (the docs' toy webdataset) linked at {assets}/dataset/toy_data; "
                "used with data.load_vae_feat=true"
            ),
        ),
        hf_asset(
            "Sana_600M_1024px", "Efficient-Large-Model/Sana_600M_1024px",
            files=["checkpoints/*.pth (shortest matching name)"],
            dest="model/sana_600m_1024px",
            note=(
                "hf_hub_download of one .pth (about 2.4 GB) into a snapshot folder linked at "
                "{assets}/model/sana_600m_1024px; HF_TOKEN only if gated. train.py may still pull "
                "the Gemma-2-2b-it text encoder and DC-AE VAE through the HF cache at run time; "
                "these are not prepared"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=1",
            "--master_port={port}",
            *TRAIN, "--name=scimlops_single_gpu", *ONE_STEP,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="train_scripts/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        shim=(
            "Two harness helpers run first: one copies "
            "configs/sana_config/1024ms/Sana_600M_img1024.yaml to {out}/config_patched.yaml, "
            "replacing an empty resume_from value with 'latest'; the other writes a zero "
            "null-embedding file "
            "{out}/null_embed_root/null_embed_diffusers_gemma-2-2b-it_300token_2304.pth (zeros of "
            "1x300x2304 plus an all-ones mask) via 'ensure_null_embed.py --path=... "
            "--max-length=300 --hidden-size=2304', chained with && before torchrun."
        ),
        note=(
            "One step comes from --train.early_stop_hours=0 with batch size 1. The master port is "
            "random in 20000-29999 and --load_from is the shortest-named checkpoints/*.pth that "
            "prepare downloaded. If patching fails the original config path is used." + OURS
        ),
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port={port}",
            *TRAIN, "--name=scimlops_multi_gpu", *ONE_STEP,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="train_scripts/train.py",
        setup=SETUP,
        shim_dir=SHIMS,
        shim="Same patched config and null-embedding helpers as the single-GPU stage.",
        note=(
            "The chain starts with an inline torch.cuda.device_count()>=2 check (&&). Overrides: "
            "SCIMLOPSBENCH_MULTI_GPU_CUDA_VISIBLE_DEVICES (0,1), SCIMLOPSBENCH_MULTI_GPU_NPROC (2)."
            + OURS
        ),
    ),
    skip={"cpu": "repo_not_supported"},
)
