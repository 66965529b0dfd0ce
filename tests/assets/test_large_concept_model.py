"""large_concept_model's toy pretraining parquet
(``repos/test_facebookresearch__large_concept_model.py``): made by the setup against
stand-ins of pyarrow and stopes that record what is written.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import names, run_step
from support.repomodules import module, write_tree
from support.repomodules import runs as stages

#: Stand-ins of pyarrow and stopes that record what is written.
ARROW = {
    "pyarrow/__init__.py": """
        class Table(dict):
            @classmethod
            def from_pydict(cls, cols): return cls(cols)
        def concat_tables(tables):
            out = Table()
            for t in tables:
                for k, v in t.items(): out.setdefault(k, []).extend(v)
            return out
    """,
    "pyarrow/parquet.py": """
        import json, os
        def write_to_dataset(table, root, partition_cols=None, row_group_size=None):
            os.makedirs(root, exist_ok=True)
            embs = table["text_sentences_sonar_emb"]
            squares = sum(e["squares"] for e in embs) / sum(e["count"] for e in embs)
            with open(os.path.join(root, "written.json"), "w") as f:
                json.dump({"partition_cols": partition_cols, "row_group_size": row_group_size,
                           "split": table["split"], "text_sentences": table["text_sentences"],
                           "emb_shapes": [e["shape"] for e in embs],
                           "emb_std": squares ** 0.5}, f)
    """,
    "stopes/__init__.py": "",
    "stopes/utils/__init__.py": "",
    "stopes/utils/arrow_utils.py": """
        import numpy as np
        def nested_numpy_to_pyarrow(rows):
            return [{"shape": list(r.shape), "squares": float(np.square(r).sum()),
                     "count": int(r.size)} for r in rows]
    """,
}


def test_lcm_parquet_is_made_by_setup(tmp_path: Path) -> None:
    mod = module("test_facebookresearch__large_concept_model")
    made = next(a for a in mod.repo.assets if a.name == "lcm_toy_pretraining").synthetic
    assert made is not None and made.text is None and made.made_by
    site = write_tree(tmp_path / "site", ARROW)
    for run in stages(mod.repo):
        assert "lcm_toy_pretraining" not in names(mod.repo, run)
        for part in ("training", "validation"):
            assert f"++trainer.{part}_data[0].parquet_path={{out}}/lcm_toy_pretraining" in run.argv
    run = mod.repo.cpu
    (step,) = run.setup
    done = run_step(step, run, tmp_path, site, out=str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    got = json.loads((tmp_path / "out" / "lcm_toy_pretraining" / "written.json").read_text())
    assert got["partition_cols"] == ["split"] and got["row_group_size"] == 1
    assert got["split"] == ["train"] * 8 + ["validation"] * 4
    assert got["text_sentences"][0] == [f"Hello from train row 0 sent {j}." for j in range(4)]
    assert got["text_sentences"][8][3] == "Hello from validation row 0 sent 3."
    assert got["emb_shapes"] == [[4, 1024]] * 12
    assert abs(got["emb_std"] - 0.006) < 0.0005
