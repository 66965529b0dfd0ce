"""Build sharegpt_train.jsonl with SpecForge's own scripts/prepare_data.py, offline.

The official prepare step ran ``scripts/prepare_data.py --dataset sharegpt
--sample-size 8 --output-path benchmark_assets/dataset`` under the report's
python; the script loaded the hub dataset Aeala/ShareGPT_Vicuna_unfiltered
(its ``train`` split: the repository's JSON files in sorted order), kept the
first 8 conversations and wrote them, roles mapped, to ``sharegpt_train.jsonl``.

Here the hub dataset was downloaded raw at prepare time and the stage has no
network, so this setup step

1. reads the first N (8) conversations of the raw JSON files, in sorted order,
   parsing only as much of each (large) file as needed, into ``OUT/sharegpt_head.json``;
2. runs the repository's ``prepare_data.py --dataset sharegpt --sample-size N
   --output-path OUT --data-path OUT/sharegpt_head.json`` under this interpreter
   (the script's own option for a local copy of the dataset), which writes
   ``OUT/sharegpt_train.jsonl``.

    python prepare_sharegpt.py REPO/scripts/prepare_data.py RAW_DIR OUT_DIR [N]

``prepare_data.py`` needs ``datasets``, which SpecForge itself requires.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from reb_shim import json_items  # pytest-reb's shim library, next on the path


def jsonl_items(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def data_files(raw):
    """The dataset's JSON files as the hub loader orders them (sorted paths, no hidden ones)."""
    found = [p for p in Path(raw).rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")
             and not any(part.startswith(".") for part in p.relative_to(raw).parts)]
    return sorted(found, key=lambda p: p.relative_to(raw).as_posix())


def head(raw, count):
    """The first ``count`` records of the dataset's train split."""
    out = []
    for path in data_files(raw):
        for item in (jsonl_items if path.suffix == ".jsonl" else json_items)(path):
            if len(out) >= count:
                return out
            out.append(item)
    return out


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: prepare_sharegpt.py PREPARE_DATA_PY RAW_DIR OUT_DIR [N]")
    script, raw, out = argv[0], Path(argv[1]), Path(argv[2])
    count = int(argv[3]) if len(argv) == 4 else 8
    if not data_files(raw):
        sys.exit(f"no .json/.jsonl file under {raw}")
    rows = head(raw, count)
    if not rows:
        sys.exit(f"the dataset under {raw} has no records")
    out.mkdir(parents=True, exist_ok=True)
    local = out / "sharegpt_head.json"
    local.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    cmd = [sys.executable, script, "--dataset", "sharegpt", "--sample-size", str(count),
           "--output-path", str(out), "--data-path", str(local)]
    print("running:", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, env=os.environ.copy())
    if rc != 0:
        sys.exit(f"prepare_data.py failed with exit code {rc}")
    if not (out / "sharegpt_train.jsonl").is_file():
        sys.exit(f"prepare_data.py wrote no {out / 'sharegpt_train.jsonl'}")


if __name__ == "__main__":
    main(sys.argv[1:])
