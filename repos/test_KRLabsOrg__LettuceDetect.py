"""LettuceDetect — hallucination detection for RAG as token classification.

Repository: https://github.com/KRLabsOrg/LettuceDetect
Commit: b302fdb8568f257615d1c4a9d2d2ee69e11c5b72
Domain: NLP: RAG hallucination detection (token-classification fine-tune)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 fine-tune the 17M ettin encoder for one epoch on two RAGTruth-derived samples; exit 0 is
not enough, the log must also say 'Starting training on cpu' (or 'on cuda'), declared with
expect_log. C4 does not apply (CSV: repo_not_supported). Network: the RAGTruth jsonl files from
GitHub and the encoder from the Hugging Face hub.
"""

from pytest_reb import Asset, Repo, Run, hf_asset

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
    "--ragtruth-path", "{assets}/dataset/ragtruth_empty.json",
    "--ragbench-path", "{assets}/dataset/ragbench_min.json",
    "--model-name", "{assets}/model/jhu-clsp__ettin-encoder-17m",
    "--output-dir", "{out}/model", "--batch-size", "1", "--epochs", "1",
    "--learning-rate", "1e-5",
]

repo = Repo(
    "KRLabsOrg/LettuceDetect",
    commit="b302fdb8568f257615d1c4a9d2d2ee69e11c5b72",
    imports_total=50,  # the C0 denominator
    domain="NLP: RAG hallucination detection (token-classification fine-tune)",
    assets=[
        Asset(
            "ragtruth_mini", "dataset", "url",
            url="https://raw.githubusercontent.com/ParticleMedia/RAGTruth/main/dataset",
            files=["response.jsonl", "source_info.jsonl"],
            note=(
                "preprocessed with the repo's lettucedetect/preprocess/preprocess_ragtruth.py, "
                "then reduced to {assets}/dataset/ragbench_min.json (first two train samples "
                "relabelled as one train + one dev, dataset=ragbench) and an empty "
                "{assets}/dataset/ragtruth_empty.json; base URL override BENCH_RAGTRUTH_BASE_URL"
            ),
        ),
        hf_asset(
            "ettin-encoder-17m", "jhu-clsp/ettin-encoder-17m",
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
        note=(
            "After exit 0 the probe rewrites the result to failure unless the log contains "
            "'Starting training on cpu'."
        ),
    ),
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="scripts/train.py",
        expect_log=["Starting training on cuda"],
        note=(
            "After exit 0 the probe rewrites the result to failure unless the log contains "
            "'Starting training on cuda'."
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
