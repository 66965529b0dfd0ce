"""FlagGems — a library of Triton operators that replace ATen kernels for LLMs.

Repository: https://github.com/flagos-ai/FlagGems
Commit: c5af8839c871a7f626d693476ba7f18d30ba04a4
Domain: Triton operator library (drop-in ATen kernels for LLMs)
Category: 1_single_gpu_only (tiers that apply: C0 C2 C3 C5)

Only C3 runs (C1 and C4: repo_not_supported), and it is a pytest node: the first collected
parameter set of examples/model_bert_test.py::test_accuracy_bert. As in the official driver, a
setup step (shims/test_flagos_ai__FlagGems/first_bert_node.py) runs the --collect-only pass and
writes the first node id to {out}/bert_node; the stage runs only that node ({file:...}). The
official pip-install of a missing pytest is not reproduced: we never change the environment
under test. Network: the bert-base-uncased tokenizer files from the Hugging Face hub; Triton
JIT-compiles kernels on the first run.
"""

from pytest_reb import (
    SHIMS,
    Asset,
    C2Variant,
    CompatVariant,
    Repo,
    Synthetic,
    hf_asset,
    pytest_node,
)

# Our rewrite of the collection half of the official driver.

#: How this module spells what the reference argv leaves to run time: the whole node id is the
#: one the setup step collected.
TOKENS = {
    "examples/model_bert_test.py::test_accuracy_bert[<first collected parameter set>]": [
        "{file:{out}/bert_node}"],
}

repo = Repo(
    "flagos-ai/FlagGems",
    commit="c5af8839c871a7f626d693476ba7f18d30ba04a4",
    c2_compat=C2Variant(no_python="deps", missing="deps", not_executable="deps",
        directory="deps", timeout="deps", crashed="deps"),
    # a version probe that exits 0 printing nothing stops it (out.splitlines()[-1])
    # a report json.loads() refuses (or null) is one path item; .get() of another value dies
    c5_compat=CompatVariant(missing_report_path=1, invalid_report_path=1, non_object_crash=True,
        directory_crash=True, silent_python_crash=True,
        version_claim="truthy", torch_claim="truthy", torch_import="always",
        gpu_from="stage_or_probe"),
    imports_total=88,  # the C0 denominator
    domain="Triton operator library (drop-in ATen kernels for LLMs)",
    assets=[
        Asset(
            "prompts", "data", "synthetic",
            path="{assets}/dataset/prompts.jsonl",
            dest="dataset/prompts.jsonl",
            synthetic=Synthetic.lines('{"text": "How are you today?"}'),
            note=(
                "mirrors the repo's BERT example; exported to the stage as "
                "SCIMLOPSBENCH_DATASET_PATH"
            ),
        ),
        # Ours: the hub cache under HF_HOME only, which is where the test's
        # AutoTokenizer.from_pretrained('google-bert/bert-base-uncased') looks (offline, by hub
        # id); no stage reads the folder the official prepare also linked.
        hf_asset(
            "bert-base-uncased-tokenizer", "google-bert/bert-base-uncased",
            kind="tokenizer",
            files=[
                "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                "added_tokens.json", "merges.txt", "config.json",
            ],
            dest="cache/hf_home/hub",
            hf_cache=True,
            note=(
                "allow-pattern snapshot into the HF cache {assets}/cache/hf_home, linked at "
                "{assets}/model/google-bert__bert-base-uncased__tokenizer; prepare pip-installs "
                "huggingface_hub/transformers into the report python if they are missing"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=pytest_node(
        "{file:{out}/bert_node}",
        env={
            "CUDA_VISIBLE_DEVICES": "0",
            "PYTHONPATH": "{repo}/src",
            "HF_HOME": "{assets}/cache/hf_home",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "XDG_CACHE_HOME": "{assets}/cache/xdg",
            "TRITON_CACHE_DIR": "{assets}/cache/triton",
            "TORCH_HOME": "{assets}/cache/torch",
            "TORCH_EXTENSIONS_DIR": "{assets}/cache/torch_extensions",
            "TORCHINDUCTOR_CACHE_DIR": "{assets}/cache/torchinductor",
            "FLAGGEMS_CACHE_DIR": "{assets}/cache/flaggems",
            "SCIMLOPSBENCH_DATASET_PATH": "{assets}/dataset/prompts.jsonl",
            "SCIMLOPSBENCH_MODEL_PATH": "{assets}/model/google-bert__bert-base-uncased__tokenizer",
        },
        timeout=600,
        entrypoint="examples/model_bert_test.py",
        setup=[["{python}", "{shims}/first_bert_node.py", "{out}/bert_node"]],
        shim_dir=SHIMS,
        shim=(
            "Before the run the probe pip-installs pytest into the report python if it is missing. "
            "A generated driver ({out}/_single_gpu_impl.py) first runs '{python} -m pytest "
            "--collect-only -q examples/model_bert_test.py -k test_accuracy_bert', takes the first "
            "collected node id containing '::test_accuracy_bert', and then runs only that node."
        ),
        note=(
            "Collection failure or no matching node gives exit 16. Triton JIT-compiles kernels on "
            "first run. Ours: the setup step shims/first_bert_node.py does the collection (exit 16 "
            "fails the stage before its run) and writes the node id to {out}/bert_node; the run is "
            "that node through pytest.main in the host's own '-c' command (spec.pytest_node: "
            "-q, no cache in the checkout, plain asserts, so the witness reads the test module "
            "as the checkout's code). The official pytest pip-install pre-flight is "
            "not reproduced: we never change the environment under test, so a missing pytest "
            "fails the stage."
        ),
    ),
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={"cpu": "repo_not_supported", "multi_gpu": "repo_not_supported"},
)
