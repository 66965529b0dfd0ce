"""kvpress's LooGLE split (``repos/test_NVIDIA__kvpress.py``).

``--reb-prepare`` fetches the hub files of ``simonjegou/loogle`` under ``shortdep_qa/`` (a
stand-in ``huggingface_hub`` here) into HF_DATASETS_CACHE's ``reb_hub/`` folder; the
stage's setup (fraction.py) then runs with our sitecustomize against a stand-in
``datasets`` whose hub loading has no network and whose generic ``parquet`` builder reads
one row per line: the split comes from the prepared files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.assets import asset, standin
from support.repomodules import SHIMLIB, module, write_tree

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed
from pytest_reb.pyramid.entrypoint import Places
from pytest_reb.pyramid.shims import with_shim
from pytest_reb.spec import Run


def stage_env(run: Run, places: Places, *extra_path: Path) -> dict[str, str]:
    """The run's env as a target gives it: placeholders filled, shim folder and our shim
    library first on PYTHONPATH (then ``extra_path``)."""
    env = with_shim({k: places.fill(v) for k, v in run.env.items()}, run.shim_dir,
                    str(SHIMLIB))
    env["PYTHONPATH"] = ":".join([env["PYTHONPATH"], *map(str, extra_path)])
    return {**os.environ, **env}


def run_setup(run: Run, places: Places, *extra_path: Path,
              **env: str) -> subprocess.CompletedProcess[str]:
    (step,) = run.setup
    return subprocess.run([places.fill(a) for a in step], cwd=places.fill(run.cwd),
                          env={**stage_env(run, places, *extra_path), **env},
                          capture_output=True, text=True, timeout=120)


KVPRESS = "test_NVIDIA__kvpress"


#: A stand-in ``datasets``: the hub has no network; ``parquet`` reads one row per line and
#: logs each call; ``from datasets import load_dataset`` after the import, as evaluate.py does.
DATASETS = {"datasets/__init__.py": """
    import json, os
    from . import load
    from .load import load_dataset
    """, "datasets/load.py": """
    import json, os

    def load_dataset(path, name=None, data_dir=None, data_files=None, split=None,
                     cache_dir=None, revision=None, **config_kwargs):
        with open(os.environ["LOAD_LOG"], "a") as log:
            log.write(json.dumps({"path": path, "data_dir": data_dir, "data_files": data_files,
                                  "split": split, "revision": revision}) + "\\n")
        if path != "parquet":
            raise ConnectionError("no network: " + path)
        rows = []
        for file in data_files[split]:
            with open(file) as fh:
                rows += fh.read().splitlines()
        return rows
    """}


def prepare_loogle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                   hub: dict[str, str]) -> tuple[AssetCache, list[dict]]:
    """--reb-prepare of the LooGLE asset, the hub holding ``hub``; the downloads asked."""
    kvpress = module(KVPRESS).repo
    calls: list[dict] = []

    def snapshot_download(repo_id, allow_patterns=None, repo_type=None, local_dir=None,
                          cache_dir=None, **kw):
        calls.append({"repo_id": repo_id, "allow_patterns": allow_patterns,
                      "repo_type": repo_type, "local_dir": local_dir is not None})
        import fnmatch

        for name, text in hub.items():
            if not allow_patterns or any(fnmatch.fnmatch(name, p) for p in allow_patterns):
                write_tree(Path(local_dir), {name: text})
        return local_dir

    standin(monkeypatch, "huggingface_hub", snapshot_download=snapshot_download)
    cache = AssetCache(tmp_path / "cache")
    (done,) = cache.prepare(kvpress, network=True, only=[asset(kvpress, "loogle_shortdep_qa")])
    assert done.status == "ready", done.detail
    return cache, calls


HUB = {
    "README.md": "---\nconfigs: ...\n---\n",
    "shortdep_qa/test-00000-of-00002.parquet": "q1\nq2\nq3\n",
    "shortdep_qa/test-00001-of-00002.parquet": "q4\nq5\n",
    "longdep_qa/test-00000-of-00001.parquet": "l1\nl2\n",
}


def test_loogle_is_prepared_as_the_hub_files_of_its_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kvpress = module(KVPRESS).repo
    loogle = asset(kvpress, "loogle_shortdep_qa")
    assert not hasattr(loogle, "todo")
    cache, calls = prepare_loogle(tmp_path, monkeypatch, HUB)
    assert calls == [{"repo_id": "simonjegou/loogle", "allow_patterns": ["shortdep_qa/*"],
                      "repo_type": "dataset", "local_dir": True}]
    prepared = cache.view(kvpress) / loogle.dest / "shortdep_qa"
    assert sorted(p.name for p in prepared.iterdir()) == [
        "test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    assert not (cache.view(kvpress) / loogle.dest / "longdep_qa").exists()
    for run in (kvpress.cpu, kvpress.single_gpu, kvpress.multi_gpu):  # inside HF_DATASETS_CACHE
        assert run is not None and run.env["HF_DATASETS_CACHE"] == "{assets}/cache/datasets"
        assert loogle.dest.startswith("cache/datasets/")
        assert loogle in needed(kvpress, run)
        assert (Path(run.shim_dir) / "sitecustomize.py").is_file()


def test_fraction_counts_the_prepared_split_offline(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The setup step, run as a target runs it, loads the 5 prepared test rows through the
    shim (the hub call, which would need the network, never happens)."""
    kvpress = module(KVPRESS).repo
    cache, _ = prepare_loogle(tmp_path, monkeypatch, HUB)
    site = write_tree(tmp_path / "site", DATASETS)
    log = tmp_path / "load.log"
    for name in ("cpu", "single_gpu", "multi_gpu"):
        run = getattr(kvpress, name)
        out = tmp_path / "out" / name
        places = Places(sys.executable, str(tmp_path / "repo"), str(cache.view(kvpress)),
                        str(out), shims=run.shim_dir)
        (tmp_path / "repo").mkdir(exist_ok=True)
        log.unlink(missing_ok=True)
        done = run_setup(run, places, site, LOAD_LOG=str(log))
        assert done.returncode == 0, done.stdout + done.stderr
        assert float((out / "fraction").read_text()) == (1 + 1e-6) / 5
        (call,) = [json.loads(line) for line in log.read_text().splitlines()]
        folder = (cache.view(kvpress) / "cache/datasets/reb_hub/simonjegou/loogle/shortdep_qa")
        assert call == {"path": "parquet", "data_dir": None, "revision": None, "split": "test",
                        "data_files": {"test": [
                            str(folder / "test-00000-of-00002.parquet"),
                            str(folder / "test-00001-of-00002.parquet")]}}


