"""MultiModalMamba — a vision-plus-text Mamba model (random-init example).

Repository: https://github.com/kyegomez/MultiModalMamba
Commit: 58db40bcbd2e957c7981b6eed6de165b6a5ccd42
Domain: multimodal (vision + text) Mamba model code, random-init example
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

Every stage runs the repository's example.py: one forward pass of a randomly initialised model; the
downloaded image and tiny ViT are recorded but unused. C3 and C4 go through a harness wrapper
(shim; our rewrite is repos/shims/test_kyegomez__MultiModalMamba/entrypoint_wrapper.py) that makes
cuda:<rank> torch's default device; the C4 ranks are independent (no collective). The reference
argv names it benchmark_scripts/entrypoint_wrapper.py, a path that exists only where the shim
folder is mounted into the checkout (Docker); it is spelled {shims}/entrypoint_wrapper.py so that
local targets find it too. zetascale and swarms pull very large, tightly pinned dependency trees.
"""

from pytest_reb import SHIMS, Asset, C2Variant, CompatVariant, Repo, Run, hf_asset

# Our rewrite of the official shim (entrypoint_wrapper.py: the device-selecting wrapper),
# mounted read-only at {repo}/benchmark_scripts.

#: Environment shared by every stage.
ENV = {
    "SCIMLOPSBENCH_DATASET_DIR": "{assets}/dataset",
    "SCIMLOPSBENCH_MODEL_DIR": "{assets}/model",
}

#: How this module spells what the reference argv leaves to run time: the harness path of the
#: wrapper, wherever the target sees our shim folder.
TOKENS = {"benchmark_scripts/entrypoint_wrapper.py": ["{shims}/entrypoint_wrapper.py"]}

#: The wrapper running example.py on the GPU, in C3 and C4 (C3 adds its rank).
WRAPPER = [
    "{shims}/entrypoint_wrapper.py", "--entrypoint", "example.py", "--device", "cuda",
]

repo = Repo(
    "kyegomez/MultiModalMamba",
    commit="58db40bcbd2e957c7981b6eed6de165b6a5ccd42",
    c2_compat=C2Variant(no_python="missing_report", timeout="timeout", crashed="runtime",
        failed="runtime", silent="runtime", garbage="runtime"),
    # a JSON value that is not an object is read as {} (``... if isinstance(..., dict) else {}``)
    c5_compat=CompatVariant(non_object_empty=True, strip_path=True, version_claim="string",
        version_strip=True,
        torch_strip=True, torch_import="always", torch_compare_empty=True),  # "" too
    imports_total=16,  # the C0 denominator
    domain="multimodal (vision + text) Mamba model code, random-init example",
    assets=[
        Asset(
            "lena", "dataset", "url",
            url="https://raw.githubusercontent.com/opencv/opencv/master/samples/data/lena.jpg",
            dest="dataset/lena.jpg",
            optional=True,
            note="saved as {assets}/dataset/lena.jpg; recorded but not read by example.py",
        ),
        hf_asset(
            "tiny-random-vit", "hf-internal-testing/tiny-random-vit",
            files=["config.json", "pytorch_model.bin"],
            dest="model/tiny-random-vit",
            optional=True,
            note=(
                "downloaded by "
                "https://huggingface.co/hf-internal-testing/tiny-random-vit/resolve/main/<file> "
                "into {assets}/model/tiny-random-vit; recorded but not used (the example builds a "
                "randomly initialised model)"
            ),
        ),
    ],
    cpu=Run(
        ["{python}", "example.py"],
        env={"CUDA_VISIBLE_DEVICES": "", **ENV},
        timeout=600,
        entrypoint="example.py",
        note=(
            "One forward pass on random tensors; "
            "model_example.py is used if example.py is "
            "missing."
        ),
    ),
    single_gpu=Run(
        ["{python}", *WRAPPER, "--local-rank", "0"],
        env={"CUDA_VISIBLE_DEVICES": "0", **ENV},
        timeout=600,
        entrypoint="example.py",
        shim=(
            "A harness wrapper script selects the CUDA device for the given rank, makes "
            "cuda:<rank> torch's default device (so tensors the example creates land on the GPU) "
            "and then executes example.py as __main__."
        ),
        shim_dir=SHIMS,
    ),
    multi_gpu=Run(
        [
            "{python}", "-m", "torch.distributed.run",
            "--standalone", "--nnodes", "1", "--nproc-per-node", "2",
            *WRAPPER,
        ],
        env={"CUDA_VISIBLE_DEVICES": "0,1", **ENV},
        timeout=1200,
        launcher="torchrun",
        nproc=2,
        min_gpus=2,
        entrypoint="example.py",
        shim=(
            "Same device-selecting wrapper; each rank takes LOCAL_RANK and runs the example "
            "independently (no collective)."
        ),
        shim_dir=SHIMS,
        note=(
            "GPU count for the gate comes from build_output/cuda/results.json observed.gpu_count, "
            "else a torch probe. Probe flags --visible-devices and --nproc-per-node override 0,1 "
            "and 2."
        ),
    ),
)
