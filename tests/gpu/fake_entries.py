"""The GPU fakes measured on the H200 (docs/gpu.md), each an entrypoint that exits 0.

``python fake_entries.py MODE ARGS...`` does MODE's token GPU work, if any,
then trains the demo on the CPU (``train.py ARGS --device cpu``), as a
corner-cutting "GPU" stage would.  ``honest`` runs the demo on CUDA.
"""

import runpy
import sys
from pathlib import Path

TRAIN = Path(__file__).resolve().parents[2] / "demo" / "tinynet" / "train.py"


def token(mode: str) -> None:
    import os

    import torch

    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))  # a rank's own GPU

    if mode == "context":  # a CUDA context, then "no GPU" for the program
        torch.zeros(1, device="cuda")
        torch.cuda.is_available = lambda: False
    elif mode == "elementwise":  # one tiny elementwise kernel
        (torch.ones(4, device="cuda") * 2).sum().item()
    elif mode == "matmul":  # one tiny matmul: cuBLAS loads, memory looks like a real run
        (torch.ones(16, 32, device="cuda") @ torch.ones(32, 1, device="cuda")).sum().item()
    elif mode == "alloc":  # a gigabyte held, nothing computed
        keep = torch.empty(1 << 28, device="cuda")
        globals()["_keep"] = keep
    elif mode == "loop100":  # a hundred tiny kernels: where a token becomes a small workload
        x = torch.ones(4, device="cuda")
        for _ in range(100):
            x = x * 1.0
        x.sum().item()
    elif mode != "honest":
        sys.exit(f"unknown mode {mode}")


def main() -> None:
    mode, *args = sys.argv[1:]
    token(mode)
    sys.argv = [str(TRAIN), *args, "--device", "cuda" if mode == "honest" else "cpu"]
    sys.path.insert(0, str(TRAIN.parent))
    runpy.run_path(str(TRAIN), run_name="__main__")


if __name__ == "__main__":
    main()
