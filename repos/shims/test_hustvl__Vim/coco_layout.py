"""Lay the prepared COCO val2017_100 files out as Detectron2's DETECTRON2_DATASETS folder.

Detectron2 registers ``coco_2017_val_100`` as ``coco/val2017`` (images) and
``coco/annotations/instances_val2017_100.json`` under ``$DETECTRON2_DATASETS``.
The official prepare step unpacked ``val2017_100.tgz`` into ``coco/`` and
copied ``instances_val2017_100.json`` into ``coco/annotations/``.  The
prepared asset folder (``--raw``) holds the unpacked ``val2017/`` and the json
side by side (or, from a cache filled elsewhere, the tgz itself); this script
builds ``--out``/coco with ``val2017`` linking to the prepared images (or
unpacked from the tgz) and ``annotations/instances_val2017_100.json`` copied.
The run's DETECTRON2_DATASETS is ``--out``.  Standard library only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
from pathlib import Path, PurePosixPath

ANNOTATIONS = "instances_val2017_100.json"
ARCHIVE = "val2017_100.tgz"


def unpack_images(archive: Path, coco: Path) -> None:
    """The ``val2017/`` members of the tgz (regular files only, never outside ``coco``)."""
    with tarfile.open(archive) as tar:
        for member in tar:
            path = PurePosixPath(member.name)
            if not member.isfile() or path.is_absolute() or ".." in path.parts:
                continue
            parts = [p for p in path.parts if p != "."]
            if not parts or parts[0] != "val2017":
                continue
            dest = coco.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            if src is not None:
                with src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", required=True, type=Path, help="the prepared coco files")
    parser.add_argument("--out", required=True, type=Path, help="the DETECTRON2_DATASETS folder")
    args = parser.parse_args(argv)
    raw, coco = args.raw.resolve(), args.out / "coco"
    annotations = raw / ANNOTATIONS
    if not annotations.is_file():
        raise SystemExit(f"missing {annotations}")
    (coco / "annotations").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(annotations, coco / "annotations" / ANNOTATIONS)
    images = coco / "val2017"
    if images.is_symlink():
        images.unlink()
    if (raw / "val2017").is_dir():
        images.symlink_to(raw / "val2017", target_is_directory=True)
    elif (raw / ARCHIVE).is_file():
        unpack_images(raw / ARCHIVE, coco)
    if not images.is_dir() or not any(images.iterdir()):
        raise SystemExit(f"no val2017 images in {raw} (neither unpacked nor in {ARCHIVE})")
    print(f"laid out {coco}: val2017 ({sum(1 for _ in images.iterdir())} files), "
          f"annotations/{ANNOTATIONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
