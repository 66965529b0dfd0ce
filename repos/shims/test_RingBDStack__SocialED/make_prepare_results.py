"""pytest-reb shim for RingBDStack/SocialED: the part of the official prepare the stages read.

The official prepare step (prepare_assets_impl.py) copied Event2012.npy out of
a clone of SocialED_datasets, saved its first SUBSET rows (at least 2; 12 by
default) as ``Event2012_subset.npy`` and linked the SBERT model folder; it
then wrote ``build_output/prepare/results.json``, whose
``assets.dataset.path`` (the subset) and ``assets.model.path`` (the model
folder) are all the smoketest driver reads.  Our asset cache holds the
downloads; this setup step makes the subset and that results.json under
``--out``.  numpy is a dependency of the repository (and of the driver).
"""

import argparse
import json
import sys
from pathlib import Path

#: Event2012's columns, as the official prepare and driver name them.
COLUMNS = ("tweet_id", "text", "event_id", "words", "filtered_words", "entities", "user_id",
           "created_at", "urls", "hashtags", "user_mentions")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="the full Event2012.npy")
    parser.add_argument("--model", required=True, help="the SBERT model folder")
    parser.add_argument("--subset-size", type=int, default=12)
    parser.add_argument("--out", required=True, help="folder for the subset and results.json")
    args = parser.parse_args()
    import numpy as np

    data = np.load(args.dataset, allow_pickle=True)
    if data.ndim != 2 or data.shape[1] != len(COLUMNS):
        sys.exit(f"{args.dataset}: expected rows of {len(COLUMNS)} columns, got shape "
                 f"{data.shape}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    subset = out / (Path(args.dataset).stem + "_subset.npy")
    np.save(subset, data[:max(2, args.subset_size)], allow_pickle=True)
    results = {"status": "success", "stage": "prepare", "exit_code": 0,
               "assets": {"dataset": {"path": str(subset.resolve())},
                          "model": {"path": str(Path(args.model).resolve())}}}
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"prepared {subset} ({min(len(data), max(2, args.subset_size))} rows)")


if __name__ == "__main__":
    main()
