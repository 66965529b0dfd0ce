"""Write the path of the prepared FRCRN_SE_16K checkpoint to a file, for ``{file:...}``.

Reproduces how the official prepare step chose the checkpoint every ClearerVoice stage passes
as ``--init_checkpoint_path`` (recorded as meta.model_checkpoint_path): in the snapshot folder,
``last_best_checkpoint.pt``; else the file named on the first line of ``last_best_checkpoint``
when it exists; else the first ``*.pt`` (by name). The folders are tried in the order given (the
official model/FRCRN_SE_16K link, then the snapshot it pointed to); the first one holding a
checkpoint wins. No checkpoint anywhere: exit 1, which fails the stage before train.py starts
(the official stage failed with category ``model``).

Usage: frcrn_checkpoint.py OUT_FILE FOLDER [FOLDER ...]     (stdlib only)
"""

import sys
from pathlib import Path


def choose(folder):
    """The checkpoint the official prepare would record for ``folder``, or None."""
    best = folder / "last_best_checkpoint.pt"
    if best.is_file():
        return best
    pointer = folder / "last_best_checkpoint"
    if pointer.is_file():
        lines = pointer.read_text(encoding="utf-8", errors="replace").splitlines()
        name = lines[0].strip() if lines else ""
        if name and (folder / name).is_file():
            return folder / name
    found = sorted(p for p in folder.glob("*.pt") if p.is_file())
    return found[0] if found else None


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out, folders = Path(argv[0]), [Path(a) for a in argv[1:]]
    found = [choose(f) for f in folders if f.is_dir()]
    checkpoint = next((c for c in found if c is not None), None)
    if checkpoint is None:
        sys.exit(f"[frcrn_checkpoint] no FRCRN checkpoint in {' or '.join(argv[1:])}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(str(checkpoint) + "\n", encoding="utf-8")
    print(f"[frcrn_checkpoint] {checkpoint}")


if __name__ == "__main__":
    main(sys.argv[1:])
