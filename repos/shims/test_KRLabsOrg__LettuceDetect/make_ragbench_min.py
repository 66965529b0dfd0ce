"""Build the two training files the stages read from the raw RAGTruth download.

The official prepare step ran the repository's own
``lettucedetect/preprocess/preprocess_ragtruth.py`` on the downloaded
``response.jsonl`` and ``source_info.jsonl`` and then kept the first two
samples of the train split: the first stays ``train``, the second becomes
``dev``, both marked ``dataset = "ragbench"`` (so ``scripts/train.py`` takes
their split as is), written as ``ragbench_min.json``, next to an empty
``ragtruth_empty.json`` (``[]``).  This script does the same into ``--out``:

    ragtruth/ragtruth_data.json  what the repository's preprocessing wrote
    ragbench_min.json            the two relabelled samples
    ragtruth_empty.json          []

The raw files are only read.  The repository's script imports ``lettucedetect``
(and with it torch and transformers), so it runs under the report's python,
with the checkout first on ``PYTHONPATH`` in case the package is not installed.
Standard library only here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

PREPROCESS = Path("lettucedetect") / "preprocess" / "preprocess_ragtruth.py"


def preprocess(raw: Path, repo: Path, out: Path) -> Path:
    """Run the repository's RAGTruth preprocessing; the path of the json it wrote."""
    for name in ("response.jsonl", "source_info.jsonl"):
        if not (raw / name).is_file():
            raise SystemExit(f"missing raw RAGTruth file {raw / name}")
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH", "")) if p)
    subprocess.run([sys.executable, str(repo / PREPROCESS), "--input_dir", str(raw),
                    "--output_dir", str(out)], check=True, cwd=str(repo), env=env)
    data = out / "ragtruth_data.json"
    if not data.is_file():
        raise SystemExit(f"{PREPROCESS} wrote no {data}")
    return data


def reduce(data: Path, out: Path) -> list[dict]:
    """The first two train samples as one train and one dev sample of 'ragbench'."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    train = [s for s in samples if isinstance(s, dict) and s.get("split") == "train"]
    if len(train) < 2:
        raise SystemExit(f"need at least 2 train samples in {data}, found {len(train)}")
    picked = [dict(train[0], split="train", dataset="ragbench"),
              dict(train[1], split="dev", dataset="ragbench")]
    (out / "ragbench_min.json").write_text(
        json.dumps(picked, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "ragtruth_empty.json").write_text("[]\n", encoding="utf-8")
    return picked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", required=True, type=Path, help="folder of the raw jsonl files")
    parser.add_argument("--repo", required=True, type=Path, help="the LettuceDetect checkout")
    parser.add_argument("--out", required=True, type=Path, help="where to write the result")
    args = parser.parse_args(argv)
    data = preprocess(args.raw, args.repo, args.out / "ragtruth")
    reduce(data, args.out)
    print(f"wrote {args.out / 'ragbench_min.json'} and {args.out / 'ragtruth_empty.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
