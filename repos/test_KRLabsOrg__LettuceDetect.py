"""LettuceDetect — hallucination detection for RAG as token classification.

Repository: https://github.com/KRLabsOrg/LettuceDetect
Commit: b302fdb8568f257615d1c4a9d2d2ee69e11c5b72
Domain: NLP: RAG hallucination detection (token-classification fine-tune)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 fine-tune the 17M ettin encoder for one epoch on two RAGTruth-derived samples; exit 0 is
not enough, the log must also say 'Starting training on cpu' (or 'on cuda'), declared with
expect_log. C4 does not apply (CSV: repo_not_supported). Network: the RAGTruth jsonl files from
GitHub and the encoder from the Hugging Face hub.

The prepared view holds the raw RAGTruth download at {assets}/dataset/ragtruth/; a setup step of
each stage (shims/make_ragbench_min.py) runs the repository's own
lettucedetect/preprocess/preprocess_ragtruth.py on it into {out}/ragtruth/ and, like the official
prepare, keeps the first two train samples as one train and one dev sample marked 'ragbench' in
{out}/ragbench_min.json, next to an empty {out}/ragtruth_empty.json; the run reads those two.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script that turns the raw RAGTruth files into the two files the stages read.

#: How this module spells what the reference argv leaves to run time: the prepared files live in
#: the stage's {out}, written there by the setup step.
TOKENS = {
    "{assets}/dataset/ragtruth_empty.json": ["{out}/ragtruth_empty.json"],
    "{assets}/dataset/ragbench_min.json": ["{out}/ragbench_min.json"],
}

#: Every stage first builds the two training files from the raw download (the official prepare).
SETUP = [[
    "{python}", "{shims}/make_ragbench_min.py",
    "--raw", "{assets}/dataset/ragtruth", "--repo", "{repo}", "--out", "{out}",
]]

#: What our setup does, after each stage's reference note.
SETUP_NOTE = (
    " Our setup step runs the repository's preprocess_ragtruth.py on the raw download and writes "
    "the two-sample {out}/ragbench_min.json and the empty {out}/ragtruth_empty.json the official "
    "prepare wrote."
)

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TORCH_HOME": "{assets}/cache/torch",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "scripts/train.py",
    "--ragtruth-path", "{out}/ragtruth_empty.json",
    "--ragbench-path", "{out}/ragbench_min.json",
    "--model-name", "{assets}/model/jhu-clsp__ettin-encoder-17m",
    "--output-dir", "{out}/model", "--batch-size", "1", "--epochs", "1",
    "--learning-rate", "1e-5",
]

repo = Repo(
    "KRLabsOrg/LettuceDetect",
    commit="b302fdb8568f257615d1c4a9d2d2ee69e11c5b72",
    c2_compat=C2Variant(no_device="unavailable", no_framework="absent",
        no_python="missing_report:empty", missing="missing_report:empty",
        not_executable="missing_report:empty", directory="missing_report:empty",
        timeout="unknown:empty", crashed="unknown:empty"),
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, strip_path=True,
        version_strip=True, torch_strip=True, torch_import="always", torch_probe="json",
        cuda_from="observed", c2_meta_unobserved=True),
    imports_total=50,  # the C0 denominator
    domain="NLP: RAG hallucination detection (token-classification fine-tune)",
    assets=[
        Asset(
            "ragtruth_mini", "dataset", "url",
            url="https://raw.githubusercontent.com/ParticleMedia/RAGTruth/main/dataset",
            files=["response.jsonl", "source_info.jsonl"],
            dest="dataset/ragtruth/",
            note=(
                "preprocessed with the repo's lettucedetect/preprocess/preprocess_ragtruth.py, "
                "then reduced to {assets}/dataset/ragbench_min.json (first two train samples "
                "relabelled as one train + one dev, dataset=ragbench) and an empty "
                "{assets}/dataset/ragtruth_empty.json; base URL override BENCH_RAGTRUTH_BASE_URL"
            ),
        ),
        hf_asset(
            "ettin-encoder-17m", "jhu-clsp/ettin-encoder-17m",
            dest="model/jhu-clsp__ettin-encoder-17m",
            note=(
                "tiny encoder, snapshot at {assets}/model/jhu-clsp__ettin-encoder-17m; override "
                "BENCH_MODEL_ID / BENCH_MODEL_REVISION"
            ),
        ),
    ],
    cpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="scripts/train.py",
        expect_log=["Starting training on cpu"],
        setup=SETUP,
        shim_dir=SHIMS,
        note=(
            "After exit 0 the probe rewrites the result to failure unless the log contains "
            "'Starting training on cpu'." + SETUP_NOTE
        ),
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="scripts/train.py",
        expect_log=["Starting training on cuda"],
        setup=SETUP,
        shim_dir=SHIMS,
        note=(
            "After exit 0 the probe rewrites the result to failure unless the log contains "
            "'Starting training on cuda'." + SETUP_NOTE
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
