"""pytest-reb setup for alephpi/Texo: the one-sample UniMER-Train / UniMER-Eval datasets.

The official prepare loaded ``train[:1]`` of the hub dataset alephpi/UniMER-Train
with ``datasets.load_dataset``, turned each sample into ``{"image": <encoded
image bytes>, "text": <LaTeX>}`` (features: binary and string; a PIL image
encoded as PNG, a dict's ``bytes`` or the file at its ``path``), and saved that
dataset twice with ``save_to_disk``: as UniMER-Train and as UniMER-Eval (the
same sample serves for evaluation).  This script does the same from the raw hub
files prepare downloaded (RAW_DIR, a local copy of the dataset repository),
into OUT_DIR/UniMER-Train and OUT_DIR/UniMER-Eval.  datasets and Pillow are
dependencies of Texo itself.

Usage: save_unimer.py RAW_DIR OUT_DIR [SAMPLES]
"""

import io
import os
import sys


def image_bytes(img):
    """The encoded bytes of one sample's image, in the shapes datasets returns."""
    if isinstance(img, (bytes, bytearray)):
        return bytes(img)
    if isinstance(img, dict) and isinstance(img.get("bytes"), (bytes, bytearray)):
        return bytes(img["bytes"])
    if isinstance(img, dict) and isinstance(img.get("path"), str):
        with open(img["path"], "rb") as handle:
            return handle.read()
    if hasattr(img, "save"):  # a PIL image
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()
    raise RuntimeError(f"unsupported image type from dataset: {type(img)}")


def samples(rows):
    """``{"image": bytes, "text": str}`` for each row; a row without both keys fails."""
    out = []
    for item in rows:
        if "image" not in item or "text" not in item:
            raise RuntimeError(f"dataset item missing required keys: {list(item)}")
        text = str(item["text"])
        if not text:
            raise RuntimeError("empty text label in dataset sample")
        out.append({"image": image_bytes(item["image"]), "text": text})
    return out


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    raw_dir, out_dir = argv[0], argv[1]
    count = int(argv[2]) if len(argv) == 3 else 1
    from datasets import Dataset, Features, Value, load_dataset

    rows = load_dataset(raw_dir, split=f"train[:{count}]")
    features = Features({"image": Value("binary"), "text": Value("string")})
    small = Dataset.from_list(samples(rows), features=features)
    for name in ("UniMER-Train", "UniMER-Eval"):
        small.save_to_disk(os.path.join(out_dir, name))
    print(f"save_unimer.py: saved {len(small)} sample(s) to {out_dir}/UniMER-Train and "
          f"{out_dir}/UniMER-Eval")


if __name__ == "__main__":
    main(sys.argv[1:])
