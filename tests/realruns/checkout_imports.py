"""What a pinned checkout imports, and which import names a wheel provides.

``gpu_wheels.select`` keeps a row's wheels under a cap by leaving the biggest out; without
this it left out what the stage imported first (``wandb`` under F5-TTS's trainer module and
Olympus's ``train.py``, ``funasr`` with its ``jieba`` under SenseVoice's stand-in maker), and
those rows stopped before their own code.  The names come from every ``import`` of every
Python file of the commit (at any depth: a stage reaches functions' imports too) read from
the fetch mirror, and of the row's stand-in module (C0's own ``top_level_imports``); a
wheel's names from its ``top_level.txt`` or, without one, the first parts of its files' paths.
"""

from __future__ import annotations

import subprocess
import zipfile
from collections.abc import Iterable
from pathlib import Path

from pytest_reb.pyramid.c0_imports import top_level_imports


def imported(mirror: Path, commit: str, also: Iterable[Path] = ()) -> set[str]:
    """The names the checkout at ``commit`` of the git store ``mirror`` imports, with those of
    the files ``also`` (the row's stand-in module); empty where the store lacks the commit."""
    found: set[str] = set()
    for path in also:
        found |= top_level_imports(path.read_text("utf-8", "replace"))
    listing = subprocess.run(["git", "-C", str(mirror), "ls-tree", "-r", commit],
                             capture_output=True, text=True)
    if listing.returncode != 0:
        return found
    blobs = [line.split()[2] for line in listing.stdout.splitlines()
             if line.endswith(".py") and line.split()[1] == "blob"]
    batch = subprocess.run(["git", "-C", str(mirror), "cat-file", "--batch"],
                           input="".join(f"{sha}\n" for sha in blobs).encode(),
                           capture_output=True).stdout
    at = 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        if header[-1] == b"missing":  # the fetch left it out
            at = header_end + 1
            continue
        size = int(header[2])
        found |= top_level_imports(
            batch[header_end + 1:header_end + 1 + size].decode("utf-8", "replace"))
        at = header_end + 1 + size + 1
    return found


def provides(wheel: Path) -> set[str]:
    """The import names ``wheel`` installs."""
    with zipfile.ZipFile(wheel) as zf:
        members = zf.namelist()
        listed = [m for m in members if m.endswith(".dist-info/top_level.txt")]
        if listed:
            return {line.strip() for line in zf.read(listed[0]).decode().splitlines()
                    if line.strip()}
    tops = {m.split("/")[0] for m in members}
    return {t.split(".")[0] for t in tops if not t.endswith((".dist-info", ".data"))}
