"""Write the benchmark YAML and the one-row data list the official FunMusic prepare step made.

The official prepare step (not the stage probes) wrote two files both stages
read:

* ``inspiremusic_benchmark.yaml``: the repository's
  ``examples/music_generation/conf/inspiremusic.yaml`` with ``basemodel_path``
  set to the downloaded InspireMusic-Base folder (with a trailing slash) and
  ``generator_path`` to its ``music_tokenizer``, and ``max_epoch 1``,
  ``accum_grad 1``, ``log_interval 1``, ``save_per_step 0``,
  ``min_acoustic_length 1``, ``min_length 1``; every other line unchanged
  (the file uses HyperPyYAML tags, so it is edited as text);
* ``data_1row.list``: one line naming a parquet file holding only the first
  row of the repository's sample ``parquet_000000000.tar`` (a parquet file
  despite its name), so inference and training see one sample.

This script writes the same three files into an output folder, from the raw
copies of the two repository files in the asset view (``--yaml``,
``--parquet``; read-only).  Slicing the parquet needs pyarrow, which the
repository's own data pipeline imports (inspiremusic/dataset/processor.py); the
official step used it the same way.

Usage: make_inputs.py OUT_DIR --yaml FILE --parquet FILE --model-dir DIR
"""

import argparse
import os
import re
import sys

#: Integer settings the prepare step overwrote, and their values.
OVERRIDES = {
    "max_epoch": 1,
    "accum_grad": 1,
    "log_interval": 1,
    "save_per_step": 0,
    "min_acoustic_length": 1,
    "min_length": 1,
}


def rewrite_config(text, model_dir):
    """The benchmark YAML: the model paths and ``OVERRIDES`` replaced, line by line.

    A key the source does not hold (the repository changed) is an error, not a
    silent no-op.
    """
    paths = {"basemodel_path": model_dir.rstrip("/") + "/",
             "generator_path": os.path.join(model_dir.rstrip("/"), "music_tokenizer")}
    seen = set()
    out = []
    for line in text.splitlines(True):
        match = re.match(r"^(basemodel_path|generator_path):\s*'[^']*'\s*$", line)
        if match:
            key = match.group(1)
            line = f"{key}: '{paths[key]}'\n"
            seen.add(key)
        match = re.match(r"^(\s*)(\w+):\s*\d+\s*$", line)
        if match and match.group(2) in OVERRIDES:
            indent, key = match.groups()
            line = f"{indent}{key}: {OVERRIDES[key]}\n"
            seen.add(key)
        out.append(line)
    missing = sorted((set(OVERRIDES) | set(paths)) - seen)
    if missing:
        raise ValueError("not found in the training YAML: " + ", ".join(missing))
    return "".join(out)


def first_row(src, dst):
    """Write the first row of the parquet file ``src`` to ``dst``."""
    import pyarrow.parquet as pq  # the repository's data pipeline needs pyarrow anyway

    table = pq.read_table(src)
    if table.num_rows < 1:
        raise ValueError("parquet has no rows: " + src)
    pq.write_table(table.slice(0, 1), dst)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--yaml", required=True,
                        help="examples/music_generation/conf/inspiremusic.yaml (a copy)")
    parser.add_argument("--parquet", required=True,
                        help="the sample parquet_000000000.tar (a copy)")
    parser.add_argument("--model-dir", required=True, help="the InspireMusic-Base folder")
    args = parser.parse_args(argv)

    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    with open(args.yaml, encoding="utf-8") as fh:
        try:
            text = rewrite_config(fh.read(), args.model_dir)
        except ValueError as exc:
            sys.exit(str(exc))
    config = os.path.join(out, "inspiremusic_benchmark.yaml")
    with open(config, "w", encoding="utf-8") as fh:
        fh.write(text)

    parquet = os.path.join(out, "parquet_000000000_1row.parquet")
    first_row(args.parquet, parquet)
    with open(os.path.join(out, "data_1row.list"), "w", encoding="utf-8") as fh:
        fh.write(parquet + "\n")
    print("wrote " + config + ", " + parquet + " and data_1row.list")


if __name__ == "__main__":
    main()
