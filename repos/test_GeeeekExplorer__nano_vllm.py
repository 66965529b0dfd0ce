"""nano-vllm — a minimal re-implementation of vLLM's offline inference engine.

Repository: https://github.com/GeeeekExplorer/nano-vllm
Commit: 2f214426530e2841e7d24c73ee0dfa914d62df56
Domain: LLM inference engine (minimal vLLM)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 run the official inline driver, rewritten
as repos/shims/test_GeeeekExplorer__nano_vllm/generate_one_token.py: it builds nanovllm's LLM on
Qwen/Qwen3-0.6B (about 1.2 GB from the Hugging Face hub) and generates one token for the first
prompt of the prompts file; C4 sets tensor_parallel_size=2 and the engine spawns its own worker
process (no torchrun). The official driver found both paths in the prepare step's
benchmark_assets/assets.json; ours gets them as arguments. There is no repository script to guard,
so the runs declare no entrypoint.
"""

from pytest_reb import (
    SHIMS,
    Asset,
    C2Variant,
    CompatVariant,
    Repo,
    Run,
    Synthetic,
    hf_asset,
    self_launching,
)

# Our rewrite of the official inline driver, mounted read-only at {repo}/benchmark_scripts.


def driver(tensor_parallel_size: int) -> list[str]:
    """Our driver with the two asset paths and the tensor-parallel size of a stage."""
    return ["{shims}/generate_one_token.py",
            "--model", "{assets}/model/huggingface/Qwen3-0.6B",
            "--prompts", "{assets}/dataset/prompts.json",
            "--tensor-parallel-size", str(tensor_parallel_size)]


#: How this module spells what the reference argv leaves to run time: `-c <inline>` is our
#: driver script.
TOKENS = {
    "-c": [],
    (
        "<inline: nanovllm LLM(model, enforce_eager=True, tensor_parallel_size=1, "
        "max_model_len=256, max_num_batched_tokens=512, max_num_seqs=1).generate([prompt], "
        "SamplingParams(temperature=0.6, max_tokens=1))>"
    ): driver(1),
    "<inline: same driver with tensor_parallel_size=2>": driver(2),
}

#: Environment shared by every stage.
ENV = {
    "HF_HOME": "{assets}/cache/huggingface",
    "HF_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/transformers",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "TORCH_HOME": "{assets}/cache/torch",
    "TRITON_CACHE_DIR": "{assets}/cache/triton",
}

repo = Repo(
    "GeeeekExplorer/nano-vllm",
    commit="2f214426530e2841e7d24c73ee0dfa914d62df56",
    c2_compat=C2Variant(failed_exit="fails", no_python="missing_report:empty",
        missing="unknown:empty", not_executable="unknown:empty", directory="unknown:empty",
        timeout="unknown:empty", crashed="runtime:empty", failed="runtime:empty",
        silent="insufficient_hardware:empty", garbage="unknown:empty"),
    # python_version is compared only with a version that printed, torch_version with "" too
    c5_compat=CompatVariant(directory_crash=True, torch_compare_empty=True,
        torch_import="always", ddp_without_count=True),
    imports_total=22,  # the C0 denominator
    domain="LLM inference engine (minimal vLLM)",
    assets=[
        Asset(
            "prompts", "data", "synthetic",
            path="{assets}/dataset/prompts.json",
            dest="dataset/prompts.json",
            synthetic=Synthetic.json({
                "format": "prompts_v1", "prompts": ["introduce yourself"],
                "source_note": "Derived from repo example.py prompts; minimized to 1 prompt for "
                               "batch_size=1."}),
            note="one prompt taken from the repo's example.py",
        ),
        hf_asset(
            "Qwen3-0.6B", "Qwen/Qwen3-0.6B",
            dest="model/huggingface/Qwen3-0.6B",
            note=(
                "snapshot_download into {assets}/model/huggingface/Qwen3-0.6B (about 1.2 GB); both "
                "paths recorded in {assets}/assets.json, which the stage code reads (relative to "
                "cwd)"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        ["{python}", *driver(1)],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        note=(
            "Inline Python driver: reads model and prompt paths from benchmark_assets/assets.json, "
            "builds the engine with the listed arguments and generates one token for one prompt, "
            "printing the text. Ours: generate_one_token.py with the model folder and prompts file "
            "as arguments, tensor_parallel_size 1."
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=self_launching(
        ["{python}", *driver(2)],
        launcher="engine",
        nproc=2,
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        note=(
            "nano-vllm spawns its own tensor-parallel worker process and NCCL group; no torchrun. "
            "GPU gate counts all GPUs with torch under the report python before "
            "CUDA_VISIBLE_DEVICES (SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES, default 0,1) is "
            "applied. Ours: generate_one_token.py with tensor_parallel_size 2."
        ),
        shim_dir=SHIMS,
    ),
    skip={"cpu": "repo_not_supported"},
)
