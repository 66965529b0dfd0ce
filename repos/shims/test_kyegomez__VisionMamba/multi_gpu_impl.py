"""pytest-reb shim for kyegomez/VisionMamba (C4): the official generated launcher.

The official multi-GPU stage wrote ``{out}/multi_gpu_impl.py`` and ran it with
``NPROC`` and ``WORKER`` in the environment: it exits 1 unless torch sees CUDA
with at least 2 devices, then runs ``<this python> -m torch.distributed.run
--standalone --nproc_per_node $NPROC $WORKER`` and exits with its status.
This is our rewrite; the stage points WORKER at our torchrun_worker.py.
"""

import os
import subprocess
import sys

import torch  # the repository's own dependency


def main():
    nproc = int(os.environ.get("NPROC", "2"))
    worker = os.environ.get("WORKER", "")
    if not torch.cuda.is_available():
        print("[multi_gpu] CUDA not available")
        return 1
    count = torch.cuda.device_count()
    print(f"[multi_gpu] visible_gpu_count={count}")
    if count < 2:
        print("[multi_gpu] need >= 2 GPUs for this stage")
        return 1
    if not worker:
        print("[multi_gpu] WORKER path missing")
        return 1
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           "--nproc_per_node", str(nproc), worker]
    print("[multi_gpu] launch:", " ".join(cmd), flush=True)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
