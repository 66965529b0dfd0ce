"""pytest-reb setup for facebookresearch/large_concept_model: the toy pretraining parquet.

The official prepare wrote, under the report's python, a parquet dataset
partitioned by ``split`` (one row group per row) with 8 ``train`` and 4
``validation`` rows; each row holds 4 sentences ``"Hello from <split> row
<i> sent <j>."`` (column ``text_sentences``) and their 1024-dim random
SONAR-like embeddings, normal with std 0.006 (column
``text_sentences_sonar_emb``, converted with stopes'
``nested_numpy_to_pyarrow``).  This script writes the same dataset into
OUT_DIR, which the stage's ``parquet_path`` overrides name.  pyarrow, numpy
and stopes are dependencies of the repository itself; the embeddings are drawn
with numpy (the official used torch.randn: same distribution, any values).

Usage: make_parquet.py OUT_DIR
"""

import sys

SONAR_DIM = 1024
SONAR_STD = 0.006
SENTENCES = 4
ROWS = {"train": 8, "validation": 4}


def columns(split, rows, rng):
    """The three columns of ``rows`` rows of ``split``; embeddings as one numpy array each."""
    texts = [[f"Hello from {split} row {i} sent {j}." for j in range(SENTENCES)]
             for i in range(rows)]
    embs = rng.standard_normal((rows, SENTENCES, SONAR_DIM)).astype("float32") * SONAR_STD
    return {"split": [split] * rows, "text_sentences": texts,
            "text_sentences_sonar_emb": [row for row in embs]}


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__.strip().splitlines()[-1])
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from stopes.utils.arrow_utils import nested_numpy_to_pyarrow

    rng = np.random.default_rng(0)
    tables = []
    for split, rows in ROWS.items():
        cols = columns(split, rows, rng)
        cols["text_sentences_sonar_emb"] = nested_numpy_to_pyarrow(
            cols["text_sentences_sonar_emb"])
        tables.append(pa.Table.from_pydict(cols))
    pq.write_to_dataset(pa.concat_tables(tables), argv[0], partition_cols=["split"],
                        row_group_size=1)
    print(f"make_parquet.py: wrote {dict(ROWS)} rows to {argv[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
