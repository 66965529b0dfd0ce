"""pytest-reb shim for kyegomez/MultiModalMamba (C3, C4): run example.py on a chosen GPU.

The official harness ran the repository's example.py through a wrapper of its
own, ``benchmark_scripts/entrypoint_wrapper.py``: it selects the CUDA device
of the rank (``--local-rank``, else ``LOCAL_RANK``), makes ``cuda:<rank>``
torch's default device so the tensors the example creates land on the GPU,
and executes the example as ``__main__``.  Under torchrun every rank runs the
example on its own GPU, with no collective.  This is our rewrite of that
wrapper; it is mounted read-only at the same path and touches no tracked file.
"""

import argparse
import os
import runpy
import sys

import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrypoint", default="example.py")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--local-rank", type=int, default=None)
    args = parser.parse_args()
    rank = args.local_rank if args.local_rank is not None else int(os.environ.get("LOCAL_RANK", 0))
    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("entrypoint_wrapper: torch reports no CUDA device", file=sys.stderr)
            return 1
        torch.cuda.set_device(rank)
        torch.set_default_device(f"cuda:{rank}")
    else:
        torch.set_default_device("cpu")
    entry = os.path.abspath(args.entrypoint)
    sys.argv = [entry]
    sys.path.insert(0, os.path.dirname(entry))
    print(f"entrypoint_wrapper: rank {rank} runs {args.entrypoint} on {args.device}", flush=True)
    runpy.run_path(entry, run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
