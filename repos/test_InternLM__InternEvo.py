"""InternEvo — InternLM's LLM pre-training framework.

Repository: https://github.com/InternLM/InternEvo
Commit: a5b3972be7cc3448563b4ddfbb0cee736bdea7ef
Domain: LLM pre-training framework (InternLM2)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 train a 2-layer InternLM2 from random init
for one step through torchrun, from a Python config the probe wrote to {out}/minimal_config.py:
our setup step (shims/make_config.py) writes the same config there before the run. Network is
needed for a 64-example Alpaca sample (tokenized with the repository's tools/alpaca_tokenizer.py)
and the InternLM2 tokenizer.model only.
"""

from pathlib import Path

from pytest_reb import Asset, Repo, Run

#: Our rewrite of the official shim (the generated minimal_config.py), mounted read-only.
SHIM_DIR = str(Path(__file__).parent / "shims" / Path(__file__).stem)


def make_config(job_name: str) -> list[str]:
    """The setup step writing the probe's config (only JOB_NAME differs between stages)."""
    return ["{python}", "{shims}/make_config.py", "{out}/minimal_config.py",
            "--assets", "{assets}", "--job-name", job_name]


#: Environment shared by every stage.
ENV = {
    "TOKENIZERS_PARALLELISM": "false",
    "tensorboard_folder": "{out}/tensorboard",
    "HF_HOME": "{assets}/cache/hf",
    "TRANSFORMERS_CACHE": "{assets}/cache/hf/transformers",
    "HF_DATASETS_CACHE": "{assets}/cache/hf/datasets",
    "TORCH_HOME": "{assets}/cache/torch",
    "PIP_CACHE_DIR": "{assets}/cache/pip",
}

#: train.py on the probe's generated config, in both stages.
TRAIN = ["train.py", "--config", "{out}/minimal_config.py", "--launcher", "torch"]

repo = Repo(
    "InternLM/InternEvo",
    commit="a5b3972be7cc3448563b4ddfbb0cee736bdea7ef",
    imports_total=105,  # the C0 denominator
    domain="LLM pre-training framework (InternLM2)",
    assets=[
        Asset(
            "alpaca_sample", "dataset", "url",
            url="https://raw.githubusercontent.com/tatsu-lab/stanford_alpaca/main/alpaca_data.json",
            note=(
                "deterministic 64-example sample (--max-examples), tokenized with the repo's "
                "tools/alpaca_tokenizer.py under the report python into "
                "{assets}/dataset/alpaca_tokenized/{train,valid}/en/dataset.bin(+.meta)"
            ),
        ),
        Asset(
            "internlm2_tokenizer", "tokenizer", "hf",
            id="internlm/internlm2-7b",
            url="https://huggingface.co/internlm/internlm2-7b/resolve/main/tokenizer.model",
            files=["tokenizer.model"],
            note=(
                "copied to {assets}/model/tokenizer.model; only the tokenizer, no weights "
                "(training starts from random init)"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=1",
            "--master_port=29511",
            *TRAIN,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="train.py",
        setup=[make_config("scimlopsbench_single_gpu")],
        shim=(
            "The probe writes its own InternEvo Python config to {out}/minimal_config.py: "
            "INTERNLM2, 2 layers, hidden 256, 8 heads (8 KV), vocab 92544, seq_len 32, micro_num "
            "1, micro_bsz 1, total_steps 1, fp16, use_flash_attn False, all parallel sizes 1, "
            "checkpoint saving off, tensorboard on, train/valid folders and tokenizer path "
            "pointing at the prepared assets."
        ),
        shim_dir=SHIM_DIR,
        note=(
            "Master port override SCIMLOPSBENCH_SINGLE_GPU_PORT. InternEvo reads the "
            "tensorboard_folder env var. Our setup writes the config (job name "
            "scimlopsbench_single_gpu) with the asset paths {assets}/dataset/alpaca_tokenized/"
            "{train,valid} and {assets}/model/tokenizer.model, creates the tensorboard folder, "
            "and stops (like the probe) when the tokenized train folder is missing."
        ),
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port=29512",
            *TRAIN,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="train.py",
        setup=[make_config("scimlopsbench_multi_gpu")],
        shim=(
            "Same generated minimal config as the single-GPU stage (job name changed), written to "
            "{out}/minimal_config.py."
        ),
        note=(
            "Overrides: SCIMLOPSBENCH_MULTI_GPU_DEVICES (0,1), SCIMLOPSBENCH_MULTI_GPU_NPROC (2), "
            "SCIMLOPSBENCH_MULTI_GPU_PORT (29512). Gate: torch.cuda.is_available() and visible "
            "device count >= max(2, nproc). Our setup writes the config with job name "
            "scimlopsbench_multi_gpu."
        ),
        shim_dir=SHIM_DIR,
    ),
    skip={"cpu": "repo_not_supported"},
)
