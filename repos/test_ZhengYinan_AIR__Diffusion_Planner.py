"""Diffusion Planner — diffusion-transformer motion planning for autonomous driving (nuPlan).

Repository: https://github.com/ZhengYinan-AIR/Diffusion-Planner
Commit: 3558eaccee936f177ffbb3fb420540eccd8855e9
Domain: autonomous driving: diffusion-transformer motion planning (nuPlan)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages train a tiny model from scratch for one epoch on one synthetic .npz sample; the released
checkpoint is downloaded but unused. The commands keep the probe's repo-relative paths
(build_output/<stage>), which assumes {assets} = {repo}/benchmark_assets.
In C4 train_predictor.py divides the global batch of 2 by the world size.

The official prepare generated the sample (benchmark_assets/dataset/sample_0.npz and
train_list.json) with numpy under the report's python; here a setup step of every stage,
shims/test_ZhengYinan_AIR__Diffusion_Planner/make_sample.py, writes the same two files into
{out}/dataset, which --train_set and --train_set_list name instead.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, Synthetic, hf_asset

# Our setup script (make_sample.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to prepare: the sample is made by
#: the stage's setup step into {out}/dataset.
TOKENS = {
    "benchmark_assets/dataset": ["{out}/dataset"],
    "benchmark_assets/dataset/train_list.json": ["{out}/dataset/train_list.json"],
}

#: Before every stage: the one zero-filled .npz sample and its list.
SETUP = [["{python}", "{shims}/make_sample.py", "{out}/dataset"]]

#: What the setup step does, appended to each stage note.
MADE = (" Ours: the setup step {shims}/make_sample.py writes sample_0.npz (the official keys, "
        "shapes and dtypes, zeros) and train_list.json into {out}/dataset, the --train_set.")

#: The prepared sample, made by SETUP; passed after --save_dir.
DATA = [
    "--train_set", "{out}/dataset",
    "--train_set_list", "{out}/dataset/train_list.json",
]

#: train_predictor.py's options after --batch_size, in every stage: one epoch of a tiny model.
TINY = [
    "--train_epochs", "1", "--warm_up_epoch", "1", "--num_workers", "0",
    "--use_data_augment", "false", "--use_wandb", "false",
    "--notes", "scimlopsbench", "--agent_num", "2",
    "--predicted_neighbor_num", "1",
    "--time_len", "2", "--future_len", "8", "--lane_num", "2",
    "--lane_len", "4", "--route_num", "1", "--route_len", "4",
    "--static_objects_num", "1", "--encoder_depth", "1", "--decoder_depth", "1",
    "--num_heads", "2", "--hidden_dim", "64",
]

repo = Repo(
    "ZhengYinan-AIR/Diffusion-Planner",
    commit="3558eaccee936f177ffbb3fb420540eccd8855e9",
    c2_compat=C2Variant(no_device="fails", failed_exit="empty",
        no_python="missing_report:empty", missing="runtime:empty",
        not_executable="runtime:empty", directory="runtime:empty", crashed="runtime:empty",
        failed="runtime:empty", silent="runtime", garbage="runtime:empty"),
    c5_compat=CompatVariant(directory_crash=True, silent_python_ok=False, version_strip=True,
        torch_strip=True, torch_import="always", cuda_from="observed",
        gpu_observed_coerce="numbers"),  # an int, or int() of a float
    imports_total=24,  # the C0 denominator
    domain="autonomous driving: diffusion-transformer motion planning (nuPlan)",
    assets=[
        Asset(
            "synthetic_sample", "dataset", "synthetic",
            path="{assets}/dataset",
            files=["sample_0.npz", "train_list.json"],
            dest="dataset",
            synthetic=Synthetic.by_setup(
                "each stage's setup step (shims/.../make_sample.py) writes it into {out}/dataset"),
            note=(
                "one random .npz sample with the keys DiffusionPlannerData expects, generated "
                "under the report python"
            ),
        ),
        hf_asset(
            "Diffusion-Planner", "ZhengYinan2001/Diffusion-Planner",
            files=["args.json", "model.pth"],
            dest="model/",
            optional=True,
            note=(
                "fetched by URL "
                "(https://huggingface.co/ZhengYinan2001/Diffusion-Planner/resolve/main/<file>) "
                "into {assets}/model; recorded as the model asset but not used, the runs train a "
                "tiny model from scratch"
            ),
        ),
    ],
    cpu=Run(
        [
            "{python}", "train_predictor.py",
            "--name", "scimlopsbench_cpu",
            "--save_dir", "build_output/cpu",
            *DATA,
            "--device", "cpu", "--ddp", "false", "--batch_size", "1",
            *TINY,
        ],
        env={"CUDA_VISIBLE_DEVICES": ""},
        timeout=600,
        entrypoint="train_predictor.py",
        note=(
            "Paths are repo-relative ({out} = build_output/cpu, {assets} = benchmark_assets). "
            "Before the run the probe checks (no install) that timm, tensorboard and wandb import "
            "under the report python; otherwise failure (deps). warm_up_epoch 1 avoids a scheduler "
            "assertion with one epoch." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        [
            "{python}", "train_predictor.py",
            "--name", "scimlopsbench_single_gpu",
            "--save_dir", "build_output/single_gpu",
            *DATA,
            "--device", "cuda", "--ddp", "false", "--batch_size", "1",
            *TINY,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0"},
        timeout=600,
        entrypoint="train_predictor.py",
        note="Same import pre-check (timm, tensorboard, wandb)." + MADE,
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nnodes", "1", "--nproc-per-node", "2", "--standalone",
            "train_predictor.py",
            "--name", "scimlopsbench_multi_gpu",
            "--save_dir", "build_output/multi_gpu",
            *DATA,
            "--device", "cuda", "--batch_size", "2",
            *TINY,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1"},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="train_predictor.py",
        note=(
            "No --ddp flag is passed (the repo default applies). Global batch 2 gives 1 per rank "
            "because train_predictor.py divides by world size. Same import pre-check; GPU gate "
            "counts devices with torch under the report python." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
