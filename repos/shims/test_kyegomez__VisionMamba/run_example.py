"""pytest-reb shim for kyegomez/VisionMamba (C1, C3): the official inline driver.

The official cpu and single-GPU stages ran ``python -c <driver>`` from the
repository root: put the root on sys.path, make ``cpu`` (C1) or ``cuda`` (C3,
after ``torch.cuda.set_device(0)``; exit 1 when torch sees no CUDA) torch's
default device so the tensors example.py creates land there, patch
VisionEncoderMambaBlock (see vim_patch.py) and run example.py as ``__main__``.
This script is our rewrite of that driver; ``--device`` picks the stage.
"""

import argparse
import sys

import torch  # the repository's own dependency
from vim_patch import run_example


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    args = parser.parse_args()
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("run_example: torch reports no CUDA device", file=sys.stderr)
            return 1
        torch.cuda.set_device(0)
    if hasattr(torch, "set_default_device"):  # torch >= 2.0
        torch.set_default_device(args.device)
    run_example()
    return 0


if __name__ == "__main__":
    sys.exit(main())
