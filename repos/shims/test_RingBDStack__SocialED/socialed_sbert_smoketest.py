"""pytest-reb shim for RingBDStack/SocialED (C1, C3, C4): the official SBERT smoketest driver.

The official entrypoint is a driver the harness wrote, not a repository CLI.
From the prepare step's results.json (``--prepare-results``) it takes the
dataset subset and the model folder, keeps at most ``--max-samples`` rows
(with ``--distributed`` under torchrun: rank LOCAL_RANK's CUDA device and every
WORLD_SIZE-th row from LOCAL_RANK on, no collective), loads
``SocialED/detector/sbert.py`` by file path (the detector package's
``__init__`` imports many optional detectors), wraps the rows in a tiny
dataset object and runs SBERT ``preprocess``, ``detection`` and ``evaluate``,
then writes ``run.json`` (``rank<N>.json`` when distributed) to
``--artifact-dir``.  ``--require-gpu-count N`` fails unless torch sees CUDA
with at least N devices.  This is our rewrite; relative paths are taken from
the repository root, the working directory.  numpy, pandas and torch are
dependencies of the repository's sbert.py.
"""

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

#: Event2012's columns, as the official prepare and driver name them.
COLUMNS = ["tweet_id", "text", "event_id", "words", "filtered_words", "entities", "user_id",
           "created_at", "urls", "hashtags", "user_mentions"]


def fail(message):
    print(f"[socialed_sbert_smoketest] {message}", file=sys.stderr)
    return 1


class BenchDataset:
    """The dataset interface SBERT uses: load_data() plus a language and a name."""

    def __init__(self, df):
        self.df = df

    def load_data(self):
        return self.df

    def get_dataset_language(self):
        return "English"

    def get_dataset_name(self):
        return "benchmark_subset"


def load_sbert(root):
    """SBERT from SocialED/detector/sbert.py, without importing the detector package."""
    sys.path.insert(0, str(root / "SocialED"))  # sbert.py imports dataset.dataloader
    path = root / "SocialED" / "detector" / "sbert.py"
    spec = importlib.util.spec_from_file_location("socialed_detector_sbert", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SBERT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prepare-results", default="build_output/prepare/results.json")
    parser.add_argument("--max-samples", type=int, default=12)
    parser.add_argument("--artifact-dir", default="")
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--require-gpu-count", type=int, default=0)
    args = parser.parse_args()
    root = Path.cwd()

    results = root / args.prepare_results
    if not results.exists():
        return fail(f"prepare results not found: {results}")
    found = json.loads(results.read_text(encoding="utf-8")).get("assets", {})
    paths = {}
    for what in ("dataset", "model"):
        raw = str(found.get(what, {}).get("path", ""))
        if not raw:
            return fail(f"{what} asset path missing")
        paths[what] = root / raw
        if not paths[what].exists():
            return fail(f"{what} path missing: {paths[what]}")

    rank = world = None
    if args.distributed:
        rank = int(os.environ["LOCAL_RANK"]) if "LOCAL_RANK" in os.environ else None
        world = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else None
    if args.require_gpu_count > 0 or rank is not None:
        import torch

        if args.require_gpu_count > 0:
            count = torch.cuda.device_count()
            if not torch.cuda.is_available() or count < args.require_gpu_count:
                return fail(f"require_gpus={args.require_gpu_count} but cuda_available="
                            f"{torch.cuda.is_available()} gpu_count={count}")
        if rank is not None and torch.cuda.is_available():
            torch.cuda.set_device(rank)

    import numpy as np
    import pandas as pd

    df = pd.DataFrame(np.load(paths["dataset"], allow_pickle=True), columns=COLUMNS)
    keep = max(2, args.max_samples)
    if rank is not None and world and world > 1:
        df = df.iloc[rank::world]
    df = df.head(keep).copy()

    detector = load_sbert(root)(BenchDataset(df), model_name=str(paths["model"]))
    detector.df = detector.preprocess().head(keep).copy()
    truths, predictions = detector.detection()
    detector.evaluate(truths, predictions)

    if args.artifact_dir:
        folder = root / args.artifact_dir
        folder.mkdir(parents=True, exist_ok=True)
        record = {"timestamp_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "local_rank": rank, "world_size": world,
                  "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
                  "dataset_rows": len(detector.df)}
        name = f"rank{rank}.json" if rank is not None else "run.json"
        (folder / name).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
