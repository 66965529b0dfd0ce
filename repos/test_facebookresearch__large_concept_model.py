"""Large Concept Models (Meta) — language modelling in the SONAR sentence-embedding space.

Repository: https://github.com/facebookresearch/large_concept_model
Commit: fd7db8022113ae2d2ff1219d9a4cb4def897e3ff
Domain: LLM research: Large Concept Models in SONAR embedding space (fairseq2)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All stages pretrain a toy_base_lcm for one step on a synthetic parquet dataset of random SONAR-like
embeddings with the repository's dummy normalizer, so nothing is downloaded. C4 is DDP through
torchrun (-m lcm.train). fairseq2n is a native library whose wheel must match the exact torch
build.

The official prepare wrote the dataset ({assets}/dataset/lcm_toy_pretraining) with pyarrow and
stopes under the report's python; here a setup step of every stage,
shims/test_facebookresearch__large_concept_model/make_parquet.py, writes the same dataset (split
partitions, 8 + 4 rows of 4 sentences, 1024-dim embeddings of std 0.006) into
{out}/lcm_toy_pretraining, which the parquet_path overrides name instead.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, Synthetic

# Our setup script (make_parquet.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to prepare: the dataset is made by
#: the stage's setup step.
TOKENS = {
    f"++trainer.{part}_data[0].parquet_path={{assets}}/dataset/lcm_toy_pretraining": [
        f"++trainer.{part}_data[0].parquet_path={{out}}/lcm_toy_pretraining"]
    for part in ("training", "validation")
}

#: Before every stage: the toy parquet dataset.
SETUP = [["{python}", "{shims}/make_parquet.py", "{out}/lcm_toy_pretraining"]]

#: What the setup step does, appended to each stage note.
MADE = ("Ours: the setup step {shims}/make_parquet.py writes the toy parquet dataset into "
        "{out}/lcm_toy_pretraining, which both parquet_path overrides name.")

#: lcm.train's overrides in every stage: one toy_base_lcm step on the synthetic data, no FSDP.
ONE_STEP = [
    "launcher=standalone",
    "+pretrain=mse",
    "+trainer.use_submitit=false",
    "hydra.run.dir={out}/hydra",
    "++trainer.output_dir={out}/train_out",
    "++trainer.model_arch=toy_base_lcm",
    "++trainer.model_arch_overrides={sonar_normalizer_name:dummy_sonar_normalizer}",
    "++trainer.max_steps=1",
    "++trainer.use_fsdp=false",
    "++trainer.dtype=torch.float32",
    "++trainer.data_loading_config.batch_size=1",
    "++trainer.data_loading_config.max_tokens=0",
    "++trainer.validation_data_loading_config.batch_size=1",
    "++trainer.validation_data_loading_config.max_tokens=0",
    "++trainer.training_data[0].parquet_path={out}/lcm_toy_pretraining",
    "++trainer.validation_data[0].parquet_path={out}/lcm_toy_pretraining",
    "++trainer.validate_every_n_steps=1000000",
    "++trainer.checkpoint_every_n_steps=1000000",
    "++trainer.save_model_every_n_steps=1000000",
    "++trainer.publish_metrics_every_n_steps=1",
]

repo = Repo(
    "facebookresearch/large_concept_model",
    commit="fd7db8022113ae2d2ff1219d9a4cb4def897e3ff",
    c2_compat=C2Variant(no_device="unavailable", no_python="insufficient_hardware"),
    # CUDA is unavailable only where the cuda stage's observed block says false
    c5_compat=CompatVariant(torch_import="always", cuda_from="observed",
        gpu_observed_coerce=True, torch_compare_empty=True),  # torch "" is compared too
    imports_total=85,  # the C0 denominator
    domain="LLM research: Large Concept Models in SONAR embedding space (fairseq2)",
    assets=[
        Asset(
            "lcm_toy_pretraining", "dataset", "synthetic",
            path="{assets}/dataset/lcm_toy_pretraining",
            dest="dataset/lcm_toy_pretraining",
            synthetic=Synthetic.by_setup("each stage's setup step (shims/.../make_parquet.py) "
                                         "writes it with pyarrow into {out}"),
            note=(
                "parquet dataset partitioned by split (8 train rows, 4 validation rows; 4 "
                "sentences each; 1024-dim random SONAR-like embeddings, std 0.006) written with "
                "pyarrow and stopes under the report python"
            ),
        ),
        Asset(
            "dummy_sonar_normalizer", "model", "repo",
            path="lcm/cards/mock_data/dummy_normalizer.pt",
            dest="model/dummy_sonar_normalizer.pt",
            note=(
                "copied to {assets}/model/dummy_sonar_normalizer.pt; the run itself uses the "
                "dummy_sonar_normalizer asset card and a toy_base_lcm architecture, so nothing is "
                "downloaded"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", "-m", "lcm.train", *ONE_STEP, "++trainer.fake_gang_device=cpu"],
        env={"CUDA_VISIBLE_DEVICES": ""},
        timeout=600,
        entrypoint="lcm/train/__main__.py",
        note=MADE,
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        ["{python}", "-m", "lcm.train", *ONE_STEP, "++trainer.fake_gang_device=cuda:0"],
        env={"CUDA_VISIBLE_DEVICES": "0"},
        timeout=600,
        min_gpus=1,
        entrypoint="lcm/train/__main__.py",
        note=(
            "Pre-check: torch must report CUDA available with at least one device, else failure "
            "(insufficient_hardware). " + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nnodes=1", "--nproc-per-node=2", "-m", "lcm.train",
            *ONE_STEP,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1"},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="lcm/train/__main__.py",
        note=(
            "No fake_gang_device override; DDP because use_fsdp=false. nproc = number of ids in "
            "SCIMLOPSBENCH_MULTI_GPU_DEVICES (default 0,1). " + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
)
