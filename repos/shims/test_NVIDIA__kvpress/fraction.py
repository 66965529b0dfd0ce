"""pytest-reb setup for NVIDIA/kvpress (C1, C3, C4): the one-sample ``--fraction``.

evaluation/evaluate.py keeps ``df.sample(frac=fraction)`` of the dataset's
test split.  The official prepare step loaded the split once with
``datasets.load_dataset(<hub id>, data_dir=<data dir>, split="test")``,
counted its N rows and stored ``min(1, (1 + 1e-6) / N)`` in manifest.json, a
fraction that selects exactly one row (the 1e-6 keeps float rounding from
selecting none); the stages passed it as ``--fraction``.  This script does the
same count at setup time and writes the value to a file the stage reads back
with ``{file:...}``.  It loads the split exactly as evaluate.py will (same
``datasets`` library, same HF_DATASETS_CACHE from the stage env, and our
sitecustomize.py beside it serving that call from the prepared hub files), so
it counts the rows evaluate.py samples from; it runs under the report's
python, and ``datasets`` is a dependency of kvpress's evaluation anyway.

Usage: fraction.py HUB_ID DATA_DIR OUT_FILE
"""

import os
import sys


def one_sample_fraction(rows):
    """The fraction of ``rows`` rows that ``DataFrame.sample`` turns into one row."""
    if rows <= 0:
        raise ValueError("the split has no rows")
    return min(1.0, (1.0 + 1e-6) / float(rows))


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    hub_id, data_dir, out_file = argv
    from datasets import load_dataset

    split = load_dataset(hub_id, data_dir=data_dir or None, split="test")
    fraction = one_sample_fraction(len(split))
    os.makedirs(os.path.dirname(os.path.abspath(out_file)), exist_ok=True)
    with open(out_file, "w") as handle:
        handle.write(repr(fraction) + "\n")
    print(f"fraction.py: {hub_id}/{data_dir} test has {len(split)} rows; "
          f"--fraction {fraction!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
