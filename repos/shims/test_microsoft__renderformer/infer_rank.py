"""One torchrun rank of RenderFormer's C4 stage: render this rank's scene on this rank's GPU.

Reproduces the official per-rank bash script that a bare ``torchrun --nproc_per_node=2`` ran on
every rank (two independent renders, no collective):

* the GPU is the entry at index ``LOCAL_RANK`` of the comma-separated ``CUDA_VISIBLE_DEVICES``
  (none there: exit 1, as the script did), and becomes the only visible device;
* the scene is the ``--scene`` at index ``LOCAL_RANK``, the last one for higher ranks (the
  stage passes cbox.h5 then shader-ball.h5: rank 0 renders cbox, rank 1 shader-ball);
* the output folder ``<--out-base>/output_rank<LOCAL_RANK>`` is made;
* the command after ``--`` (``{python} infer.py --model_id ... --precision fp16 --resolution
  64``) is executed in place of this process with ``--h5_file <scene> --output_dir <folder>``
  appended and ``ATTN_IMPL=sdpa``.

torchrun starts this file with its own interpreter; stdlib only.
"""

import argparse
import os
import sys
from pathlib import Path


def plan(argv, environ):
    """(argv to execute, extra environment, output folder) for this rank; SystemExit when the
    rank has no GPU."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", action="append", required=True)
    parser.add_argument("--out-base", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command after --")
    rank = int(environ.get("LOCAL_RANK", "0"))
    visible = environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
    gpu = visible[rank].strip() if rank < len(visible) else ""
    if not gpu:
        raise SystemExit(f"rank {rank} has no GPU mapping for VISIBLE={','.join(visible)}")
    scene = args.scene[min(rank, len(args.scene) - 1)]
    out_dir = Path(args.out_base) / f"output_rank{rank}"
    return ([*command, "--h5_file", scene, "--output_dir", str(out_dir)],
            {"CUDA_VISIBLE_DEVICES": gpu, "ATTN_IMPL": "sdpa"}, out_dir)


def main(argv=None):
    command, extra, out_dir = plan(sys.argv[1:] if argv is None else argv, os.environ)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"[infer_rank] CUDA_VISIBLE_DEVICES={extra['CUDA_VISIBLE_DEVICES']} "
          + " ".join(command), flush=True)
    os.execvpe(command[0], command, {**os.environ, **extra})


if __name__ == "__main__":
    main()
