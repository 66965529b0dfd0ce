"""yunchang (long-context-attention) — Ulysses and Ring sequence-parallel attention.

Repository: https://github.com/feifeibear/long-context-attention
Commit: a52d85007ced2065dd71c498be65a02d62b51cac
Domain: sequence-parallel attention for long-context LLM training (yunchang: Ulysses + Ring)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 run benchmark/benchmark_longctx.py once
through torchrun on random QKV tensors, so there are no assets at all. A sitecustomize shim on
PYTHONPATH maps the CLI value --attn_type torch to AttnType.TORCH_EFFICIENT, so flash-attn is not
needed.
"""

from pytest_reb import SHIMS, C2Variant, CompatVariant, Repo, Run

# Our rewrite of the official shim (sitecustomize.py: the AttnType alias),
# mounted read-only at {repo}/benchmark_scripts.

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}/benchmark_scripts:{repo}",
    "MASTER_ADDR": "127.0.0.1",
    "NCCL_SHM_DISABLE": "1",
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    "OMP_NUM_THREADS": "1",
    "NCCL_ASYNC_ERROR_HANDLING": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "TORCH_HOME": "{assets}/cache/torch",
    "HF_HOME": "{assets}/cache/huggingface",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
    "PIP_CACHE_DIR": "{assets}/cache/pip",
    "HOME": "{assets}/cache/home",
    "TMPDIR": "{assets}/cache/tmp",
}

#: The benchmark and its options in both stages: one forward pass on tiny random QKV tensors.
BENCHMARK = [
    "benchmark/benchmark_longctx.py",
    "--ring_impl_type", "basic", "--nheads", "2", "--group_num", "1",
    "--head_size", "32", "--seq_len", "32", "--batch_size", "1", "--fwd_only",
    "--ulysses_degree", "1", "--attn_type", "torch", "--no_causal",
]

repo = Repo(
    "feifeibear/long-context-attention",
    commit="a52d85007ced2065dd71c498be65a02d62b51cac",
    # torch is probed (plainly) for any executable path, directories too; any failed import
    # counts; a truthy claim is compared even with a version probed as ""
    c2_compat=C2Variant(no_device="unavailable", missing="runtime", not_executable="runtime",
        directory="runtime"),
    c5_compat=CompatVariant(torch_needs_version=False, version_claim="truthy",
        torch_claim="truthy", torch_import="always", torch_compare_empty=True,
        cuda_from="observed_bool", gpu_count_coerce=True, gpu_observed_coerce=True,
        gpu_null_zero=True),
    imports_total=21,  # the C0 denominator
    domain="sequence-parallel attention for long-context LLM training (yunchang: Ulysses + Ring)",
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=1",
            "--master_addr=127.0.0.1",
            "--master_port=29511",
            *BENCHMARK,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV, "MASTER_PORT": "29511"},
        timeout=600,
        launcher="torchrun",
        entrypoint="benchmark/benchmark_longctx.py",
        shim=(
            "A sitecustomize.py in the probe folder (first on PYTHONPATH) wraps yunchang's "
            "AttnType.from_string so the CLI value 'torch' maps to AttnType.TORCH_EFFICIENT; other "
            "values are passed through."
        ),
        shim_dir=SHIMS,
        note=(
            "No prepared assets: the prepare stage writes skipped/not_applicable and the benchmark "
            "script makes random QKV tensors itself. The benchmark loop runs once (no steps flag). "
            "Knobs: "
            "SCIMLOPSBENCH_LONGCTX_RING_IMPL_TYPE/NHEADS/GROUP_NUM/HEAD_SIZE/SEQ_LEN/ULYSSES_DEGREE/NO_CAUSAL,"
            " SCIMLOPSBENCH_SINGLE_GPU_MASTER_PORT."
        ),
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_addr=127.0.0.1",
            "--master_port=29521",
            *BENCHMARK,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV, "MASTER_PORT": "29521"},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="benchmark/benchmark_longctx.py",
        shim="Same sitecustomize AttnType alias as the single-GPU stage.",
        shim_dir=SHIMS,
        note=(
            "With ulysses_degree 1 and 2 ranks the ring degree is 2. Overrides: "
            "SCIMLOPSBENCH_MULTI_GPU_VISIBLE_DEVICES (0,1), SCIMLOPSBENCH_MULTI_GPU_NPROC (2), "
            "SCIMLOPSBENCH_MULTI_GPU_MASTER_PORT (29521); gate counts GPUs with torch under the "
            "report python."
        ),
    ),
    skip={"cpu": "repo_not_supported"},
)
