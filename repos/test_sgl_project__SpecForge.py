"""SpecForge — trains EAGLE-3 draft models for speculative decoding in SGLang.

Repository: https://github.com/sgl-project/SpecForge
Commit: 077f286269a7e10ca7b18f7a33e49e8c6cbeac4f
Domain: LLM speculative-decoding draft-model training (EAGLE-3 for SGLang)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 train a one-layer EAGLE-3 draft for one step
against Qwen2.5-0.5B-Instruct (HF backend and sdpa attention, so no SGLang engine runs) on 8
ShareGPT samples built with the repository's prepare_data.py; the draft config is derived from the
repository's qwen2.5-7b-eagle3.json. C4 is pure data parallel. sglang[all]==0.5.6 pulls CUDA
12.8-era wheels.

Prepare downloads the Aeala/ShareGPT_Vicuna_unfiltered files raw (to
{assets}/dataset/ShareGPT_Vicuna_unfiltered/); a setup step of each stage (our
shims/.../prepare_sharegpt.py) takes the first 8 conversations of the train split and runs the
repository's own scripts/prepare_data.py on them (its --data-path option, as the stage has no
network), writing the sharegpt_train.jsonl that --train-data-path names into {out}. A second
setup step (shims/.../make_draft_config.py) derives the draft config as the official prepare did,
from configs/qwen2.5-7b-eagle3.json and the target model's AutoConfig, into
{out}/draft_config.json, which --draft-model-config names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, Synthetic, hf_asset

# Our setup script (prepare_sharegpt.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time.
TOKENS = {"{assets}/dataset/sharegpt_train.jsonl": ["{out}/sharegpt_train.jsonl"],
          "{assets}/model/draft_config.json": ["{out}/draft_config.json"]}

#: Both stages first build the 8-sample training file with the repository's prepare_data.py,
#: then derive the draft config (make_draft_config.py).
SETUP = [["{python}", "{shims}/prepare_sharegpt.py", "{repo}/scripts/prepare_data.py",
          "{assets}/dataset/ShareGPT_Vicuna_unfiltered", "{out}", "8"],
         ["{python}", "{shims}/make_draft_config.py", "{repo}/configs/qwen2.5-7b-eagle3.json",
          "{assets}/model/target_model", "{out}/draft_config.json"]]

#: What each stage's note adds after the reference note.
MADE = (" Our setup step builds {out}/sharegpt_train.jsonl with the repository's "
        "scripts/prepare_data.py from the first 8 conversations of the raw download, and "
        "{out}/draft_config.json with shims/make_draft_config.py (template + target AutoConfig).")

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "HF_DATASETS_CACHE": "{assets}/cache/huggingface/datasets",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TORCH_HOME": "{assets}/cache/torch",
    "TORCHINDUCTOR_CACHE_DIR": "{assets}/cache/torchinductor",
    "PYTHONPYCACHEPREFIX": "{assets}/cache/pycache",
    "WANDB_MODE": "disabled",
    "WANDB_DIR": "{assets}/cache/wandb",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_DATASETS_DISABLE_TELEMETRY": "1",
}

#: The script and its options in both GPU stages: a one-layer draft, one step, HF backend.
EAGLE3 = [
    "scripts/train_eagle3.py",
    "--target-model-path", "{assets}/model/target_model",
    "--draft-model-config", "{out}/draft_config.json",
    "--train-data-path", "{out}/sharegpt_train.jsonl",
    "--build-dataset-num-proc", "1",
    "--dataloader-num-workers", "0",
    "--output-dir", "{out}/output", "--num-epochs", "1", "--max-num-steps", "1",
    "--batch-size", "1", "--tp-size", "1", "--learning-rate", "1e-4",
    "--max-length", "256", "--chat-template", "qwen",
    "--cache-dir", "{assets}/cache/specforge_cache",
    "--attention-backend", "sdpa", "--target-model-backend", "hf",
    "--embedding-key", "model.embed_tokens.weight",
    "--eval-interval", "1000000000",
    "--save-interval", "1000000000",
    "--log-interval", "1",
    "--model-download-dir", "{assets}/cache/huggingface/hub",
]

repo = Repo(
    "sgl-project/SpecForge",
    commit="077f286269a7e10ca7b18f7a33e49e8c6cbeac4f",
    c2_compat=C2Variant(no_python="missing_report:none", timeout="timeout:none",
        crashed="runtime:empty", failed="runtime:empty", silent="runtime:empty",
        garbage="runtime"),
    c5_compat=CompatVariant(torch_needs_version=False, torch_needs_file=True,
        version_claim="string", torch_compare_empty=True,
        cuda_from="observed", gpu_observed_coerce=True),
    imports_total=52,  # the C0 denominator
    domain="LLM speculative-decoding draft-model training (EAGLE-3 for SGLang)",
    assets=[
        Asset(
            "sharegpt_train", "dataset", "hf_dataset",
            id="Aeala/ShareGPT_Vicuna_unfiltered",
            dest="dataset/ShareGPT_Vicuna_unfiltered/",  # the hub files; setup runs prepare_data.py
            note=(
                "built by the repo's own 'scripts/prepare_data.py --dataset sharegpt --sample-size "
                "8 --output-path {assets}/dataset' under the report python, giving "
                "{assets}/dataset/sharegpt_train.jsonl; overrides SPECFORGE_BENCH_DATASET / "
                "SPECFORGE_BENCH_DATASET_SAMPLE_SIZE"
            ),
        ),
        hf_asset(
            "target_model", "Qwen/Qwen2.5-0.5B-Instruct",
            dest="model/target_model",
            note=(
                "first downloadable of Qwen/Qwen2.5-0.5B-Instruct, -1.5B-Instruct, -3B-Instruct "
                "(override SPECFORGE_BENCH_MODEL_ID), at {assets}/model/target_model or the "
                "resolved HF snapshot folder"
            ),
        ),
        Asset(
            "draft_config", "config", "synthetic",
            path="{assets}/model/draft_config.json",
            dest="model/draft_config.json",
            synthetic=Synthetic.by_setup(
                "each stage's setup step (shims/.../make_draft_config.py) writes it into {out}"),
            note=(
                "derived from the repo's configs/qwen2.5-7b-eagle3.json with the target model's "
                "AutoConfig values copied in, num_hidden_layers 1, tie_word_embeddings false"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        ["{python}", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1",
         *EAGLE3],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="scripts/train_eagle3.py",
        note=(
            "--target-model-path is whatever prepare recorded as the model path (the link or the "
            "resolved snapshot)." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        ["{python}", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
         *EAGLE3],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="scripts/train_eagle3.py",
        note=(
            "Pure data parallel (tp-size 1). Overrides SPECFORGE_BENCH_MULTI_GPU_VISIBLE_DEVICES "
            "(0,1) and SPECFORGE_BENCH_MULTI_GPU_NPROC (2); gate counts GPUs with torch under the "
            "report python." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    skip={"cpu": "repo_not_supported"},
)
