"""rllm's rel-f1 zips (``repos/test_rllm_team__rllm.py``): fetched from the server's paths
under the official cache names and unpacked by the setup as RelF1Dataset's cache.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from support.assets import view_path, with_url
from support.repomodules import Stage, module
from support.repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed


def test_rel_f1_zips_come_from_the_servers_paths(tmp_path: Path,
                                                 served: tuple[str, Path]) -> None:
    """The declared files are the official cache names (tasks_<task>.zip); the server has them
    at tasks/<task>.zip, and they land under the declared names where the setup reads them."""
    base, www = served
    (www / "tasks").mkdir()
    (www / "db.zip").write_bytes(b"db")
    for task in ("driver-dnf", "driver-position", "driver-top3"):
        (www / "tasks" / f"{task}.zip").write_bytes(task.encode())
    repo = module("test_rllm_team__rllm").repo
    repo, local = with_url(repo, "rel-f1", f"{base}/")
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[local])
    assert done.status == "ready", done.detail
    folder = cache.view(repo) / "cache" / "dataset" / "rel-f1"
    assert sorted(p.name for p in folder.iterdir()) == [
        "db.zip", "tasks_driver-dnf.zip", "tasks_driver-position.zip", "tasks_driver-top3.zip"]
    assert (folder / "tasks_driver-top3.zip").read_bytes() == b"driver-top3"
    for run in stages(repo):
        assert "rel-f1" in [a.name for a in needed(repo, run)]


TABLES = ["circuits", "constructor_results", "constructors", "constructor_standings", "drivers",
          "qualifying", "races", "results", "standings"]


TASKS = ["driver-dnf", "driver-position", "driver-top3"]


#: A stand-in of rllm.datasets.RelF1Dataset: the pinned paths it reads and writes.
RLLM = f'''
import json, os
from pathlib import Path
TABLES, TASKS = {TABLES!r}, {TASKS!r}

class RelF1Dataset:
    def __init__(self, cached_dir, force_reload=False):
        self.root = Path(cached_dir) / "rel-f1"
        raw = self.root / "raw"
        for t in TABLES:
            assert (raw / "db" / (t + ".parquet")).is_file(), t
        for task in TASKS:
            for split in ("train", "val", "test"):
                assert (raw / "tasks" / task / (split + ".parquet")).is_file(), (task, split)

    def load_all(self):
        processed = self.root / "processed"
        processed.mkdir()
        (processed / "seen.json").write_text(json.dumps({{
            k: os.environ.get(k) for k in
            ("CUDA_VISIBLE_DEVICES", "SENTENCE_TRANSFORMERS_HOME", "HF_HUB_OFFLINE")}}))
'''


def relbench_zips(folder: Path, task_name: str = "tasks_{}.zip") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / "db.zip", "w") as z:
        for t in TABLES:
            z.writestr(f"db/{t}.parquet", t)
    for task in TASKS:
        path = folder / task_name.format(task)
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as z:
            for split in ("train", "val", "test"):
                z.writestr(f"{task}/{split}.parquet", split)


def test_rllm_rel_f1_cache(tmp_path: Path) -> None:
    """The zips are unpacked as RelF1Dataset's cache under --cache_dir and processed once with
    CUDA hidden; the GloVe model is found in the hub cache prepare filled."""
    mod = module("test_rllm_team__rllm")
    for i, run in enumerate(stages(mod.repo)):
        places = Stage(run, tmp_path / str(i))
        (places.repo / "rllm" / "datasets").mkdir(parents=True)
        (places.repo / "rllm" / "__init__.py").write_text("")
        (places.repo / "rllm" / "datasets" / "__init__.py").write_text(RLLM)
        relbench_zips(view_path(mod.repo, "rel-f1", places))
        hub = places.assets / "cache" / "huggingface" / "hub"
        (hub / "models--sentence-transformers--average_word_embeddings_glove.6B.300d").mkdir(
            parents=True)
        places.setup()
        cache_dir = Path(places.arg("--cache_dir"))
        assert cache_dir == places.out / "dataset"
        seen = json.loads((cache_dir / "rel-f1" / "processed" / "seen.json").read_text())
        assert seen == {"CUDA_VISIBLE_DEVICES": "", "SENTENCE_TRANSFORMERS_HOME": str(hub),
                        "HF_HUB_OFFLINE": "1"}
        assert (cache_dir / "rel-f1" / "raw" / "tasks" / "driver-top3" / "val.parquet"
                ).read_text() == "val"


@pytest.mark.parametrize("task_name", ["{}.zip", "tasks/{}.zip"])
def test_rllm_other_zip_names_and_kept_sentence_transformers_home(tmp_path: Path,
                                                                  task_name: str) -> None:
    run = module("test_rllm_team__rllm").repo.cpu
    places = Stage(run, tmp_path)
    (places.repo / "rllm" / "datasets").mkdir(parents=True)
    (places.repo / "rllm" / "__init__.py").write_text("")
    (places.repo / "rllm" / "datasets" / "__init__.py").write_text(RLLM)
    relbench_zips(places.assets / "cache" / "dataset" / "rel-f1", task_name)
    own = places.assets / "cache" / "sentence_transformers"
    (own / "models--sentence-transformers--average_word_embeddings_glove.6B.300d").mkdir(
        parents=True)
    places.setup()
    seen = json.loads((places.out / "dataset" / "rel-f1" / "processed" / "seen.json").read_text())
    assert seen["SENTENCE_TRANSFORMERS_HOME"] == str(own) and seen["HF_HUB_OFFLINE"] is None


def test_rllm_missing_task_zip_fails(tmp_path: Path) -> None:
    run = module("test_rllm_team__rllm").repo.cpu
    places = Stage(run, tmp_path)
    zips = places.assets / "cache" / "dataset" / "rel-f1"
    relbench_zips(zips)
    (zips / "tasks_driver-top3.zip").unlink()
    res = places.setup(check=False)
    assert res.returncode != 0 and "no zip of task driver-top3" in res.stderr
