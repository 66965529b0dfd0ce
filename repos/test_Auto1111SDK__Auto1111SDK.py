"""Auto1111SDK — a Python SDK for Stable Diffusion (Automatic1111-style pipelines).

Repository: https://github.com/Auto1111SDK/Auto1111SDK
Commit: 4f3cd1504d0afa344fd322df0c4ac3e9eec7a129
Domain: image generation (Stable Diffusion SDK; bundled sgm/Lightning toy trainer)
Category: 3_single_gpu+multi_gpu (tiers that apply: C0 C1 C2 C3 C4 C5)

The stages do not generate images: they train the bundled sgm toy MNIST config
(auto1111sdk/modules/generative) for one Lightning step, with no pretrained weights. MNIST is
downloaded from the CVDF mirror (network) and every stage runs with the prepared dataset folder as
cwd. C4 lets Lightning's own DDP strategy spawn the two ranks (no torchrun).
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo, Run, self_launching

#: main.py and its options before the accelerator, in every stage.
MAIN = [
    "{python}", "{repo}/auto1111sdk/modules/generative/main.py",
    "--base", "{assets}/model/mnist_toy/mnist.yaml",
    "--no_base_name", "True", "--train", "True", "--no-test", "True",
    "--logdir", "{out}/lightning_logs",
]

#: The config overrides after the accelerator: one step of batch 1, no validation, no images.
ONE_STEP = [
    "data.params.batch_size=1",
    "data.params.num_workers=0",
    "lightning.trainer.max_steps=1",
    "lightning.trainer.limit_train_batches=1",
    "lightning.trainer.limit_val_batches=0",
    "lightning.trainer.num_sanity_val_steps=0",
    "lightning.callbacks.image_logger.params.disabled=true",
]

repo = Repo(
    "Auto1111SDK/Auto1111SDK",
    commit="4f3cd1504d0afa344fd322df0c4ac3e9eec7a129",
    # the version probe runs python_path stripped, the torch probe as written
    c2_compat=C2Variant(failed_exit="unavailable", no_python="insufficient_hardware",
        missing="insufficient_hardware", not_executable="insufficient_hardware",
        directory="runtime", timeout="runtime", failed="runtime",
        silent="insufficient_hardware", garbage="runtime"),
    # python_version is compared only with a version that printed (``observed[...] and``);
    # torch_version with whatever an import that exited 0 printed, "" too
    c5_compat=CompatVariant(strip_path=True, torch_needs_version=False, torch_path_as_written=True,
        version_strip=True, torch_strip=True, torch_import="always", torch_compare_empty=True),
    imports_total=213,  # the C0 denominator
    domain="image generation (Stable Diffusion SDK; bundled sgm/Lightning toy trainer)",
    assets=[
        Asset(
            "mnist", "dataset", "url",
            url="https://storage.googleapis.com/cvdf-datasets/mnist/",
            files=[
                "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
            ],
            dest="dataset/mnist/.data/MNIST/raw",
            # torchvision's MNIST(download=True) finds only the .gz files and gunzips them next
            # to themselves, which the read-only asset view refuses (the official prepare's
            # folder is writable): the cache holds them unpacked, which MNIST reads as they are
            extract=True,
            note=(
                "raw files placed under {assets}/dataset/mnist/.data/MNIST/raw; the stage runs "
                "with that dataset folder as cwd"
            ),
        ),
        Asset(
            "mnist_toy_config", "config", "repo",
            path="auto1111sdk/modules/generative/configs/example_training/toy/mnist.yaml",
            dest="model/mnist_toy/mnist.yaml",
            note="copied unchanged to {assets}/model/mnist_toy/mnist.yaml; no pretrained weights",
        ),
    ],
    cpu=Run(
        [*MAIN, "--accelerator", "cpu", "--devices", "1", *ONE_STEP],
        cwd="{assets}/dataset/mnist",
        env={"CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=600,
        entrypoint="auto1111sdk/modules/generative/main.py",
    ),
    single_gpu=Run(
        [*MAIN, "--accelerator", "gpu", "--devices", "0", *ONE_STEP],
        cwd="{assets}/dataset/mnist",
        env={"CUDA_VISIBLE_DEVICES": "0", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=600,
        entrypoint="auto1111sdk/modules/generative/main.py",
    ),
    multi_gpu=self_launching(
        [*MAIN, "--accelerator", "gpu", "--devices", "0,1", *ONE_STEP],
        launcher="lightning",
        nproc=2,
        cwd="{assets}/dataset/mnist",
        env={"CUDA_VISIBLE_DEVICES": "0,1", "PYTHONDONTWRITEBYTECODE": "1"},
        timeout=1200,
        entrypoint="auto1111sdk/modules/generative/main.py",
        note=(
            "Lightning's own DDP strategy spawns the ranks (no torchrun). GPU gate is "
            "torch.cuda.device_count() under the report python; visible devices overridable with "
            "the probe's --cuda-visible-devices flag."
        ),
    ),
    c0_official_counts_none=(
        "its bundle's name regex is over-escaped (a raw string in a quoted heredoc) and matches"
        " no pyright message, so the official count is 0 whatever pyright finds"
        " (docs/real-runs.md, batch A1)"),
)
