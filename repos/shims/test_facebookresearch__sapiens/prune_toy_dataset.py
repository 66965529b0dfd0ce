"""Cut the Sapiens toy dataset down to one sample (images/, masks/, normals/).

The official prepare step unpacked the Hugging Face dataset
``facebook/sapiens_toy_dataset`` (its zip archives, else its ``images``,
``masks``, ``normals`` folders) and pruned it to ONE sample so that batch 1
and max_epochs 1 give exactly one training iteration: the first image in
sorted order (.png/.jpg/.jpeg) and the mask and normal map with the same stem
(the first of each, sorted).  This script writes that one sample into
``--out`` (``images/<name>``, ``masks/<name>``, ``normals/<name>``) from the
raw download, read in place: loose files under top-level ``images/``,
``masks/``, ``normals/`` folders, or members of its ``.zip`` archives whose
folder (or, for flat members, whose archive name) is one of those.  Only the
three chosen files are extracted.  Standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath

KINDS = ("images", "masks", "normals")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def candidates(raw: Path) -> dict[str, dict[str, tuple[Path, str | None]]]:
    """kind -> file name -> (file, None) or (archive, member), over folders and zips."""
    found: dict[str, dict[str, tuple[Path, str | None]]] = {k: {} for k in KINDS}
    for kind in KINDS:
        folder = raw / kind
        if folder.is_dir():
            for path in folder.iterdir():
                if path.is_file():
                    found[kind][path.name] = (path, None)
    for archive in sorted(raw.rglob("*.zip")):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                member = PurePosixPath(info.filename)
                parent = member.parent.name if len(member.parts) > 1 else archive.stem
                if parent in KINDS and member.name not in found[parent]:
                    found[parent][member.name] = (archive, info.filename)
    return found


def choose(found: dict[str, dict[str, tuple[Path, str | None]]]) -> dict[str, str]:
    """The first image by name and the mask and normal of the same stem."""
    images = sorted(n for n in found["images"] if n.lower().endswith(IMAGE_SUFFIXES))
    if not images:
        raise SystemExit("no image files found in the dataset's images/")
    stem = PurePosixPath(images[0]).stem
    picked = {"images": images[0]}
    for kind in ("masks", "normals"):
        same = sorted(n for n in found[kind] if PurePosixPath(n).stem == stem)
        if not same:
            raise SystemExit(f"no {kind} file for the sample {stem!r}")
        picked[kind] = same[0]
    return picked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", required=True, type=Path, help="the downloaded toy dataset")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    if not args.raw.is_dir():
        raise SystemExit(f"missing the downloaded dataset {args.raw}")
    found = candidates(args.raw)
    picked = choose(found)
    for kind, name in picked.items():
        source, member = found[kind][name]
        dest = args.out / kind / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if member is None:
            shutil.copyfile(source, dest)
        else:
            with zipfile.ZipFile(source) as zf, zf.open(member) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
        print(f"{kind}: {name} (from {source.name}{':' + member if member else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
