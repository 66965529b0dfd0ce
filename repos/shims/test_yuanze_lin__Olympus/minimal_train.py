"""Cut the downloaded Olympus.json down to the one-example training file the stages read.

The official prepare step took the first example of Olympus.json, dropped its
``image`` field, kept at most its first two conversation turns and wrote the
result as a one-element JSON list (``benchmark_assets/dataset/minimal_train.json``).
This setup step does the same from the raw download, read-only, into the
stage's scratch folder:

    python minimal_train.py RAW/Olympus.json OUT/minimal_train.json

Olympus.json is large, so only its first element is parsed (standard library only).
"""

import json
import sys

from reb_shim import json_items  # pytest-reb's shim library, next on the path


def minimal(item):
    """The official cut: no image, at most two turns."""
    if not isinstance(item, dict):
        raise ValueError("the first item of Olympus.json is not an object")
    item = dict(item)
    item.pop("image", None)
    turns = item.get("conversations")
    if isinstance(turns, list) and len(turns) > 2:
        item["conversations"] = turns[:2]
    return item


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: minimal_train.py OLYMPUS_JSON OUT_JSON")
    first = next(json_items(argv[0]), None)
    if first is None:
        sys.exit(f"{argv[0]} is an empty list")
    with open(argv[1], "w", encoding="utf-8") as out:
        out.write(json.dumps([minimal(first)], ensure_ascii=False, indent=2))
    print(f"wrote 1 example to {argv[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
