"""Texo's UniMER set (``repos/test_alephpi__Texo.py``): prepared raw and saved by the setup
against a stand-in ``datasets``.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import names, run_step
from support.repomodules import module, write_tree
from support.repomodules import runs as stages

#: A stand-in ``datasets``: load_dataset reads a JSON list from the raw folder and honours
#: ``train[:N]``; save_to_disk writes the rows and features as JSON.
DATASETS = {"datasets/__init__.py": """
    import json, os, re
    class Value:
        def __init__(self, dtype): self.dtype = dtype
    class Features(dict):
        pass
    class Dataset(list):
        features = None
        @classmethod
        def from_list(cls, rows, features=None):
            ds = cls(rows); ds.features = features; return ds
        def save_to_disk(self, path):
            os.makedirs(path)
            with open(os.path.join(path, "rows.json"), "w") as f:
                json.dump({"features": {k: v.dtype for k, v in self.features.items()},
                           "rows": [{k: (v.decode("latin-1") if isinstance(v, bytes) else v)
                                     for k, v in r.items()} for r in self]}, f)
    def load_dataset(path, split=None):
        rows = json.load(open(os.path.join(path, "rows.json")))
        n = int(re.fullmatch(r"train\\[:(\\d+)\\]", split).group(1))
        for r in rows:
            if isinstance(r["image"], str) and r["image"].startswith("bytes:"):
                r["image"] = {"bytes": r["image"][6:].encode(), "path": None}
        return rows[:n]
"""}


def test_texo_unimer_is_prepared_raw_and_saved_by_setup(tmp_path: Path) -> None:
    mod = module("test_alephpi__Texo")
    asset = next(a for a in mod.repo.assets if a.name == "UniMER-Train")
    for run in stages(mod.repo):
        assert "UniMER-Train" in names(mod.repo, run)
        assert "data.train_dataset_path={out}/UniMER-Train" in run.argv
        assert "data.eval_dataset_path={out}/UniMER-Eval" in run.argv
    site = write_tree(tmp_path / "site", DATASETS)
    view = tmp_path / "assets"
    raw = view / asset.dest
    raw.mkdir(parents=True)
    (raw / "rows.json").write_text(json.dumps([
        {"image": "bytes:PNG0", "text": "x^2"}, {"image": "bytes:PNG1", "text": "y"}]))
    run = mod.repo.cpu
    (step,) = run.setup
    done = run_step(step, run, tmp_path, site, assets=str(view), out=str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    for name in ("UniMER-Train", "UniMER-Eval"):
        saved = json.loads((tmp_path / "out" / name / "rows.json").read_text())
        assert saved == {"features": {"image": "binary", "text": "string"},
                         "rows": [{"image": "PNG0", "text": "x^2"}]}


def test_texo_rejects_a_sample_without_text(tmp_path: Path) -> None:
    mod = module("test_alephpi__Texo")
    site = write_tree(tmp_path / "site", DATASETS)
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "rows.json").write_text(json.dumps([{"image": "bytes:P"}]))
    done = run_step(["{python}", "{shims}/save_unimer.py", str(raw), str(tmp_path / "out")],
                    mod.repo.cpu, tmp_path, site)
    assert done.returncode != 0 and "missing required keys" in done.stderr


def test_the_bleu_additions_are_where_evaluate_looks_without_the_network() -> None:
    """pytest-reb's two additions (the official stage fetched the metric at run time) sit in
    evaluate's modules cache under each stage's HF_HOME, in one folder named like a hash, where
    evaluate's cached-module fallback imports evaluate_modules.metrics.<name>.<hash>.bleu."""
    mod = module("test_alephpi__Texo")
    bleu, nmt = (next(a for a in mod.repo.assets if a.name == n) for n in ("bleu", "nmt_bleu"))
    assert bleu.dest == nmt.dest == mod.BLEU_MODULE
    *_, modules, dynamic, kind, name, digest = mod.BLEU_MODULE.rstrip("/").split("/")
    assert (modules, dynamic, kind, name) == ("modules", "evaluate_modules", "metrics",
                                              "evaluate-metric--bleu")
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert [*bleu.files, *nmt.files] == ["bleu.py", "tokenizer_13a.py", "nmt_bleu.py"]
    assert nmt.url_paths == {"nmt_bleu.py": "bleu.py"}
    for run in stages(mod.repo):
        home = run.env["HF_HOME"].removeprefix("{assets}/")
        assert mod.BLEU_MODULE.startswith(home + "/modules/")
        assert {"bleu", "nmt_bleu"} <= set(names(mod.repo, run))