LOAD = """
import json, sys
from datasets import load_dataset
import datasets.load
assert datasets.load.load_dataset is load_dataset
args = json.loads(sys.argv[1])
try:
    print(json.dumps(load_dataset(*args["args"], **args["kwargs"])))
except ConnectionError as exc:
    print(json.dumps(str(exc)))
"""


@pytest.mark.parametrize(("args", "kwargs", "want"), [
    (["simonjegou/loogle"], {"data_dir": "shortdep_qa", "split": "test"}, ["t1", "t2"]),
    (["simonjegou/loogle", None, "shortdep_qa"], {"split": "train"}, ["a1"]),
    (["simonjegou/loogle"], {"data_dir": "longdep_qa", "split": "test"},
     "no network: simonjegou/loogle"),  # not prepared: untouched
    (["simonjegou/loogle"], {"split": "test"}, "no network: simonjegou/loogle"),
    (["other/loogle"], {"data_dir": "shortdep_qa", "split": "test"}, "no network: other/loogle"),
    (["simonjegou/loogle", "shortdep_qa"], {"split": "test"}, "no network: simonjegou/loogle"),
])
def test_only_the_prepared_id_and_data_dir_are_served(tmp_path: Path, args: list, kwargs: dict,
                                                      want: object) -> None:
    cache = tmp_path / "datasets"
    write_tree(cache / "reb_hub/simonjegou/loogle/shortdep_qa", {
        "test-00000-of-00001.parquet": "t1\nt2\n", "train-00000-of-00001.parquet": "a1\n",
        "notes.txt": "not data\n"})
    site = write_tree(tmp_path / "site", DATASETS)
    shim = Path(str(module(KVPRESS).repo.shims))
    done = subprocess.run(
        [sys.executable, "-c", LOAD, json.dumps({"args": args, "kwargs": kwargs})],
        env={**os.environ, "PYTHONPATH": f"{shim}:{SHIMLIB}:{site}",
             "HF_DATASETS_CACHE": str(cache), "LOAD_LOG": str(tmp_path / "log")},
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == want


def test_without_a_prepared_folder_the_shim_does_nothing(tmp_path: Path) -> None:
    site = write_tree(tmp_path / "site", DATASETS)
    shim = Path(str(module(KVPRESS).repo.shims))
    env = {**os.environ, "PYTHONPATH": f"{shim}:{SHIMLIB}:{site}",
           "LOAD_LOG": str(tmp_path / "log")}
    env.pop("HF_DATASETS_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", LOAD, json.dumps({"args": ["simonjegou/loogle"], "kwargs": {
            "data_dir": "shortdep_qa", "split": "test", "revision": "main"}})],
        env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == "no network: simonjegou/loogle"
    (call,) = [json.loads(line) for line in (tmp_path / "log").read_text().splitlines()]
    assert call["revision"] == "main" and call["data_dir"] == "shortdep_qa"


# --------------------------------------------------------------------------- the additions

#: A stand-in ``nltk``: its data path, as ``nltk.data.path`` is a list searched in order.
NLTK = {"nltk/__init__.py": "from . import data\n",
        "nltk/data.py": "path = ['/usr/share/nltk_data']\n"}


@pytest.mark.parametrize("prepared", [True, False])
def test_the_shim_puts_the_prepared_nltk_data_on_nltks_path(tmp_path: Path,
                                                             prepared: bool) -> None:
    """The ``wordnet`` addition is prepared under XDG_CACHE_HOME/nltk_data; our sitecustomize
    appends that folder to nltk.data.path when nltk is imported (and only if it exists)."""
    kvpress = module(KVPRESS).repo
    wordnet = asset(kvpress, "wordnet")
    assert wordnet.dest == "cache/xdg/nltk_data/corpora/"
    assert all(run.env["XDG_CACHE_HOME"] == "{assets}/cache/xdg"
               for run in (kvpress.cpu, kvpress.single_gpu, kvpress.multi_gpu) if run)
    xdg = tmp_path / "xdg"
    if prepared:
        (xdg / "nltk_data" / "corpora" / "wordnet").mkdir(parents=True)
    site = write_tree(tmp_path / "site", NLTK)
    shim = Path(str(module(KVPRESS).repo.shims))
    done = subprocess.run(
        [sys.executable, "-c", "import json, nltk; print(json.dumps(nltk.data.path))"],
        env={**os.environ, "PYTHONPATH": f"{shim}:{SHIMLIB}:{site}",
             "XDG_CACHE_HOME": str(xdg)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    want = ["/usr/share/nltk_data", *([str(xdg / "nltk_data")] if prepared else [])]
    assert json.loads(done.stdout) == want


def test_the_additions_are_needed_by_every_stage() -> None:
    """roberta-large (TRANSFORMERS_CACHE) and WordNet (XDG_CACHE_HOME) are read by every stage, so a
    missing one fails the stage before it runs instead of in calculate_metrics.py."""
    kvpress = module(KVPRESS).repo
    for run in (kvpress.cpu, kvpress.single_gpu, kvpress.multi_gpu):
        assert run is not None
        names = [a.name for a in needed(kvpress, run)]
        assert names[-2:] == ["roberta-large", "wordnet"]
    roberta = asset(kvpress, "roberta-large")
    assert roberta.hf_cache and roberta.id == "roberta-large"
    assert roberta.dest == "cache/transformers"


def test_linked_nltk_data_is_copied_to_plain_files(tmp_path: Path) -> None:
    """A Docker target seeds the writable cache/ with links to the read-only prepared files
    (hard links into the store); nltk 3.10 refuses corpus files that resolve outside the
    corpus root or have several hard links, so the shim appends a plain copy."""
    seed = tmp_path / "seed" / "nltk_data" / "corpora" / "wordnet"
    seed.mkdir(parents=True)
    (seed / "lexnames").write_text("00\tadj.all\t3\n")
    linked = tmp_path / "xdg" / "nltk_data" / "corpora" / "wordnet"
    linked.mkdir(parents=True)
    (linked / "lexnames").symlink_to(seed / "lexnames")
    site = write_tree(tmp_path / "site", NLTK)
    shim = Path(str(module(KVPRESS).repo.shims))
    done = subprocess.run(
        [sys.executable, "-c", "import json, nltk; print(json.dumps(nltk.data.path))"],
        env={**os.environ, "PYTHONPATH": f"{shim}:{SHIMLIB}:{site}",
             "XDG_CACHE_HOME": str(tmp_path / "xdg")}, capture_output=True, text=True,
        timeout=60)
    assert done.returncode == 0, done.stderr
    copy = tmp_path / "xdg" / "nltk_data.reb-copy"
    assert json.loads(done.stdout) == ["/usr/share/nltk_data", str(copy)]
    plain = copy / "corpora" / "wordnet" / "lexnames"
    assert not plain.is_symlink() and plain.stat().st_nlink == 1
    assert plain.read_text() == "00\tadj.all\t3\n"
