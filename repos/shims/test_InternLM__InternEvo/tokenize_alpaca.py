"""Tokenise a 64-example Alpaca sample with InternEvo's own tool, as the official prepare did.

The official prepare step downloaded ``alpaca_data.json`` (Stanford Alpaca), kept its first
``--max-examples`` records (64) as ``alpaca_data.sample64.json`` and ran the repository's
``tools/alpaca_tokenizer.py SAMPLE OUT TOKENIZER --split_ratio 0.1`` under the report's python,
which writes ``OUT/{train,valid}/en/dataset.bin`` and ``dataset.bin.meta`` (InternEvo's
"tokenized" format); it then required all four files to be non-empty and recorded the sample,
the tokenizer and their digests in ``OUT/manifest.json``.  This script does the same from the raw
download (read-only) into an output folder.  The tool is the repository's; it needs numpy,
sentencepiece and tqdm, which InternEvo's requirements carry.

Usage: tokenize_alpaca.py RAW.json OUT_DIR --tokenizer FILE --tool FILE
       [--max-examples 64] [--split-ratio 0.1]          (stdlib only)
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", help="the downloaded alpaca_data.json")
    parser.add_argument("out", help="the tokenized dataset folder to write")
    parser.add_argument("--tokenizer", required=True, help="InternLM2 tokenizer.model")
    parser.add_argument("--tool", required=True, help="the repository's tools/alpaca_tokenizer.py")
    parser.add_argument("--max-examples", type=int, default=64)
    parser.add_argument("--split-ratio", default="0.1")
    args = parser.parse_args(argv)

    if not os.path.isfile(args.tokenizer):
        sys.exit("tokenizer.model not found: " + args.tokenizer)  # official category "model"
    with open(args.raw, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        sys.exit("alpaca_data.json expected a JSON array")

    out = os.path.abspath(args.out)
    sample = os.path.join(os.path.dirname(out),
                          f"alpaca_data.sample{args.max_examples}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(sample, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data[:args.max_examples], ensure_ascii=False, indent=2) + "\n")

    shutil.rmtree(out, ignore_errors=True)  # the official step started from an empty folder
    os.makedirs(out)
    cmd = [sys.executable, args.tool, sample, out, args.tokenizer,
           "--split_ratio", args.split_ratio]
    print("[tokenize_alpaca] " + " ".join(cmd), flush=True)
    code = subprocess.call(cmd)
    if code:
        sys.exit(f"tokenization failed (rc={code})")

    wanted = [os.path.join(out, split, "en", name) for split in ("train", "valid")
              for name in ("dataset.bin", "dataset.bin.meta")]
    empty = [p for p in wanted if not (os.path.isfile(p) and os.path.getsize(p) > 0)]
    if empty:
        sys.exit("tokenized dataset incomplete, missing or empty: " + ", ".join(empty))
    manifest = {
        "sample_path": sample, "sample_sha256": sha256(sample),
        "tokenizer_path": args.tokenizer, "tokenizer_sha256": sha256(args.tokenizer),
        "max_examples": args.max_examples, "split_ratio": args.split_ratio,
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    print("[tokenize_alpaca] wrote " + out)


if __name__ == "__main__":
    main()
