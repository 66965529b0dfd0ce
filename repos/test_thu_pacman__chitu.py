"""Chitu — a high-performance LLM inference engine.

Repository: https://github.com/thu-pacman/chitu
Commit: d2cc0f5a2bdc262e75cc45ee1c4cdf7778279dd0
Domain: LLM inference/serving engine
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C2 C3 C4 C5)

C1 does not apply (CSV: repo_not_supported). C3 and C4 run the offline benchmark module
(benchmarks/benchmark_offline.py) through torchrun with Qwen2.5-0.5B and attn_type=ref; C4 is
tensor parallel 2 over NCCL. The compiled chitu_backend CUDA extension must build and import.

Prepare downloads tinyshakespeare's input.txt raw (as
{assets}/dataset/tinyshakespeare_sharegpt.txt); a setup step of each stage (our
shims/.../sharegpt_from_text.py) converts it, as the official prepare did, into the sharegpt-style
tinyshakespeare_sharegpt.json in {out}, which benchmark.dataset_path then names.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our setup script (sharegpt_from_text.py), mounted read-only at {repo}/benchmark_scripts.

#: How this module spells what the reference argv leaves to run time.
TOKENS = {
    "benchmark.dataset_path={assets}/dataset/tinyshakespeare_sharegpt.json":
        ["benchmark.dataset_path={out}/tinyshakespeare_sharegpt.json"],
}

#: Both stages first convert the raw text into the sharegpt JSON the benchmark reads.
SETUP = [["{python}", "{shims}/sharegpt_from_text.py",
          "{assets}/dataset/tinyshakespeare_sharegpt.txt",
          "{out}/tinyshakespeare_sharegpt.json"]]

#: What each stage's note adds after the reference note.
MADE = (" Our setup step converts the raw text into {out}/tinyshakespeare_sharegpt.json: 64 "
        "human turns of at least 400 characters of whole lines, each with an empty gpt reply.")

#: Environment shared by every stage.
ENV = {
    "PYTHONPATH": "{repo}",
    "HF_HOME": "{assets}/cache/huggingface",
    "HUGGINGFACE_HUB_CACHE": "{assets}/cache/huggingface/hub",
    "TRANSFORMERS_CACHE": "{assets}/cache/huggingface/transformers",
    "TORCH_HOME": "{assets}/cache/torch",
    "XDG_CACHE_HOME": "{assets}/cache/xdg",
}

#: The benchmark module and its overrides up to the tensor-parallel size, in both stages.
BENCHMARK = [
    "--module", "benchmarks.benchmark_offline",
    "hydra.run.dir={out}/hydra",
    "hydra.output_subdir=.hydra",
    "models=Qwen2.5-0.5B",
    "models.ckpt_dir={assets}/model/Qwen__Qwen2.5-0.5B",
    "models.tokenizer_path={assets}/model/Qwen__Qwen2.5-0.5B",
]

#: The overrides after infer.tp_size: one request of 8 tokens, reference attention.
ONE_REQUEST = [
    "infer.pp_size=1",
    "infer.dp_size=1",
    "infer.ep_size=1",
    "infer.max_reqs=1",
    "infer.max_seq_len=32",
    "infer.prefill_chunk_size=1",
    "infer.use_cuda_graph=False",
    "infer.attn_type=ref",
    "benchmark.iters=1",
    "benchmark.num_reqs_list=[1]",
    "benchmark.input_len=8",
    "benchmark.output_len=8",
    "benchmark.dataset=sharegpt",
    "benchmark.dataset_path={out}/tinyshakespeare_sharegpt.json",
]

repo = Repo(
    "thu-pacman/chitu",
    commit="d2cc0f5a2bdc262e75cc45ee1c4cdf7778279dd0",
    # torch from a JSON probe whose unreadable output is no version; int(gpu_count) raises on
    # "two"; ddp is judged whenever no count says < 2 GPUs
    c2_compat=C2Variant(no_device="fails", no_framework="null", no_python="deps:null"),
    c5_compat=CompatVariant(version_claim="truthy", torch_claim="truthy", torch_probe="json",
        probe_garbage="ignored", cuda_from="observed", gpu_count_coerce=True,
        gpu_coerce_crash=True, gpu_observed_coerce=True, ddp_without_count=True,
        ddp_underclaim=True),
    imports_total=84,  # the C0 denominator
    domain="LLM inference/serving engine",
    assets=[
        Asset(
            "tinyshakespeare_sharegpt", "dataset", "url",
            url="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
            dest="dataset/",  # setup converts it
            rename={"input.txt": "tinyshakespeare_sharegpt.txt"},
            note=(
                "converted into a sharegpt-style {assets}/dataset/tinyshakespeare_sharegpt.json; "
                "overrides SCIMLOPSBENCH_DATASET_SOURCE_URL / SCIMLOPSBENCH_DATASET_NAME"
            ),
        ),
        hf_asset(
            "Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B",
            dest="model/Qwen__Qwen2.5-0.5B",
            note=(
                "snapshot linked at {assets}/model/Qwen__Qwen2.5-0.5B; used as both ckpt_dir and "
                "tokenizer_path with chitu's built-in models=Qwen2.5-0.5B config; overrides "
                "SCIMLOPSBENCH_MODEL_REPO_ID / SCIMLOPSBENCH_MODEL_NAME"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=1",
            "--master_port=29500",
            *BENCHMARK, "infer.tp_size=1", *ONE_REQUEST,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        launcher="torchrun",
        entrypoint="benchmarks/benchmark_offline.py",
        note=(
            "attn_type=ref avoids flash-attn/flashinfer at run time, but the compiled "
            "chitu_backend extension is still imported." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--nproc_per_node=2",
            "--master_port=29501",
            *BENCHMARK, "infer.tp_size=2", *ONE_REQUEST,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="benchmarks/benchmark_offline.py",
        note=(
            "Tensor parallel 2 over NCCL. Devices override SCIMLOPSBENCH_MULTI_GPU_IDS; gate "
            "counts GPUs with torch under the report python." + MADE
        ),
        setup=SETUP,
        shim_dir=SHIMS,
    ),
    skip={"cpu": "repo_not_supported"},
)
