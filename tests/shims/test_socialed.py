"""SocialED's shims (``repos/shims/test_RingBDStack__SocialED``): the prepare step's results
and the SBERT smoketest driver, run for real against a stand-in checkout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repomodules import write_tree as write
from support.shims import FAKE_TORCH, SHIMS
from support.shims import run_python as run

SOCIALED = SHIMS / "test_RingBDStack__SocialED"


COLUMNS = ["tweet_id", "text", "event_id", "words", "filtered_words", "entities", "user_id",
           "created_at", "urls", "hashtags", "user_mentions"]


def event2012(path: Path, rows: int) -> None:
    """A stand-in Event2012.npy: an object array of rows with the eleven columns."""
    np = pytest.importorskip("numpy")
    data = np.empty((rows, len(COLUMNS)), dtype=object)
    for i in range(rows):
        data[i] = [i, f"tweet {i}", i % 3, [f"w{i}"], [f"Word{i}", "X"], [], 7, "2012-10-10",
                   [], [], []]
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, data, allow_pickle=True)


def test_socialed_prepare_results(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    dataset = tmp_path / "assets" / "dataset" / "Event2012" / "Event2012.npy"
    event2012(dataset, 30)
    model = tmp_path / "assets" / "model" / "sbert_model"
    model.mkdir(parents=True)
    out = tmp_path / "out" / "prepare"
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(model), "--subset-size", "12", "--out", str(out)],
              tmp_path, [SOCIALED])
    assert res.returncode == 0, res.stderr
    results = json.loads((out / "results.json").read_text())
    subset = out / "Event2012_subset.npy"
    assert results["assets"] == {"dataset": {"path": str(subset)}, "model": {"path": str(model)}}
    rows = np.load(subset, allow_pickle=True)
    assert rows.shape == (12, 11)
    assert rows.tolist() == np.load(dataset, allow_pickle=True)[:12].tolist()
    # --subset-size keeps at least two rows, as officially
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(model), "--subset-size", "1", "--out", str(out)],
              tmp_path, [SOCIALED])
    assert res.returncode == 0, res.stderr
    assert np.load(subset, allow_pickle=True).shape == (2, 11)


def test_socialed_prepare_rejects_other_shapes(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    dataset = tmp_path / "Event2012.npy"
    np.save(dataset, np.zeros((4, 3)))
    res = run([str(SOCIALED / "make_prepare_results.py"), "--dataset", str(dataset),
               "--model", str(tmp_path), "--out", str(tmp_path / "out")], tmp_path, [SOCIALED])
    assert res.returncode != 0
    assert "expected rows of 11 columns" in res.stderr
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.fixture
def socialed(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A stand-in SocialED checkout whose detector package cannot be imported (as with the real
    optional detectors), a stand-in pandas with the few DataFrame calls used, and the prepared
    results."""
    pytest.importorskip("numpy")
    repo = write(tmp_path / "repo", {
        "SocialED/__init__.py": "",
        "SocialED/detector/__init__.py": "raise ImportError('spacy en_core_web_lg missing')\n",
        "SocialED/dataset/__init__.py": "",
        "SocialED/dataset/dataloader.py": "class DatasetLoader:\n    pass\n",
        "SocialED/detector/sbert.py": """
            import os
            from dataset.dataloader import DatasetLoader

            class SBERT:
                def __init__(self, dataset, model_name="../model/paraphrase-MiniLM-L6-v2"):
                    self.dataset = dataset.load_data()
                    assert os.path.exists(model_name), model_name
                    print("SBERT", dataset.get_dataset_language(), len(self.dataset))
                    self.df = None

                def preprocess(self):
                    self.df = self.dataset
                    return self.dataset

                def detection(self):
                    events = self.df.column("event_id")
                    print("tweets", self.df.column("tweet_id"))
                    return events, events

                def evaluate(self, truths, predictions):
                    print("NMI", float(truths == predictions))
        """,
    })
    libs = write(tmp_path / "libs", {**FAKE_TORCH, "pandas/__init__.py": """
        class _ILoc:
            def __init__(self, df):
                self.df = df
            def __getitem__(self, key):
                return DataFrame(self.df.rows[key], columns=self.df.columns)

        class DataFrame:
            def __init__(self, data, columns):
                self.rows, self.columns = [list(r) for r in data], list(columns)
                assert all(len(r) == len(self.columns) for r in self.rows)
            @property
            def iloc(self):
                return _ILoc(self)
            def head(self, n):
                return DataFrame(self.rows[:n], self.columns)
            def copy(self):
                return DataFrame(self.rows, self.columns)
            def __len__(self):
                return len(self.rows)
            def column(self, name):
                return [r[self.columns.index(name)] for r in self.rows]
    """})
    prepared = tmp_path / "out" / "prepare"
    event2012(prepared / "Event2012_subset.npy", 12)
    model = tmp_path / "assets" / "model" / "sbert_model"
    model.mkdir(parents=True)
    (prepared / "results.json").write_text(json.dumps({"assets": {
        "dataset": {"path": str(prepared / "Event2012_subset.npy")},
        "model": {"path": str(model)}}}))
    return repo, libs, prepared / "results.json"


