"""ml-mdm — Apple's Matryoshka Diffusion Models, text-to-image diffusion training.

Repository: https://github.com/apple/ml-mdm
Commit: dfa4718be3e327d8f7b46a2ab9f6c1c28e2f3ce0
Domain: image generation: text-to-image diffusion training (Matryoshka Diffusion Models)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

Every stage, C1 included, trains for one step through torchrun from the ml-mdm-matryoshka folder on
the repository's dummy test tar, with flan-t5-small (Hugging Face) as text encoder. The C1 run
uses a plain Run because the torchrun() helper would declare a GPU. The pinned stack pairs torch
2.2.2 with tensorflow 2.5.0.

The prepared view holds the tar itself at {assets}/dataset/ml_mdm_dummy/images_00000.tar. The
official prepare rebuilt the tar index and the file list around its copy, with paths relative to
ml-mdm-matryoshka/ (../benchmark_assets/...); each stage's setup step (shims/make_file_list.py)
writes the same two files into {out}/ml_mdm_dummy from the repository's own index, with absolute
paths to the prepared tar, and the run reads that file list.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset, torchrun

# Our setup script that writes the tar index and file list the stages read.

#: How this module spells what the reference argv leaves to run time: the file list is the one
#: the setup step wrote into {out}.
TOKENS = {
    "--file-list={assets}/dataset/ml_mdm_dummy/sample_training_0.tsv": [
        "--file-list={out}/ml_mdm_dummy/sample_training_0.tsv"],
}

#: Every stage first rebuilds the index and file list around the prepared tar (official prepare).
SETUP = [[
    "{python}", "{shims}/make_file_list.py",
    "--tar", "{assets}/dataset/ml_mdm_dummy/images_00000.tar",
    "--index", "{repo}/ml-mdm-matryoshka/tests/test_files/images_00000.tsv",
    "--out", "{out}/ml_mdm_dummy",
]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step writes images_00000.tsv (the repository's rows, tar = the prepared tar) and "
    "sample_training_0.tsv naming it into {out}/ml_mdm_dummy."
)

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
    "--file-list={out}/ml_mdm_dummy/sample_training_0.tsv",
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
    c2_compat=C2Variant(no_python="missing_report:empty", missing="path_hallucination:empty",
        not_executable="unknown:empty", directory="unknown:empty", timeout="timeout:empty",
        crashed="runtime:empty", failed="runtime:empty", silent="runtime:empty",
        garbage="runtime:empty"),
    # str(python_version or "").strip(); torch from a JSON probe (unreadable output: version
    # ""), any non-null torch_version is compared, stripped, even with ""
    c5_compat=CompatVariant(strip_path=True, version_claim="truthy", version_strip=True,
        torch_claim="text_any", torch_strip=True, torch_import="if_not_null",
        torch_compare_empty=True, torch_probe="json", probe_garbage="ignored",
        gpu_count_coerce=True, gpu_observed_coerce=True, ddp_underclaim=True),
    imports_total=50,  # the C0 denominator
    # the official pyright stage's own heuristic for this mono-repo: its pyproject roots
    # (find . -maxdepth 2 -name pyproject.toml); the common one finds nothing to analyse here
    c0_targets=("ml-mdm", "ml-mdm-matryoshka"),
    domain="image generation: text-to-image diffusion training (Matryoshka Diffusion Models)",
    assets=[
        Asset(
            "ml_mdm_dummy", "dataset", "repo",
            path="ml-mdm-matryoshka/tests/test_files/images_00000.tar",
            dest="dataset/ml_mdm_dummy",
            note=(
                "copied to {assets}/dataset/ml_mdm_dummy with rebuilt images_00000.tsv and a file "
                "list sample_training_0.tsv whose paths are relative to ml-mdm-matryoshka/ "
                "(../benchmark_assets/dataset/ml_mdm_dummy/...)"
            ),
        ),
        hf_asset(
            "flan-t5-small", "google/flan-t5-small",
            dest="model/google__flan-t5-small",
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
            "success and the file list and model folder exist." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
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
            "(insufficient_hardware). Same prepare-success requirement." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
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
            "devices." + SETUP_NOTE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
