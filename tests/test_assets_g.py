"""Assets the official prepare post-processed, for Olympus, chitu, SpecForge, rllm and yomitoku.

Prepare fetches the raw download; each stage that reads it turns it into what
the official prepare wrote, in a ``setup`` step (our scripts in
``repos/shims/<module>/``).  Each test lays a small stand-in of the raw asset
out where the layout puts it, runs the stage's setup steps exactly as its
module declares them (placeholders filled with temporary folders, the host
python as ``{python}``; stand-ins for the repository code they call) and checks
what they wrote against what the official prepare wrote and what the stage's
argv then reads.  Nothing here needs torch or the network.
"""

from __future__ import annotations

import json
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from repomodules import Stage, module  # tests/repomodules.py
from repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed
from pytest_reb.spec import Repo

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "repos"








def asset(repo: Repo, name: str):  # type: ignore[no-untyped-def]
    return next(a for a in repo.assets if a.name == name)


def view_path(repo: Repo, name: str, places: Stage, file: str = "") -> Path:
    """Where the view holds the raw asset (a file inside a folder dest when ``file``)."""
    dest = asset(repo, name).dest
    return places.assets / dest / file if file else places.assets / dest


# --------------------------------------------------------------------------- the layouts

MADE_REAL = [
    ("test_yuanze_lin__Olympus", "olympus_min"),
    ("test_thu_pacman__chitu", "tinyshakespeare_sharegpt"),
    ("test_sgl_project__SpecForge", "sharegpt_train"),
]


@pytest.mark.parametrize(("stem", "name"), MADE_REAL)
def test_layout_is_real_and_every_stage_needs_it(stem: str, name: str) -> None:
    repo = module(stem).repo
    for run in stages(repo):
        assert name in [a.name for a in needed(repo, run)]
        assert run.setup and run.shim_dir


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
    local = replace(asset(repo, "rel-f1"), url=f"{base}/")
    repo = replace(repo, assets=[local if a.name == local.name else a for a in repo.assets])
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[local])
    assert done.status == "ready", done.detail
    folder = cache.view(repo) / "cache" / "dataset" / "rel-f1"
    assert sorted(p.name for p in folder.iterdir()) == [
        "db.zip", "tasks_driver-dnf.zip", "tasks_driver-position.zip", "tasks_driver-top3.zip"]
    assert (folder / "tasks_driver-top3.zip").read_bytes() == b"driver-top3"
    for run in stages(repo):
        assert "rel-f1" in [a.name for a in needed(repo, run)]


