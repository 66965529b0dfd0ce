"""SocialED — a library of social event detection algorithms.

Repository: https://github.com/RingBDStack/SocialED
Commit: 660e9d84b114a4084a3972cc00b1451c11c87f67
Domain: graph/social event detection library
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

The command is not a repository CLI but a harness-written driver
(benchmark_scripts/socialed_sbert_smoketest.py, shim) that loads SocialED/detector/sbert.py by path
and runs SBERT detection on 12 rows of Event2012; the runs therefore guard that detector file as
their entrypoint. Our rewrite of the driver is in repos/shims/test_RingBDStack__SocialED; the
prepare step's build_output/prepare/results.json, which the driver reads, is made by a setup step
(make_prepare_results.py: the 12-row Event2012_subset.npy and the two asset paths) into {out}.
Network: the dataset from a GitHub repository (git clone) and a MiniLM sentence-transformer; the
stages then run with HF_HUB_OFFLINE=1. C4 runs two independent ranks with
no collective. The repository's requirements.txt is self-conflicting.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrites (the driver, the prepare results), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to the harness: its driver is ours in
#: {shims}, and the official prepare results are the ones SETUP writes under {out}.
TOKENS = {
    "{repo}/benchmark_scripts/socialed_sbert_smoketest.py": [
        "{shims}/socialed_sbert_smoketest.py"],
    "{repo}/build_output/prepare/results.json": ["{out}/prepare/results.json"],
}

#: Every stage first makes what the official prepare left for it: the 12-row subset of the
#: downloaded Event2012.npy and a results.json naming it and the model folder (a missing asset
#: fails the stage as data / model before it runs).
SETUP = [[
    "{python}", "{shims}/make_prepare_results.py",
    "--dataset", "{glob:{assets}/dataset/Event2012/Event2012.npy}",
    "--model", "{glob:{assets}/model/sbert_model}",
    "--subset-size", "12", "--out", "{out}/prepare",
]]

#: Environment shared by every stage.
ENV = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "SENTENCE_TRANSFORMERS_HOME": "{assets}/cache/sentence_transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}

#: The harness-written driver and its options in every stage: SBERT on at most 12 rows.
SMOKETEST = [
    "{shims}/socialed_sbert_smoketest.py",
    "--prepare-results", "{out}/prepare/results.json",
    "--max-samples", "12", "--artifact-dir", "{out}",
]

repo = Repo(
    "RingBDStack/SocialED",
    commit="660e9d84b114a4084a3972cc00b1451c11c87f67",
    # torch is probed for any non-empty path string; a probe printing nothing failed, and
    # it counts for any torch_version but null; a cuda stage that failed on its report
    # (missing_report, invalid_json) observed nothing
    c2_compat=C2Variant(failed_exit="fails", no_python="path_hallucination:empty",
        missing="path_hallucination:empty", not_executable="path_hallucination:empty",
        directory="runtime", crashed="unknown", failed="unknown", silent="success",
        garbage="success"),
    c5_compat=CompatVariant(silent_python_ok=False, torch_needs_version=False,
        version_claim="string", compare_empty_observed=True, torch_import="if_not_null",
        torch_unprobed="with_path", silent_torch_ok=False, c2_meta_unobserved=True,
        gpu_observed_coerce=True, ddp_without_count=True),
    imports_total=54,  # the C0 denominator
    domain="graph/social event detection library",
    assets=[
        Asset(
            "Event2012", "dataset", "git",
            url="https://github.com/ChenBeici/SocialED_datasets.git",
            files=["Event2012.npy"],
            dest="dataset/Event2012/",
            note=(
                "shallow git clone into the cache, Event2012.npy copied out and a 12-row subset "
                "saved (SCIMLOPSBENCH_SUBSET_SIZE); prepare runs prepare_assets_impl.py under the "
                "report python"
            ),
        ),
        hf_asset(
            "paraphrase-MiniLM-L6-v2", "sentence-transformers/paraphrase-MiniLM-L6-v2",
            dest="model/sbert_model",
            note=(
                "snapshot_download into the cache, linked at {assets}/model/sbert_model; stages "
                "then run with HF_HUB_OFFLINE=1"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", "-u", *SMOKETEST],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="SocialED/detector/sbert.py",
        setup=SETUP,
        shim_dir=SHIMS,
        shim=(
            "The entrypoint is a harness-written driver, not a repo CLI: it loads "
            "SocialED/detector/sbert.py directly by file path (bypassing the detector package "
            "__init__, which imports many optional detectors), wraps the prepared subset in a tiny "
            "dataset object and runs SBERT preprocess, detection and evaluate on at most 12 rows, "
            "writing a small JSON artifact."
        ),
        note=(
            "SETUP writes {out}/prepare/results.json and the subset; our "
            "socialed_sbert_smoketest.py then writes {out}/run.json."
        ),
    ),
    single_gpu=Run(
        ["{python}", "-u", *SMOKETEST, "--require-gpu-count", "1"],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="SocialED/detector/sbert.py",
        setup=SETUP,
        shim_dir=SHIMS,
        shim=(
            "Same harness-written SBERT driver; --require-gpu-count 1 makes it fail unless torch "
            "sees CUDA with at least 1 device."
        ),
        note="SETUP as in the CPU stage; our driver checks the GPU count before loading data.",
    ),
    multi_gpu=Run(
        [
            "{python}", "-u", "-m", "torch.distributed.run",
            "--nproc_per_node", "2",
            *SMOKETEST, "--distributed",
            "--require-gpu-count", "2",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="SocialED/detector/sbert.py",
        setup=SETUP,
        shim_dir=SHIMS,
        shim=(
            "Same harness-written SBERT driver; with --distributed each rank sets its CUDA device "
            "from LOCAL_RANK and takes every world_size-th row; no collective."
        ),
        note=(
            "Fails early if build_output/cuda/results.json reports gpu_count < 2. "
            "CUDA_VISIBLE_DEVICES keeps an inherited value, else 0,1; nproc from "
            "SCIMLOPSBENCH_NPROC_PER_NODE (2). SETUP runs once before torchrun; each rank of our "
            "driver writes {out}/rank<N>.json."
        ),
    ),
)
