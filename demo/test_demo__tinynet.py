"""TinyNet: pytest-reb's built-in demo repository (a tiny MLP trained on synthetic blobs).

Not one of the 44: a small research-like repository with the three modes a
real one has (CPU, one GPU, ``torchrun`` DDP), so the whole pyramid can be
seen on any machine.  The image that ``pytest_reb.loop.demo`` builds of it is
the "agent-built" environment: a venv with torch and PyYAML, the checkout
at the official path, and a truthful ``report.json``.  Its commit is made
deterministically from the tree, so it is pinned here like any other.
"""

from pytest_reb import Repo, Run, torchrun

TRAIN = ["train.py", "--steps", "5", "--out", "{out}/ckpt"]

repo = Repo(
    "reb/tinynet",
    commit="4c5ec0ca65b7196eca763afb430fd54617b262e5",
    imports_total=8,
    domain="demo: tiny classifier training (synthetic data, no downloads)",
    cpu=Run(["{python}", *TRAIN, "--device", "cpu"], env={"CUDA_VISIBLE_DEVICES": ""},
            timeout=300, expect_log=["TRAIN_OK"], entrypoint="train.py"),
    single_gpu=Run(["{python}", *TRAIN, "--device", "cuda"], env={"CUDA_VISIBLE_DEVICES": "0"},
                   timeout=300, expect_log=["TRAIN_OK"], entrypoint="train.py"),
    multi_gpu=torchrun(*TRAIN, "--device", "cuda", nproc=2, env={"CUDA_VISIBLE_DEVICES": "0,1"},
                       timeout=600, expect_log=["TRAIN_OK"], entrypoint="train.py"),
)
