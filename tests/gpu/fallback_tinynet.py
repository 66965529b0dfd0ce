"""A negative for the GPU tiers: TinyNet whose "GPU" stages never touch a GPU.

Not collected by the normal suite (the name does not start with ``test_``);
``docs/gpu_run.sh`` passes it explicitly on a GPU machine.  Its C3 exits 0
on the CPU: the official rule passes it, strict C3 must fail it with
``no_gpu_evidence``.  Its C4 trains over gloo on the CPU: ranks that never
hold a GPU, so strict C4 fails and compat passes (given 2 GPUs).
"""

from pytest_reb import Repo, Run, torchrun

TRAIN = ["train.py", "--steps", "3", "--out", "{out}/ckpt", "--device", "cpu"]

repo = Repo(
    "reb/tinynet-cpu-fallback",
    commit="0" * 40,  # a stand-in: the scripts pass --reb-allow-commit-mismatch (the demo checkout)
    imports_total=8,
    single_gpu=Run(["{python}", *TRAIN], env={"CUDA_VISIBLE_DEVICES": "0"}, timeout=300),
    multi_gpu=torchrun(*TRAIN, nproc=2, env={"CUDA_VISIBLE_DEVICES": "0,1"}, timeout=600),
)
