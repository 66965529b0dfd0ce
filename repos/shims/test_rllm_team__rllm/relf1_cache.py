"""Lay the RelBench rel-f1 zips out as rllm's dataset cache and process it, on the CPU.

The official prepare step downloaded ``db.zip`` and the three task zips into
``benchmark_assets/cache/dataset/rel-f1``, unpacked them the way
``RelF1Dataset`` expects under ``--cache_dir`` (``rel-f1/raw/db/*.parquet``,
``rel-f1/raw/tasks/<task>/{train,val,test}.parquet``) and then built
``rel-f1/processed`` by loading the dataset once with CUDA hidden
(``RelF1Dataset(cached_dir=...).load_all()``), so the stages found a ready cache.

The prepared view is read-only, so this setup step builds that cache in the
stage's scratch folder, which the stage then passes as ``--cache_dir``:

    python relf1_cache.py ZIP_DIR OUT_CACHE_DIR

A task zip may be named ``tasks_<task>.zip`` (the official cache name),
``<task>.zip`` or ``tasks/<task>.zip``.  Processing imports ``rllm`` from the
checkout (the current directory, as the official step did) and embeds text with
the GloVe model; when ``SENTENCE_TRANSFORMERS_HOME`` does not hold it but the
hub cache under ``HF_HOME`` does (where prepare put it), that cache is used.
"""

import os
import sys
import zipfile
from pathlib import Path

NAME = "rel-f1"
TASKS = ("driver-dnf", "driver-position", "driver-top3")
GLOVE = "models--sentence-transformers--average_word_embeddings_glove.6B.300d"


def find_zip(folder, task):
    for rel in (f"tasks_{task}.zip", f"{task}.zip", f"tasks/{task}.zip"):
        if (folder / rel).is_file():
            return folder / rel
    raise SystemExit(f"no zip of task {task} under {folder}")


def unpack(zips, cache):
    """``cache/rel-f1/raw/db`` from db.zip, ``cache/rel-f1/raw/tasks/<task>`` from each task."""
    raw = cache / NAME / "raw"
    (raw / "tasks").mkdir(parents=True, exist_ok=True)
    if not (zips / "db.zip").is_file():
        raise SystemExit(f"no db.zip under {zips}")
    with zipfile.ZipFile(zips / "db.zip") as archive:
        archive.extractall(raw)
    for task in TASKS:
        with zipfile.ZipFile(find_zip(zips, task)) as archive:
            archive.extractall(raw / "tasks")
    return raw


def glove_from_hub_cache():
    """Point sentence-transformers at the hub cache when only that holds the GloVe model."""
    home = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
    hub = Path(os.environ.get("HF_HOME", str(Path.home() / ".cache" / "huggingface"))) / "hub"
    if (hub / GLOVE).is_dir() and not (home and (Path(home) / GLOVE).is_dir()):
        os.environ["SENTENCE_TRANSFORMERS_HOME"] = str(hub)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")


def process(cache):
    """Load the dataset once with CUDA hidden, as the official step did: writes processed/."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    glove_from_hub_cache()
    sys.path.insert(0, os.getcwd())
    from rllm.datasets import RelF1Dataset

    RelF1Dataset(cached_dir=str(cache)).load_all()
    print("RelF1Dataset load_all OK (CPU)")


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: relf1_cache.py ZIP_DIR OUT_CACHE_DIR")
    zips, cache = Path(argv[0]), Path(argv[1])
    raw = unpack(zips, cache)
    print(f"unpacked {zips} into {raw}")
    process(cache)


if __name__ == "__main__":
    main(sys.argv[1:])
