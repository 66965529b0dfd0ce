"""pytest-reb shim for kyegomez/VisionMamba (C4): the official generated torchrun worker.

Each rank selects the CUDA device of its ``LOCAL_RANK`` (when torch sees
CUDA), makes ``cuda`` torch's default device, applies the VisionEncoderMambaBlock
patches (vim_patch.py) and runs example.py as ``__main__`` from the repository
root, the launcher's working directory.  Ranks are independent: no process
group, no collective.  This is our rewrite of the official worker.
"""

import os

import torch  # the repository's own dependency
from vim_patch import run_example

if __name__ == "__main__":
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if hasattr(torch, "set_default_device"):  # torch >= 2.0
        torch.set_default_device("cuda")
    run_example()
