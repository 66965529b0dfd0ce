"""Turn the tinyshakespeare text into the sharegpt-style JSON chitu's benchmark reads.

The official prepare step downloaded karpathy's tinyshakespeare ``input.txt`` and
converted it: the non-empty lines, stripped, are joined with spaces into chunks
of at least 400 characters (so ShareGPTDataset can sample 8-token prompts); the
first ``SCIMLOPSBENCH_DATASET_NUM_SAMPLES`` (64) chunks each become one record
``{"conversations": [{"from": "human", "value": chunk}, {"from": "gpt", "value": ""}]}``.
This setup step does the same from the raw download, read-only, into the
stage's scratch folder:

    python sharegpt_from_text.py RAW/tinyshakespeare_sharegpt.txt OUT/tinyshakespeare_sharegpt.json
"""

import json
import os
import sys

MIN_CHARS = 400


def chunks(text, count):
    """Chunks of whole lines, each at least MIN_CHARS long counting one separator per line."""
    out, buf, size = [], [], 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        buf.append(line)
        size += len(line) + 1
        if size >= MIN_CHARS:
            out.append(" ".join(buf))
            buf, size = [], 0
        if len(out) >= max(count, 8):
            break
    return out[:count]


def records(text, count):
    return [{"conversations": [{"from": "human", "value": c}, {"from": "gpt", "value": ""}]}
            for c in chunks(text, count)]


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: sharegpt_from_text.py TEXT OUT_JSON")
    try:
        count = int(os.environ.get("SCIMLOPSBENCH_DATASET_NUM_SAMPLES", "64"))
    except ValueError:
        count = 64
    with open(argv[0], encoding="utf-8", errors="replace") as fh:
        data = records(fh.read(), count)
    if not data:
        sys.exit(f"{argv[0]} gave no samples")
    with open(argv[1], "w", encoding="utf-8") as out:
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    print(f"wrote {len(data)} samples to {argv[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
