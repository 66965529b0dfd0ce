"""Rebuild ml-mdm's dummy tar index and file list around the prepared tar.

The repository's own index (``ml-mdm-matryoshka/tests/test_files/images_00000.tsv``)
and file list name the tar by a path relative to ``ml-mdm-matryoshka/``.  The
official prepare step copied the tar into its assets folder and rewrote both
so that they point at the copy:

    images_00000.tsv        tar <TAB> file <TAB> caption, one row per sample,
                            tar = the prepared images_00000.tar
    sample_training_0.tsv   a ``filename`` column naming images_00000.tsv

This script writes the same two files into ``--out`` from the repository's
index (its rows, only the tar column replaced; each file must be in the tar).
The paths are absolute, where the official ones were relative to the working
folder: ``--out`` is not under the checkout.  Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tarfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tar", required=True, type=Path, help="the prepared images_00000.tar")
    parser.add_argument("--index", required=True, type=Path,
                        help="the repository's images_00000.tsv (tar, file, caption)")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    tar = args.tar.resolve()
    with tarfile.open(tar) as archive:
        members = set(archive.getnames())
    with open(args.index, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if not rows or any(set(r) != {"tar", "file", "caption"} for r in rows):
        raise SystemExit(f"{args.index} is not a tar/file/caption index with rows")
    missing = [r["file"] for r in rows if r["file"] not in members]
    if missing:
        raise SystemExit(f"{tar} holds none of {missing}")
    args.out.mkdir(parents=True, exist_ok=True)
    index = args.out.resolve() / "images_00000.tsv"
    with open(index, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t", lineterminator="\n")
        writer.writerow(["tar", "file", "caption"])
        for row in rows:
            writer.writerow([str(tar), row["file"], row["caption"]])
    (args.out / "sample_training_0.tsv").write_text(f"filename\n{index}\n", encoding="utf-8")
    print(f"wrote {index} ({len(rows)} row(s)) and {args.out / 'sample_training_0.tsv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