def test_yomitoku_models_are_the_hub_ids_of_its_configs(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The asset's id is a pattern; prepare fetches the four repositories the pinned configs
    name, each into the one HF cache (a stand-in hub client records what was asked)."""
    import types

    repo = module("test_kotaro_kinoshita__yomitoku").repo
    models = asset(repo, "yomitoku_models")
    assert "*" in str(models.id) and len(models.hub_ids) == 4
    asked: list[str] = []

    def snapshot_download(*, repo_id: str, cache_dir: str, **_: object) -> None:
        asked.append(repo_id)
        folder = Path(cache_dir) / f"models--{repo_id.replace('/', '--')}"
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_text(repo_id)

    monkeypatch.setitem(sys.modules, "huggingface_hub",
                        types.SimpleNamespace(snapshot_download=snapshot_download))
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[models])
    assert done.status == "ready", done.detail
    assert asked == list(models.hub_ids)
    hub = cache.view(repo) / "cache" / "huggingface" / "hub"
    assert len(list(hub.glob("models--KotaroKinoshita--yomitoku-*/model.safetensors"))) == 4
    for run in stages(repo):
        assert "yomitoku_models" in [a.name for a in needed(repo, run)]

# --------------------------------------------------------------------------- Olympus


def test_olympus_minimal_train(tmp_path: Path) -> None:
    """First example, image dropped, two turns kept; only the first element is parsed."""
    mod = module("test_yuanze_lin__Olympus")
    first = {"id": "a", "image": "coco/1.jpg", "conversations": [
        {"from": "human", "value": "<image>\nWhat is shown? ünïcode"},
        {"from": "gpt", "value": "A cat."}, {"from": "human", "value": "More?"}]}
    second = {"id": "b", "conversations": []}
    for run in stages(mod.repo):
        places = Stage(run, tmp_path / run.argv[-1])
        raw = view_path(mod.repo, "olympus_min", places, "Olympus.json")
        raw.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps([first, second], indent=2)
        raw.write_text(text[:text.index('"b"') + 5])  # a cut-off tail is never read
        places.setup()
        data_path = Path(places.arg("--data_path"))
        assert data_path.parent == places.out
        written = json.loads(data_path.read_text(encoding="utf-8"))
        assert written == [{"id": "a", "conversations": first["conversations"][:2]}]
        assert "ünïcode" in data_path.read_text(encoding="utf-8")  # ensure_ascii=False


def test_olympus_raw_file_lands_where_the_setup_reads_it(tmp_path: Path) -> None:
    mod = module("test_yuanze_lin__Olympus")
    src = tmp_path / "Olympus.json"
    src.write_text("[]")
    cache = AssetCache(tmp_path / "cache")
    cache.ingest(mod.repo, "olympus_min", src, origin="stand-in")
    run = mod.repo.cpu
    step = run.setup[0]
    rel = step[2].removeprefix("{assets}/")
    assert (cache.view(mod.repo) / rel).is_file()


# --------------------------------------------------------------------------- chitu


LINES = [f"Line number {i} of the play, spoken with feeling." for i in range(1000)]


def test_chitu_sharegpt_json(tmp_path: Path) -> None:
    mod = module("test_thu_pacman__chitu")
    text = "\n\n".join(["First Citizen:", *LINES])  # blank lines are skipped
    for run in stages(mod.repo):
        places = Stage(run, tmp_path / str(run.nproc))
        raw = places.assets / run.setup[0][2].removeprefix("{assets}/")
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(text)
        places.setup()
        path = next(places.fill(a).split("=", 1)[1] for a in run.argv
                    if a.startswith("benchmark.dataset_path="))
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        assert len(data) == 64
        prompts = [d["conversations"][0]["value"] for d in data]
        assert all(d["conversations"] == [{"from": "human", "value": p},
                                          {"from": "gpt", "value": ""}]
                   for d, p in zip(data, prompts, strict=True))
        assert prompts[0].startswith("First Citizen: Line number 0 of")
        # whole lines, in order, none lost; each chunk just reaches 400 counted characters
        assert " ".join(["First Citizen:", *LINES]).startswith(" ".join(prompts))
        assert all(p.endswith("with feeling.") and 399 <= len(p) < 399 + 50 for p in prompts)


def test_chitu_sample_count_and_empty_text(tmp_path: Path) -> None:
    run = module("test_thu_pacman__chitu").repo.single_gpu
    places = Stage(run, tmp_path)
    raw = places.assets / run.setup[0][2].removeprefix("{assets}/")
    raw.parent.mkdir(parents=True)
    raw.write_text("\n".join(LINES))
    places.setup(SCIMLOPSBENCH_DATASET_NUM_SAMPLES="3")
    assert len(json.loads((places.out / "tinyshakespeare_sharegpt.json").read_text())) == 3
    raw.write_text("\n  \n")
    res = places.setup(check=False)
    assert res.returncode != 0 and "no samples" in res.stderr




def test_chitu_download_lands_where_the_setup_reads_it(tmp_path: Path,
                                                       served: tuple[str, Path]) -> None:
    """The url asset's input.txt is renamed to the official raw name in the view."""
    base, www = served
    (www / "input.txt").write_text("\n".join(LINES))
    repo = module("test_thu_pacman__chitu").repo
    local = replace(asset(repo, "tinyshakespeare_sharegpt"), url=f"{base}/input.txt")
    repo = replace(repo, assets=[local if a.name == local.name else a for a in repo.assets])
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[local])
    assert done.status == "ready", done.detail
    rel = repo.single_gpu.setup[0][2].removeprefix("{assets}/")
    assert (cache.view(repo) / rel).read_text() == "\n".join(LINES)


# --------------------------------------------------------------------------- SpecForge

