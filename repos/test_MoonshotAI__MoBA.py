"""MoBA — Mixture of Block Attention for long-context LLMs.

Repository: https://github.com/MoonshotAI/MoBA
Commit: b5d58363311d3ca946f1ec444182727c15e338b5
Domain: LLM sparse-attention kernel (Mixture of Block Attention)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 runs examples/llama.py with MoBA attention on a
tiny random Llama from the Hugging Face hub. Unusually, C4 is the same single-process command with
two GPUs visible, with no launcher and no GPU-count gate, so its Run keeps the reference's launcher
'none', nproc 1 and min_gpus 0.
"""

from pytest_reb import C2Variant, CompatVariant, Repo, Run, hf_asset

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}",
    "HF_HOME": "{assets}/cache/hf_home",
    "HF_HUB_CACHE": "{assets}/cache/hf_hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/transformers",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "WANDB_MODE": "offline",
}

#: The command every stage runs; only the environment differs.
ARGV = [
    "{python}", "examples/llama.py",
    "--model", "{assets}/model/hf-internal-testing__tiny-random-LlamaForCausalLM__main",
    "--attn", "moba", "--moba-chunk-size", "128", "--moba-topk", "2",
]

repo = Repo(
    "MoonshotAI/MoBA",
    commit="b5d58363311d3ca946f1ec444182727c15e338b5",
    c2_compat=C2Variant(failed_exit="unavailable", no_python="missing_report",
        missing="path_hallucination", timeout="timeout", crashed="runtime", failed="runtime",
        silent="insufficient_hardware", garbage="invalid_json"),
    c5_compat=CompatVariant(torch_needs_version=False, version_claim="string",
        version_strip=True, torch_claim="string", torch_strip=True, torch_unprobed="always",
        torch_probe="json", cuda_from="observed_if_success", gpu_observed_coerce=True,
        gpu_null_zero=True, gpu_needs_cuda_ok=True,
        cuda_valid_failures=frozenset({"insufficient_hardware"}),  # cuda_observation_valid
        ddp_excused=frozenset({"missing_report", "invalid_json", "entrypoint_not_found",
                               "args_unknown", "auth_required", "download_failed", "deps",
                               "data", "model"})),  # its non_capability_failures
    imports_total=13,  # the C0 denominator
    domain="LLM sparse-attention kernel (Mixture of Block Attention)",
    assets=[
        hf_asset(
            "tiny-random-llama", "hf-internal-testing/tiny-random-LlamaForCausalLM",
            dest="model/hf-internal-testing__tiny-random-LlamaForCausalLM__main",
            note=(
                "snapshot at "
                "{assets}/model/hf-internal-testing__tiny-random-LlamaForCausalLM__main; the probe "
                "refuses meta-llama/* ids; override SCIMLOPSBENCH_MODEL_ID / "
                "SCIMLOPSBENCH_MODEL_REVISION; no dataset"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="examples/llama.py",
    ),
    multi_gpu=Run(
        ARGV,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        entrypoint="examples/llama.py",
        note=(
            "The same single-process command with two GPUs visible "
            "(SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES, default 0,1); no launcher and no GPU-count "
            "gate."
        ),
    ),
    skip={"cpu": "repo_not_supported"},
)
