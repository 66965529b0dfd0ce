"""Write the finetrainers dataset config that points at the prepared crush-smol snapshot.

The official prepare step downloaded ``finetrainers/crush-smol`` and wrote
``dataset_config.json`` for ``train.py --dataset_config``: one local video
dataset, ``data_root`` = the snapshot, ``id_token`` PIKA_CRUSH, one resolution
bucket of 49 frames at 480x832, bicubic reshaping and common LLM caption
prefixes removed.  This script writes the same json with ``data_root`` = the
folder it is given (where the target sees the prepared snapshot), after
checking the folder holds files.  Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def config(data_root: str) -> dict:
    return {"datasets": [{
        "data_root": data_root,
        "dataset_type": "video",
        "id_token": "PIKA_CRUSH",
        "video_resolution_buckets": [[49, 480, 832]],
        "reshape_mode": "bicubic",
        "remove_common_llm_caption_prefixes": True,
    }]}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        raise SystemExit("usage: dataset_config.py DATA_ROOT OUT_JSON")
    root, dest = Path(args[0]), Path(args[1])
    if not root.is_dir() or not any(p.is_file() for p in root.rglob("*")):
        raise SystemExit(f"the prepared dataset {root} is missing or empty")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(config(str(root)), ensure_ascii=False, indent=2) + "\n",
                    encoding="utf-8")
    print(f"wrote {dest} (data_root {root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
