"""GPU fakes as a repository module: TinyNet whose "GPU" stage does token GPU work, then the CPU.

Not collected by the normal suite (the name does not start with ``test_``);
``docs/gpu_evidence_run.sh`` passes it on a GPU machine once per fake, named
by ``REB_GPU_FAKE`` (a mode of ``fake_entries.py``: context, elementwise,
matmul, alloc, loop100).  Each exits 0 with ``TRAIN_OK``, so the official
rule passes it; strict C3 must fail it with ``no_gpu_compute``.  Its C4 is the same
fake in each of two torchrun ranks (gloo on the CPU after the token work): each rank
holds a context on its own GPU and computes nothing there, so strict C4 fails with
``no_gpu_compute`` and compat passes (issue 19; needs two GPUs).
"""

import os

from pytest_reb import Repo, Run, torchrun

MODE = os.environ.get("REB_GPU_FAKE", "context")
FAKE = ["{repo}/../../tests/gpu/fake_entries.py", MODE, "--steps", "5", "--out", "{out}/ckpt"]

repo = Repo(
    f"reb/tinynet-fake-{MODE}",
    commit="0" * 40,  # a stand-in: the scripts pass --reb-allow-commit-mismatch (the demo checkout)
    imports_total=8,
    single_gpu=Run(["{python}", *FAKE], env={"CUDA_VISIBLE_DEVICES": "0"}, timeout=300,
                   expect_log=["TRAIN_OK"]),
    multi_gpu=torchrun(*FAKE, nproc=2, env={"CUDA_VISIBLE_DEVICES": "0,1"}, timeout=600,
                       expect_log=["TRAIN_OK"]),
)
