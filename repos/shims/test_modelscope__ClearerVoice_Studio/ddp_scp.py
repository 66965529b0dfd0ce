"""Write a DDP-safe copy of a ClearerVoice scp list: its first line once per rank.

Reproduces the C4 probe step that wrote ``{out}/train_ddp.scp`` and ``{out}/cv_ddp.scp``:
the repository's DistributedSampler assumes at least one line per rank, and the prepared lists
hold one line, so the first line (a trailing CR dropped) is written NPROC times. An empty source
list exits 1, failing the stage as the official probe did (category ``data``).

Usage: ddp_scp.py NPROC SOURCE.scp DEST.scp     (stdlib only)
"""

import sys
from pathlib import Path


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    copies, source, dest = int(argv[0]), Path(argv[1]), Path(argv[2])
    lines = source.read_text(encoding="utf-8").splitlines()
    first = lines[0].rstrip("\r") if lines else ""
    if not first:
        sys.exit(f"[ddp_scp] {source} is empty")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(f"{first}\n" * copies, encoding="utf-8")
    print(f"[ddp_scp] {dest}: {copies} x {first}")


if __name__ == "__main__":
    main(sys.argv[1:])