def smoketest(results: Path, out: Path, *extra: str) -> list[str]:
    return [str(SOCIALED / "socialed_sbert_smoketest.py"), "--prepare-results", str(results),
            "--max-samples", "12", "--artifact-dir", str(out), *extra]


def test_socialed_driver_cpu(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    repo, libs, results = socialed
    out = tmp_path / "artifacts"
    res = run(smoketest(results, out), repo, [SOCIALED, libs], CUDA_VISIBLE_DEVICES="")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["SBERT English 12", f"tweets {list(range(12))}",
                                       "NMI 1.0"]
    record = json.loads((out / "run.json").read_text())
    assert {k: record[k] for k in ("local_rank", "world_size", "cuda_visible_devices",
                                   "dataset_rows")} == {
        "local_rank": None, "world_size": None, "cuda_visible_devices": "", "dataset_rows": 12}


def test_socialed_driver_gpu_count(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    repo, libs, results = socialed
    argv = smoketest(results, tmp_path / "a", "--require-gpu-count", "1")
    res = run(argv, repo, [SOCIALED, libs], FAKE_GPUS="0")
    assert res.returncode == 1
    assert "require_gpus=1 but cuda_available=False gpu_count=0" in res.stderr
    assert not (tmp_path / "a").exists()
    res = run(argv, repo, [SOCIALED, libs], FAKE_GPUS="1", CUDA_VISIBLE_DEVICES="0")
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "a" / "run.json").read_text())["cuda_visible_devices"] == "0"


def test_socialed_driver_distributed(socialed: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Under (stand-in) torchrun each rank sets its device and takes every second row."""
    repo, libs, results = socialed
    out = tmp_path / "artifacts"
    res = run(["-m", "torch.distributed.run", "--nproc_per_node", "2",
               *smoketest(results, out, "--distributed", "--require-gpu-count", "2")],
              repo, [SOCIALED, libs], FAKE_GPUS="2", CUDA_VISIBLE_DEVICES="0,1")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()[1:]
    assert lines == ["set_device 0", "SBERT English 6", "tweets [0, 2, 4, 6, 8, 10]", "NMI 1.0",
                     "set_device 1", "SBERT English 6", "tweets [1, 3, 5, 7, 9, 11]", "NMI 1.0"]
    for rank in (0, 1):
        record = json.loads((out / f"rank{rank}.json").read_text())
        assert (record["local_rank"], record["world_size"], record["dataset_rows"]) == (rank, 2, 6)


def test_socialed_driver_missing_prepare(socialed: tuple[Path, Path, Path],
                                         tmp_path: Path) -> None:
    repo, libs, results = socialed
    data = json.loads(results.read_text())
    data["assets"]["model"]["path"] = str(tmp_path / "nowhere")
    results.write_text(json.dumps(data))
    res = run(smoketest(results, tmp_path / "a"), repo, [SOCIALED, libs])
    assert res.returncode == 1
    assert f"model path missing: {tmp_path / 'nowhere'}" in res.stderr
    res = run(smoketest(tmp_path / "none.json", tmp_path / "a"), repo, [SOCIALED, libs])
    assert res.returncode == 1
    assert "prepare results not found" in res.stderr
