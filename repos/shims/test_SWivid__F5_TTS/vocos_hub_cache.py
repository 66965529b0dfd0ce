"""Lay F5-TTS's prepared vocoder copy out as the Hugging Face cache its inference reads (C1, C3).

``infer_cli`` loads the vocoder by hub id: ``load_vocoder`` (``is_local`` false)
calls ``hf_hub_download("charactr/vocos-mel-24khz", "config.yaml")`` and
``"pytorch_model.bin"``, and the stages run with ``HF_HUB_OFFLINE=1`` and
``HF_HUB_CACHE={assets}/cache/huggingface/hub``.  The official prepare
downloaded the vocoder into that cache and copied the files to
``{assets}/model/vocos-mel-24khz`` besides; the asset is declared at the copy
(the official note's place), so this step puts the cache entry the download
left back beside it, made of links to the copy:

    HUB/models--charactr--vocos-mel-24khz/refs/main        the revision
    HUB/models--charactr--vocos-mel-24khz/snapshots/REV/   config.yaml, pytorch_model.bin

which is what an offline ``hf_hub_download`` reads (``refs/main`` names the
snapshot; the files are looked up in it).  ``HUB`` is the run's
``HF_HUB_CACHE`` (the view's ``cache/`` is writable scratch in each stage).
The revision is a placeholder: the copy does not record the download's.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO_ID = "charactr/vocos-mel-24khz"
FILES = ("config.yaml", "pytorch_model.bin")
#: The snapshot's name: no commit of the hub repository is recorded with the copy.
REVISION = "0" * 40


def lay_out(copy: Path, hub: Path) -> Path:
    """The cache entry for the copy's files under ``hub``; returns its snapshot folder."""
    missing = [name for name in FILES if not (copy / name).is_file()]
    if missing:
        raise SystemExit(f"vocos_hub_cache: {copy} lacks {', '.join(missing)} (the prepared "
                         f"copy of {REPO_ID})")
    entry = hub / ("models--" + REPO_ID.replace("/", "--"))
    snapshot = entry / "snapshots" / REVISION
    snapshot.mkdir(parents=True, exist_ok=True)
    (entry / "refs").mkdir(exist_ok=True)
    (entry / "refs" / "main").write_text(REVISION)
    for name in FILES:
        link = snapshot / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(os.path.abspath(copy / name))
    return snapshot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copy", type=Path, required=True,
                        help="the prepared copy, {assets}/model/vocos-mel-24khz")
    parser.add_argument("--hub", type=Path, default=None,
                        help="the hub cache (default: $HF_HUB_CACHE)")
    args = parser.parse_args(argv)
    hub = args.hub or (Path(os.environ["HF_HUB_CACHE"]) if os.environ.get("HF_HUB_CACHE")
                       else None)
    if hub is None:
        raise SystemExit("vocos_hub_cache: no --hub and no HF_HUB_CACHE")
    print("vocos_hub_cache:", lay_out(args.copy, hub))
    return 0


if __name__ == "__main__":
    sys.exit(main())
