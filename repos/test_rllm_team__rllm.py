"""rLLM — relational and graph learning with LLMs (a PyG-like library).

Repository: https://github.com/rllm-team/rllm
Commit: 0c0e4ec9b158318d72a09d810c060e0c9529c074
Domain: relational/graph learning with LLMs (PyG-like library, RelBench-style RDL)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 train the RelBench-style RDL example (examples/rdl.py) for one step on the rel-f1
driver-position task; the RelBench zips and the GloVe embeddings need network. C4 does not apply
(CSV: not_applicable). The pins mix an old transformers (<=4.30) with langchain 1.x.

The official prepare laid the zips out as RelF1Dataset's cache and processed it once on the CPU,
so the stages read a ready --cache_dir. The view is read-only, so a setup step of each stage (our
shims/.../relf1_cache.py) unpacks the zips from {assets}/cache/dataset/rel-f1 into {out}/dataset
(rel-f1/raw/db, rel-f1/raw/tasks/<task>) and processes it there with CUDA hidden; --cache_dir
names {out}/dataset. --reb-prepare downloads the zips from the server's tasks/<task>.zip paths and
keeps the declared (official cache) names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script (relf1_cache.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time.
TOKENS = {"{assets}/dataset": ["{out}/dataset"]}

#: Both stages first build the processed rel-f1 cache from the raw zips.
SETUP = [["{python}", "{shims}/relf1_cache.py", "{assets}/cache/dataset/rel-f1",
          "{out}/dataset"]]

#: What each stage's note adds after the reference note.
MADE = (" Our setup step unpacks the rel-f1 zips into {out}/dataset and processes them once with "
        "CUDA hidden (RelF1Dataset.load_all), as the official prepare did.")

#: Environment shared by every stage.
ENV = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "PIP_CACHE_DIR": "{assets}/cache/pip",
    "HF_HOME": "{assets}/cache/huggingface",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "HF_DATASETS_CACHE": "{assets}/cache/huggingface/datasets",
    "TORCH_HOME": "{assets}/cache/torch",
    "SENTENCE_TRANSFORMERS_HOME": "{assets}/cache/sentence_transformers",
    "TMPDIR": "{assets}/cache/tmp",
    "TEMP": "{assets}/cache/tmp",
    "TMP": "{assets}/cache/tmp",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "examples/rdl.py",
    "--task", "driver-position", "--epochs", "1", "--batch_size", "1",
    "--num_neighbors", "1", "--num_layers", "1", "--hidden_dim", "16",
    "--max_steps_per_epoch", "1",
    "--cache_dir", "{out}/dataset",
]

repo = Repo(
    "rllm-team/rllm",
    commit="0c0e4ec9b158318d72a09d810c060e0c9529c074",
    c2_compat=C2Variant(no_python="unknown"),
    # str(python_path).strip(); the count is the cuda stage's int or string of digits
    c5_compat=CompatVariant(strip_path=True, path_text=True, version_claim="text_null",
        compare_empty_observed=True, version_strip=True, torch_claim="text_null",
        torch_strip=True, gpu_observed_coerce="digits", ddp_underclaim=True),
    imports_total=67,  # the C0 denominator
    domain="relational/graph learning with LLMs (PyG-like library, RelBench-style RDL)",
    assets=[
        Asset(
            "rel-f1", "dataset", "url",
            url="https://relbench.stanford.edu/download/rel-f1/",
            files=[
                "db.zip", "tasks_driver-dnf.zip", "tasks_driver-position.zip",
                "tasks_driver-top3.zip",
            ],
            dest="cache/dataset/rel-f1/",  # the stages' setup lays the zips out (relf1_cache.py)
            url_paths={  # declared by their cache names
                "tasks_driver-dnf.zip": "tasks/driver-dnf.zip",
                "tasks_driver-position.zip": "tasks/driver-position.zip",
                "tasks_driver-top3.zip": "tasks/driver-top3.zip",
            },
            note=(
                "zips cached under {assets}/cache/dataset/rel-f1 and laid out in {assets}/dataset, "
                "which is passed as --cache_dir; prepare also checks the data loads under the "
                "report python"
            ),
        ),
        hf_asset(
            "glove-6B-300d", "sentence-transformers/average_word_embeddings_glove.6B.300d",
            dest="cache/huggingface/hub",
            hf_cache=True,
            note=(
                "downloaded into the HF cache ({assets}/cache/huggingface) and "
                "{assets}/cache/model; used for text featurisation during Rel-F1 preprocessing"
            ),
        ),
    ],
    cpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="examples/rdl.py",
        note=(
            "Task driver-position is chosen because a BatchNorm1d with one output fails at batch "
            "size 1 for the other tasks." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="examples/rdl.py",
        setup=SETUP,
        shim_dir=SHIMS,
        note=MADE.lstrip(),
    ),
    multi_gpu=None,  # C4 does not apply: not_applicable
)
