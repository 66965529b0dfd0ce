"""ml-mdm — Apple's Matryoshka Diffusion Models, text-to-image diffusion training.

Repository: https://github.com/apple/ml-mdm
Commit: dfa4718be3e327d8f7b46a2ab9f6c1c28e2f3ce0
Domain: image generation: text-to-image diffusion training (Matryoshka Diffusion Models)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

Every stage, C1 included, trains for one step through torchrun from the ml-mdm-matryoshka folder on
the repository's dummy test tar, with flan-t5-small (Hugging Face) as text encoder. The prepared
file list holds paths relative to ml-mdm-matryoshka/ (../benchmark_assets/...). The C1 run uses a
plain Run because the torchrun() helper would declare a GPU. The pinned stack pairs torch 2.2.2
with tensorflow 2.5.0.
"""

from pytest_reb import Asset, Repo, Run, hf_asset, torchrun

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/hf_home",
    "HF_HUB_CACHE": "{assets}/cache/hf_home/hub",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf_home/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/hf_home/hub",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TORCH_HOME": "{assets}/cache/torch",
}

#: The script and its options in every stage: one step of batch 1 on the dummy tar.
ONE_STEP = [
    "ml_mdm/clis/train_parallel.py",
    "--file-list={assets}/dataset/ml_mdm_dummy/sample_training_0.tsv",
    "--multinode=0", "--output-dir={out}/outputs",
    "--text-model={assets}/model/google__flan-t5-small",
    "--batch-size=1", "--num-training-steps=1", "--num_diffusion_steps=1",
    "--model_output_scale=0",
    "--config_path=configs/models/cc12m_64x64.yaml",
    "--fp16=0",
]

repo = Repo(
    "apple/ml-mdm",
    commit="dfa4718be3e327d8f7b46a2ab9f6c1c28e2f3ce0",
    imports_total=50,  # the C0 denominator
    domain="image generation: text-to-image diffusion training (Matryoshka Diffusion Models)",
    assets=[
        Asset(
            "ml_mdm_dummy", "dataset", "repo",
            path="ml-mdm-matryoshka/tests/test_files/images_00000.tar",
            note=(
                "copied to {assets}/dataset/ml_mdm_dummy with rebuilt images_00000.tsv and a file "
                "list sample_training_0.tsv whose paths are relative to ml-mdm-matryoshka/ "
                "(../benchmark_assets/dataset/ml_mdm_dummy/...)"
            ),
        ),
        hf_asset(
            "flan-t5-small", "google/flan-t5-small",
            note="text encoder, snapshot linked at {assets}/model/google__flan-t5-small",
        ),
    ],
    cpu=Run(
        ["{python}", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1",
         *ONE_STEP],
        cwd="{repo}/ml-mdm-matryoshka",
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="ml-mdm-matryoshka/ml_mdm/clis/train_parallel.py",
        note=(
            "torchrun is used even on CPU. Refuses to run unless the prepare stage status is "
            "success and the file list and model folder exist."
        ),
    ),
    single_gpu=torchrun(
        *ONE_STEP,
        nproc=1,
        cwd="{repo}/ml-mdm-matryoshka",
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="ml-mdm-matryoshka/ml_mdm/clis/train_parallel.py",
        note=(
            "Pre-check: torch must see CUDA with at least 1 device, else failure "
            "(insufficient_hardware). Same prepare-success requirement."
        ),
    ),
    multi_gpu=torchrun(
        *ONE_STEP,
        nproc=2,
        cwd="{repo}/ml-mdm-matryoshka",
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="ml-mdm-matryoshka/ml_mdm/clis/train_parallel.py",
        note=(
            "nproc = number of ids in SCIMLOPSBENCH_MULTI_GPU_DEVICES (0,1) unless "
            "SCIMLOPSBENCH_MULTI_GPU_NPROC is set; gate requires torch CUDA with >= 2 visible "
            "devices."
        ),
    ),
)
