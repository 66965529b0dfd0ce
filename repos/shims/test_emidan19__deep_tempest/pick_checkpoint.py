"""Resolve the DRUNet checkpoint from the raw owncloud download, as the official prepare did.

The official prepare downloaded the share link and then:

* a zip that is itself a PyTorch checkpoint (``torch.save``'s format: under one prefix,
  ``data.pkl``, ``version`` and ``data/...``) was used as it is, as ``pretrained.pth``;
* any other zip was an archive: among its files named ``*.pth``, ``*.pt``, ``*.ckpt``,
  ``*.pth.tar`` or ``*.bin`` (any case) it took a ``*_G.pth`` first, else the largest (ties: the
  first by name), as ``pretrained<ext>``; none was an error (category ``model``);
* anything else was taken to be a raw checkpoint, ``pretrained.pth``;
* a file that starts like a zip but is not a readable one is a truncated download: an error.

This script does the same from the download in the asset view (read-only) into an output
folder: the download itself is linked there, a file picked out of an archive is extracted there.

Usage: pick_checkpoint.py DOWNLOAD OUT_DIR     (stdlib only)
"""

import os
import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath

SUFFIXES = (".pth", ".pt", ".ckpt", ".pth.tar", ".bin")


def is_torch_checkpoint(names):
    """True when the zip member names are torch.save's layout under some prefix."""
    names = set(names)
    prefixes = {""} | {n.split("/", 1)[0] for n in names if "/" in n}
    for prefix in prefixes:
        lead = prefix + "/" if prefix else ""
        if (lead + "data.pkl" in names and lead + "version" in names
                and any(n.startswith(lead + "data/") for n in names)):
            return True
    return False


def extension(name):
    lower = name.lower()
    for ext in (".pth.tar", ".ckpt", ".pt", ".bin"):
        if lower.endswith(ext):
            return ext
    return ".pth"


def pick(infos):
    """The member the prepare step chose: a *_G.pth first, else the largest."""
    candidates = sorted((i for i in infos if not i.is_dir()
                         and PurePosixPath(i.filename).name.lower().endswith(SUFFIXES)),
                        key=lambda i: i.filename)
    if not candidates:
        return None
    return max(candidates, key=lambda i: (PurePosixPath(i.filename).name.endswith("_G.pth"),
                                          i.file_size))


def link(src, dest):
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    try:
        os.symlink(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    download, out = Path(argv[0]).absolute(), Path(argv[1])
    if not download.is_file() or download.stat().st_size == 0:
        sys.exit(f"[pick_checkpoint] missing or empty model download: {download}")
    out.mkdir(parents=True, exist_ok=True)
    if not zipfile.is_zipfile(download):
        with open(download, "rb") as fh:
            if fh.read(2) == b"PK":
                sys.exit(f"[pick_checkpoint] {download} looks like a truncated zip")
        chosen = out / "pretrained.pth"  # a raw checkpoint
        link(download, chosen)
    else:
        with zipfile.ZipFile(download) as archive:
            infos = archive.infolist()
            if is_torch_checkpoint(i.filename for i in infos if not i.is_dir()):
                chosen = out / "pretrained.pth"
                link(download, chosen)
            else:
                member = pick(infos)
                if member is None:
                    sys.exit(f"[pick_checkpoint] no checkpoint-like file "
                             f"({', '.join('*' + s for s in SUFFIXES)}) in {download}")
                chosen = out / ("pretrained" + extension(member.filename))
                with archive.open(member) as src, open(chosen, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                print(f"[pick_checkpoint] picked {member.filename} out of the archive")
    print(f"[pick_checkpoint] {chosen}")


if __name__ == "__main__":
    main(sys.argv[1:])