#: A stand-in of scripts/prepare_data.py at the pinned commit: the same options, its
#: --data-path branch, and its sharegpt row processing (roles mapped, others skipped).
PREPARE_DATA = '''
import argparse, json, sys
from pathlib import Path
ROLES = {"human": "user", "gpt": "assistant", "chatgpt": "assistant", "bing": "assistant",
         "bard": "assistant"}
p = argparse.ArgumentParser()
for opt in ("--dataset", "--output-path", "--data-path"):
    p.add_argument(opt)
p.add_argument("--sample-size", type=int)
a = p.parse_args()
assert a.dataset == "sharegpt"
rows = json.loads(Path(a.data_path).read_text())
if a.sample_size is not None and a.sample_size < len(rows):
    rows = rows[:a.sample_size]
out = Path(a.output_path) / "sharegpt_train.jsonl"
with open(out, "w") as f:
    for r in rows:
        conv = [{"role": ROLES[m["from"]], "content": m["value"]}
                for m in r["conversations"] if m["from"] in ROLES]
        f.write(json.dumps({"id": r["id"], "conversations": conv}) + "\\n")
print("argv", sys.argv[1:])
'''


def sharegpt(prefix: str, count: int) -> list[dict[str, object]]:
    return [{"id": f"{prefix}{i}", "conversations": [
        {"from": "system", "value": "sys"}, {"from": "human", "value": f"q{prefix}{i}"},
        {"from": "gpt", "value": f"a{prefix}{i}"}]} for i in range(count)]


def test_specforge_sharegpt_train(tmp_path: Path) -> None:
    """The first 8 conversations of the train split (files in sorted order) go through the
    repository's prepare_data.py into the file --train-data-path names."""
    mod = module("test_sgl_project__SpecForge")
    for run in stages(mod.repo):
        places = Stage(run, tmp_path / str(run.nproc))
        (places.repo / "scripts").mkdir()
        (places.repo / "scripts" / "prepare_data.py").write_text(PREPARE_DATA)
        raw = view_path(mod.repo, "sharegpt_train", places)
        raw.mkdir(parents=True)
        (raw / "B_second.json").write_text(json.dumps(sharegpt("b", 20)))
        (raw / "A_first.json").write_text(json.dumps(sharegpt("a", 5), indent=1))
        (raw / "README.md").write_text("# card")
        res = places.setup(only="prepare_sharegpt.py")  # the draft config's step needs transformers
        assert "'--dataset', 'sharegpt', '--sample-size', '8'" in res.stdout
        path = Path(places.arg("--train-data-path"))
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert [r["id"] for r in rows] == [*(f"a{i}" for i in range(5)),
                                           *(f"b{i}" for i in range(3))]
        assert rows[0]["conversations"] == [{"role": "user", "content": "qa0"},
                                            {"role": "assistant", "content": "aa0"}]


def test_specforge_failures_are_clear(tmp_path: Path) -> None:
    run = module("test_sgl_project__SpecForge").repo.single_gpu
    places = Stage(run, tmp_path)
    step = [places.fill(a) for a in run.setup[0]]
    Path(step[3]).mkdir(parents=True)
    res = places.setup(check=False, only="prepare_sharegpt.py")
    assert res.returncode != 0 and "no .json/.jsonl file" in res.stderr
    (Path(step[3]) / "x.json").write_text(json.dumps(sharegpt("x", 2)))
    (places.repo / "scripts").mkdir()
    (places.repo / "scripts" / "prepare_data.py").write_text("raise SystemExit(3)\n")
    res = places.setup(check=False, only="prepare_sharegpt.py")
    assert res.returncode != 0 and "exit code 3" in res.stderr


def test_specforge_raw_files_land_where_the_setup_reads_them(tmp_path: Path) -> None:
    mod = module("test_sgl_project__SpecForge")
    src = tmp_path / "snapshot"
    src.mkdir()
    (src / "ShareGPT_V4.3_unfiltered_cleaned_split.json").write_text("[]")
    cache = AssetCache(tmp_path / "cache")
    cache.ingest(mod.repo, "sharegpt_train", src, origin="stand-in")
    rel = mod.repo.single_gpu.setup[0][3].removeprefix("{assets}/")
    assert (cache.view(mod.repo) / rel / "ShareGPT_V4.3_unfiltered_cleaned_split.json").is_file()


# --------------------------------------------------------------------------- rllm

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
