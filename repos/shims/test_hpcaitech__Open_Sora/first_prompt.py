"""Write Open-Sora's one-prompt csv from the repository's example prompts.

The official prepare step read ``assets/texts/example.csv`` with
``csv.DictReader`` and wrote its first row's ``text`` as a csv with the single
column ``text`` (header + one row; the prompt ``raining, sea`` when the file
has no row or no ``text`` column).  This script does the same from the
prepared copy of that file to the path it is given.  Standard library only.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

FALLBACK = "raining, sea"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: first_prompt.py EXAMPLE_CSV OUT_CSV")
    source, dest = Path(args[0]), Path(args[1])
    with open(source, encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh), None)
    if first and first.get("text") is not None:
        text = first["text"]
    else:
        text = FALLBACK
        print(f"warning: {source} has no first 'text' row; writing the fallback prompt")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["text"])
        writer.writeheader()
        writer.writerow({"text": text})
    print(f"wrote {dest}: {text[:60]!r}...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
