"""kvpress — KV-cache compression methods (presses) for transformers.

Repository: https://github.com/NVIDIA/kvpress
Commit: ef2a1ca5f81bec64a382e5bb66d5a77d4af853f2
Domain: LLM KV-cache compression (transformers pipeline)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

All three stages run evaluation/evaluate.py on one LooGLE sample with the knorm press and a tiny
random Llama (Hugging Face, network). The official <fraction> token was computed by prepare
((1+1e-6)/N for the N rows of the split) and read back from manifest.json; here a setup step,
repos/shims/test_NVIDIA__kvpress/fraction.py, loads the split the way evaluate.py does, counts
its rows and writes the same value to {out}/fraction, which the argv reads back. The official
prepare loaded the split with the network into the datasets cache; our prepare stores the raw hub
files of data_dir shortdep_qa at {assets}/cache/datasets/reb_hub/simonjegou/loogle/ (inside
HF_DATASETS_CACHE), and repos/shims/test_NVIDIA__kvpress/sitecustomize.py makes
load_dataset("simonjegou/loogle", data_dir="shortdep_qa") load exactly those files with the generic
parquet builder, offline, in evaluate.py and fraction.py alike (other calls untouched). C4 is one
process: --device auto lets transformers shard the model over both GPUs (device_map), not DDP.

After inference, evaluation/benchmarks/loogle/calculate_metrics.py calls nltk.download("wordnet")
(METEOR) and bert_score's score(..., lang="EN"), which loads roberta-large by hub id. The official
prepare fetched neither: its stages had the network and downloaded both at run time. Ours have
no network, so the two are declared as assets after the official ones, each note beginning
"pytest-reb's addition" (repos/README.md): roberta-large in the hub cache TRANSFORMERS_CACHE names,
WordNet under {assets}/cache/xdg/nltk_data, which our sitecustomize.py puts on nltk's data path
(nltk.download, without the network, prints its error and returns False; the corpus is then
found there).
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our support files (fraction.py: the one-sample fraction; sitecustomize.py: LooGLE from the
# prepared hub files), mounted read-only at {repo}/benchmark_scripts.

#: How a note of an asset the official prepare did not fetch begins (repos/README.md): the
#: official stage downloaded it at run time, with the network; ours has none.
ADDITION = ("pytest-reb's addition (not fetched by the official prepare; the official stage "
            "downloaded it at run time)")

#: How this module spells what the reference argv leaves to run time.
TOKENS = {"<fraction>": ["{file:{out}/fraction}"]}

#: Before every stage: count the rows of LooGLE shortdep_qa's test split, write (1+1e-6)/N.
FRACTION = [["{python}", "{shims}/fraction.py", "simonjegou/loogle", "shortdep_qa",
             "{out}/fraction"]]

#: What the setup step does, appended to each stage note.
FRACTION_NOTE = (
    " Here the setup step {shims}/fraction.py loads simonjegou/loogle (data_dir shortdep_qa, split "
    "test) as evaluate.py will, and writes min(1, (1+1e-6)/N) to {out}/fraction; --fraction reads "
    "that file. In both, our sitecustomize.py serves that load_dataset call from the prepared hub "
    "files under HF_DATASETS_CACHE (reb_hub/simonjegou/loogle/shortdep_qa/) with the generic "
    "parquet builder, offline."
)

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}",
    "HF_HOME": "{assets}/cache/hf_home",
    "HF_HUB_CACHE": "{assets}/cache/hf_hub",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/hf_hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/transformers",
    "HF_DATASETS_CACHE": "{assets}/cache/datasets",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TOKENIZERS_PARALLELISM": "false",
}

#: evaluate.py's options before --device, in every stage: one LooGLE sample, knorm, tiny Llama.
ONE_SAMPLE = [
    "{python}", "evaluation/evaluate.py",
    "--dataset", "loogle",
    "--model", "{assets}/model/hf-internal-testing_tiny-random-LlamaForCausalLM",
    "--press_name", "knorm", "--compression_ratio", "0.5",
    "--fraction", "{file:{out}/fraction}", "--max_new_tokens", "1",
    "--max_context_length", "128", "--seed", "42",
]

#: The options after --device.
OUTPUT = ["--output_dir", "{out}/eval_output", "--log_level", "INFO", "--data_dir", "shortdep_qa"]

repo = Repo(
    "NVIDIA/kvpress",
    commit="ef2a1ca5f81bec64a382e5bb66d5a77d4af853f2",
    c2_compat=C2Variant(no_python="missing_report", missing="entrypoint_not_found",
        not_executable="unknown", directory="unknown", timeout="timeout",
        crashed="unknown:empty", failed="unknown:empty", silent="unknown:empty",
        garbage="unknown"),
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, torch_probe="json",
        # with no cuda stage its own torch probe answers for CUDA and the count
        cuda_fallback="probe", gpu_from="stage_or_probe"),
    imports_total=41,  # the C0 denominator
    domain="LLM KV-cache compression (transformers pipeline)",
    assets=[
        Asset(
            "loogle_shortdep_qa", "dataset", "hf_dataset",
            id="simonjegou/loogle",
            # HF_DATASETS_CACHE; the shim loads it
            dest="cache/datasets/reb_hub/simonjegou/loogle/",
            hub_files=("shortdep_qa/*",),
            note=(
                "data_dir shortdep_qa, split test; loaded once into the datasets cache "
                "{assets}/cache/datasets (listing under {assets}/dataset/loogle__shortdep_qa) to "
                "count rows N so that fraction = (1+1e-6)/N selects one sample"
            ),
        ),
        hf_asset(
            "tiny-random-llama", "hf-internal-testing/tiny-random-LlamaForCausalLM",
            dest="model/hf-internal-testing_tiny-random-LlamaForCausalLM",
            note=(
                "snapshot linked at "
                "{assets}/model/hf-internal-testing_tiny-random-LlamaForCausalLM; evaluation "
                "settings (press knorm, compression_ratio 0.5, max_new_tokens 1, "
                "max_context_length 128, seed 42, fraction) are written to {assets}/manifest.json "
                "and read back by the stages"
            ),
        ),
        hf_asset(
            "roberta-large", "roberta-large",
            files=["config.json", "merges.txt", "model.safetensors", "tokenizer.json",
                   "vocab.json"],
            dest="cache/transformers",
            hf_cache=True,
            note=(
                f"{ADDITION}: bert_score.score(lang='EN') in "
                "evaluation/benchmarks/loogle/calculate_metrics.py loads roberta-large by hub id "
                "(AutoModel, AutoTokenizer) into transformers' cache, which "
                "TRANSFORMERS_CACHE={assets}/cache/transformers names (it wins over HF_HUB_CACHE)"
            ),
        ),
        Asset(
            "wordnet", "data", "url",
            url="https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/",
            files=["wordnet.zip"],
            dest="cache/xdg/nltk_data/corpora/",
            extract=True,
            note=(
                f"{ADDITION}: calculate_metrics.py calls nltk.download('wordnet') for METEOR; "
                "unpacked to {assets}/cache/xdg/nltk_data/corpora/wordnet, which our "
                "sitecustomize.py adds to nltk.data.path (the official download went to "
                "~/nltk_data)"
            ),
        ),
    ],
    cpu=Run(
        [*ONE_SAMPLE, "--device", "cpu", *OUTPUT],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="evaluation/evaluate.py",
        note=(
            "<fraction> is the one-sample fraction computed "
            "by prepare and stored in manifest.json." + FRACTION_NOTE
        ),
        setup=FRACTION,
        shim_dir=SHIMS,
    ),
    single_gpu=Run(
        [*ONE_SAMPLE, "--device", "cuda:0", *OUTPUT],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="evaluation/evaluate.py",
        note="<fraction> as in the CPU stage." + FRACTION_NOTE,
        setup=FRACTION,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [*ONE_SAMPLE, "--device", "auto", *OUTPUT],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="device_map",
        min_gpus=2,
        entrypoint="evaluation/evaluate.py",
        note=(
            "<fraction> as in the CPU stage. One process; --device auto makes transformers shard "
            "the model with device_map='auto' over the visible GPUs (not DDP). Devices overridable "
            "with the probe's --gpus flag. Gate: torch.cuda.device_count() >= 2 under the report "
            "python." + FRACTION_NOTE
        ),
        setup=FRACTION,
        shim_dir=SHIMS,
    ),
)
