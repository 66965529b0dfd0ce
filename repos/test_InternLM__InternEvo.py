"""InternEvo — InternLM's LLM pre-training framework.

Repository: https://github.com/InternLM/InternEvo
Commit: a5b3972be7cc3448563b4ddfbb0cee736bdea7ef
Domain: LLM pre-training framework (InternLM2)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 train a 2-layer InternLM2 from random init
for one step through torchrun, from a Python config the probe wrote to {out}/minimal_config.py.
Network is needed for the Stanford Alpaca JSON and the InternLM2 tokenizer.model only. The official
prepare step tokenised the first 64 Alpaca examples with the repository's tools/alpaca_tokenizer.py
into {assets}/dataset/alpaca_tokenized; here --reb-prepare fetches the raw JSON to
{assets}/dataset/alpaca_data.json and each stage's setup does the rest before the run:
shims/tokenize_alpaca.py keeps the first 64 records and runs that same tool under the report's
python into {out}/alpaca_tokenized, then shims/make_config.py writes the config naming it.
"""

from pytest_reb import SHIMS, Asset, CompatVariant, Repo, Run

# Our rewrite of the official shim (the generated minimal_config.py), mounted read-only.


#: The official prepare's post-processing, as a setup step: the first 64 Alpaca records
#: tokenised with the repository's tools/alpaca_tokenizer.py (split ratio 0.1) into {out}.
TOKENIZE = ["{python}", "{shims}/tokenize_alpaca.py", "{assets}/dataset/alpaca_data.json",
            "{out}/alpaca_tokenized", "--tokenizer", "{assets}/model/tokenizer.model",
            "--tool", "{repo}/tools/alpaca_tokenizer.py", "--max-examples", "64"]


def make_config(job_name: str) -> list[str]:
    """The setup step writing the probe's config (only JOB_NAME differs between stages)."""
    return ["{python}", "{shims}/make_config.py", "{out}/minimal_config.py",
            "--assets", "{assets}", "--dataset", "{out}/alpaca_tokenized",
            "--job-name", job_name]


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
    # torch is probed whenever the path is an executable file, even if the version probe failed
    c5_compat=CompatVariant(torch_needs_version=False, torch_needs_file=True,
        version_claim="string", version_strip=True, torch_strip=True,
        # torch is probed as plain text (its last line), compared even when it is "";
        # only the device-count fallback is JSON
        torch_compare_empty=True, cuda_from="observed_bool", gpu_from="stage_or_probe",
        # where the stage gave no CUDA answer or no count, both come from its own probe
        cuda_fallback="probe_pair",
        gpu_observed_coerce=True),
    imports_total=105,  # the C0 denominator
    domain="LLM pre-training framework (InternLM2)",
    assets=[
        Asset(
            "alpaca_sample", "dataset", "url",
            url="https://raw.githubusercontent.com/tatsu-lab/stanford_alpaca/main/alpaca_data.json",
            dest="dataset/",  # raw; setup tokenises
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
            dest="model/tokenizer.model",
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
        setup=[TOKENIZE, make_config("scimlopsbench_single_gpu")],
        shim=(
            "The probe writes its own InternEvo Python config to {out}/minimal_config.py: "
            "INTERNLM2, 2 layers, hidden 256, 8 heads (8 KV), vocab 92544, seq_len 32, micro_num "
            "1, micro_bsz 1, total_steps 1, fp16, use_flash_attn False, all parallel sizes 1, "
            "checkpoint saving off, tensorboard on, train/valid folders and tokenizer path "
            "pointing at the prepared assets."
        ),
        shim_dir=SHIMS,
        note=(
            "Master port override SCIMLOPSBENCH_SINGLE_GPU_PORT. InternEvo reads the "
            "tensorboard_folder env var. Our setup first tokenises the Alpaca sample as the "
            "official prepare did (shims/tokenize_alpaca.py: the first 64 records of "
            "{assets}/dataset/alpaca_data.json, the repository's tools/alpaca_tokenizer.py with "
            "--split_ratio 0.1, into {out}/alpaca_tokenized/{train,valid}/en/dataset.bin(+.meta); "
            "it fails when a file is missing or empty), then writes the config (job name "
            "scimlopsbench_single_gpu) with the folders {out}/alpaca_tokenized/{train,valid} and "
            "{assets}/model/tokenizer.model, creates the tensorboard folder, and stops (like the "
            "probe) when the tokenized train folder is missing."
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
        setup=[TOKENIZE, make_config("scimlopsbench_multi_gpu")],
        shim=(
            "Same generated minimal config as the single-GPU stage (job name changed), written to "
            "{out}/minimal_config.py."
        ),
        note=(
            "Overrides: SCIMLOPSBENCH_MULTI_GPU_DEVICES (0,1), SCIMLOPSBENCH_MULTI_GPU_NPROC (2), "
            "SCIMLOPSBENCH_MULTI_GPU_PORT (29512). Gate: torch.cuda.is_available() and visible "
            "device count >= max(2, nproc). Our setup tokenises the sample as in the single-GPU "
            "stage and writes the config with job name scimlopsbench_multi_gpu."
        ),
        shim_dir=SHIMS,
    ),
    skip={"cpu": "repo_not_supported"},
)
