"""YomiToku — Japanese document OCR and layout analysis.

Repository: https://github.com/kotaro-kinoshita/yomitoku
Commit: f68b55702cf5712524ff4a7b4665ebde622132ca
Domain: Japanese document OCR and layout analysis (inference CLI)
Category: 2_cpu+single_gpu (tiers that apply: C0 C1 C2 C3 C5)

C1 and C3 run the yomitoku CLI on one repository image. Prepare downloads every model repo id named
in src/yomitoku/configs (the KotaroKinoshita/yomitoku-* asset, network) and the CLI resolves them
from that cache. C4 does not apply (CSV: repo_not_supported).
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/huggingface",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "PYTHONPATH": "{repo}/src",
}

#: The CLI on the prepared page, before --device, in both stages.
OCR = [
    "{python}", "-m", "yomitoku.cli.main",
    "{assets}/dataset/sample_text.jpg",
    "--format", "json", "--outdir", "{out}/out",
]

repo = Repo(
    "kotaro-kinoshita/yomitoku",
    commit="f68b55702cf5712524ff4a7b4665ebde622132ca",
    c2_compat=C2Variant(no_python="deps", missing="runtime", not_executable="runtime",
        directory="runtime", timeout="timeout", crashed="deps", failed="deps", silent="deps",
        garbage="invalid_json"),
    # no python_path: that item and nothing else; a path that is missing or not executable
    # also fails the version probe (two items); a failed import counts a non-blank claim
    # a python_path that is no file is an item, and both probes still run (a bare name
    # through PATH)
    c5_compat=CompatVariant(runs_missing="both", noexec_path_weight=2,
        missing_path_stops=True, torch_needs_version=False, version_claim="string",
        version_strip=True, torch_claim="string", torch_strip=True, torch_import="if_nonblank",
        torch_unprobed="always", cuda_from="observed", ddp_without_count=True),
    imports_total=44,  # the C0 denominator
    domain="Japanese document OCR and layout analysis (inference CLI)",
    assets=[
        Asset(
            "sample_text", "dataset", "repo",
            path="demo/sample_text.jpg",
            dest="dataset/sample_text.jpg",
            note=(
                "copied to {assets}/dataset/sample_text.jpg (falls back to demo/sample.pdf if the "
                "jpg is absent)"
            ),
        ),
        hf_asset(
            "yomitoku_models", "KotaroKinoshita/yomitoku-*",
            dest="cache/huggingface/hub",
            hf_cache=True,
            hub_ids=(  # the hf_hub_repo values of its configs
                "KotaroKinoshita/yomitoku-text-detector-dbnet-v2",
                "KotaroKinoshita/yomitoku-text-recognizer-parseq-middle-v2",
                "KotaroKinoshita/yomitoku-layout-parser-rtdtrv2-v2",
                "KotaroKinoshita/yomitoku-table-structure-recognizer-rtdtrv2-open-beta",
            ),
            note=(
                "every hf_hub_repo value found by AST-parsing src/yomitoku/configs (text detector, "
                "text recognizer, layout parser, table structure recognizer) is "
                "snapshot-downloaded into the HF cache {assets}/cache/huggingface and linked under "
                "{assets}/model; the CLI then resolves them by repo id from that cache"
            ),
        ),
    ],
    cpu=Run(
        [*OCR, "--device", "cpu"],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="src/yomitoku/cli/main.py",
    ),
    single_gpu=Run(
        [*OCR, "--device", "cuda"],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        min_gpus=1,
        entrypoint="src/yomitoku/cli/main.py",
        note=(
            "Pre-check: torch must report CUDA available with at least 1 visible device, else "
            "failure (insufficient_hardware)."
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"multi_gpu": "repo_not_supported"},
)
