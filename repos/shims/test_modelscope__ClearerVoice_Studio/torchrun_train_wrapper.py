"""Run ClearerVoice's train/speech_enhancement/train.py as one torchrun rank.

Reproduces the official harness wrapper ``benchmark_scripts/torchrun_train_wrapper.py`` of the
C4 stage. train.py reads its rank only from a ``--local-rank`` flag, and every rank would write
the same checkpoint folder, so for each rank this wrapper:

* takes the rank from ``--local_rank``/``--local-rank`` (removed from the arguments; older
  launchers pass it) or else from ``LOCAL_RANK`` (torchrun), default 0, and passes it on as
  ``--local-rank N`` in front of the other arguments;
* points ``--checkpoint_dir D`` at ``D/rank<N>`` (made) for every rank but 0;
* changes into the folder of train.py (the current folder's train.py, else the repository's
  ``train/speech_enhancement/train.py`` next to the probe folder), puts it first on sys.path
  and executes train.py as ``__main__`` in this process, so torchrun supervises train.py itself.

Stdlib only.
"""

import os
import runpy
import sys
from pathlib import Path

RANK_FLAGS = ("--local_rank", "--local-rank")


def pop_rank(args):
    """``args`` without the rank flag, and the rank it gave (None when absent)."""
    rest, rank, i = [], None, 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in RANK_FLAGS and "=" in arg:
            rank = arg.split("=", 1)[1]
        elif arg in RANK_FLAGS and i + 1 < len(args):
            rank = args[i + 1]
            i += 1
        else:
            rest.append(arg)
        i += 1
    return rest, rank


def per_rank_checkpoints(args, rank):
    """``args`` with the first --checkpoint_dir moved to a rank<N> subfolder (not for rank 0)."""
    if rank == "0":
        return list(args)
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--checkpoint_dir" and i + 1 < len(out):
            folder = Path(out[i + 1]) / f"rank{rank}"
            out[i + 1] = str(folder)
        elif arg.startswith("--checkpoint_dir="):
            folder = Path(arg.split("=", 1)[1]) / f"rank{rank}"
            out[i] = f"--checkpoint_dir={folder}"
        else:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        return out
    return out


def train_script():
    here = Path.cwd() / "train.py"
    if here.is_file():
        return here
    return Path(__file__).resolve().parent.parent / "train" / "speech_enhancement" / "train.py"


def main(argv=None):
    args, rank = pop_rank(list(sys.argv[1:] if argv is None else argv))
    rank = (rank if rank is not None else os.environ.get("LOCAL_RANK", "")).strip() or "0"
    args = per_rank_checkpoints(args, rank)
    script = train_script()
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    sys.argv = [str(script), "--local-rank", rank, *args]
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
