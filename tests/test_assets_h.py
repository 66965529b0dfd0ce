"""Assets the official prepare post-processed or generated, for Texo, FlagGems, Diffusion-Planner,
large_concept_model and SpecForge's draft config.

Each setup script runs on the host python against small stand-ins of the libraries it calls
(``datasets``, ``pyarrow``/``stopes``, ``transformers``: the report's python has the real ones);
numpy is real.  The layout tables are checked against the stages that read the assets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from repomodules import module, write_tree  # tests/repomodules.py
from repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed
from pytest_reb.spec import Repo, Run

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "repos"








def run_step(step: list[str], run: Run, tmp: Path, site: Path | None = None,
             **places: str) -> subprocess.CompletedProcess[str]:
    """One setup step with {python}/{shims}/{out}/... filled, stand-ins first on PYTHONPATH."""
    table = {"python": sys.executable, "shims": str(run.shim_dir), **places}
    argv = []
    for arg in step:
        for key, value in table.items():
            arg = arg.replace("{" + key + "}", value)
        argv.append(arg)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        str(p) for p in (site, run.shim_dir) if p)}
    return subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=120)


def names(repo: Repo, run: Run) -> list[str]:
    return [a.name for a in needed(repo, run)]


# --------------------------------------------------------------------------- Texo

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


# --------------------------------------------------------------------------- FlagGems


def test_flaggems_prompts_are_generated_at_prepare(tmp_path: Path) -> None:
    mod = module("test_flagos_ai__FlagGems")
    cache = AssetCache(tmp_path / "cache")
    run = mod.repo.single_gpu
    assert "prompts" in names(mod.repo, run)
    prompts = next(a for a in mod.repo.assets if a.name == "prompts")
    [res] = cache.prepare(mod.repo, network=False, only=[prompts])
    assert res.status == "ready", res.detail
    text = (cache.view(mod.repo) / "dataset" / "prompts.jsonl").read_text()
    assert text == '{"text": "How are you today?"}\n'
    assert [json.loads(line) for line in text.splitlines()] == [{"text": "How are you today?"}]
    assert run.env["SCIMLOPSBENCH_DATASET_PATH"] == "{assets}/dataset/prompts.jsonl"


# --------------------------------------------------------------------------- Diffusion-Planner


def test_diffusion_planner_sample_is_made_by_setup(tmp_path: Path) -> None:
    mod = module("test_ZhengYinan_AIR__Diffusion_Planner")
    made = next(a for a in mod.repo.assets if a.name == "synthetic_sample").synthetic
    assert made is not None and made.text is None and "setup" in made.made_by
    for run in stages(mod.repo):
        assert "synthetic_sample" not in names(mod.repo, run)  # made by the stage itself
        argv = list(run.argv)
        assert argv[argv.index("--train_set") + 1] == "{out}/dataset"
        assert argv[argv.index("--train_set_list") + 1] == "{out}/dataset/train_list.json"
        (step,) = run.setup
        out = tmp_path / str(run.nproc)
        done = run_step(step, run, tmp_path, out=str(out))
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "dataset" / "train_list.json").read_text()) == ["sample_0.npz"]
        with np.load(out / "dataset" / "sample_0.npz") as npz:
            got = {k: (npz[k].shape, npz[k].dtype, bool(npz[k].any())) for k in npz.files}
    f32, b = np.dtype("float32"), np.dtype("bool")
    assert got == {
        "ego_current_state": ((10,), f32, False),
        "ego_agent_future": ((8, 3), f32, False),
        "neighbor_agents_past": ((2, 2, 11), f32, False),
        "neighbor_agents_future": ((2, 8, 3), f32, False),
        "lanes": ((2, 4, 12), f32, False),
        "lanes_speed_limit": ((2, 1), f32, False),
        "lanes_has_speed_limit": ((2, 1), b, False),
        "route_lanes": ((1, 4, 12), f32, False),
        "route_lanes_speed_limit": ((1, 1), f32, False),
        "route_lanes_has_speed_limit": ((1, 1), b, False),
        "static_objects": ((1, 10), f32, False),
    }


# --------------------------------------------------------------------------- large_concept_model

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


# --------------------------------------------------------------------------- SpecForge draft

TRANSFORMERS = {"transformers/__init__.py": """
    import json, os
    class _Config:
        model_type = "qwen2"
        def __init__(self, values):
            self.__dict__.update(values)
    class AutoConfig:
        @staticmethod
        def from_pretrained(path):
            return _Config(json.load(open(os.path.join(path, "config.json"))))
"""}


def test_specforge_draft_config_is_derived_by_setup(tmp_path: Path) -> None:
    mod = module("test_sgl_project__SpecForge")
    made = next(a for a in mod.repo.assets if a.name == "draft_config").synthetic
    assert made is not None and made.text is None and made.made_by
    site = write_tree(tmp_path / "site", TRANSFORMERS)
    repo_dir, view = tmp_path / "repo", tmp_path / "assets"
    (repo_dir / "configs").mkdir(parents=True)
    (repo_dir / "configs" / "qwen2.5-7b-eagle3.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLMEagle3"], "hidden_size": 5120,
        "num_hidden_layers": 1, "tie_word_embeddings": True, "draft_vocab_size": 16000,
        "torch_dtype": "bfloat16", "rope_theta": 1000000.0}))
    (view / "model" / "target_model").mkdir(parents=True)
    (view / "model" / "target_model" / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
        "vocab_size": 151936, "eos_token_id": 151645, "rope_theta": 1000000.0,
        "tie_word_embeddings": True, "use_cache": False}))
    for run in stages(mod.repo):
        assert "draft_config" not in names(mod.repo, run)
        argv = list(run.argv)
        assert argv[argv.index("--draft-model-config") + 1] == "{out}/draft_config.json"
        step = next(s for s in run.setup if "{shims}/make_draft_config.py" in s)
        out = tmp_path / f"out{run.nproc}"
        done = run_step(step, run, tmp_path, site, repo=str(repo_dir), assets=str(view),
                        out=str(out))
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "draft_config.json").read_text()) == {
            "architectures": ["Qwen2ForCausalLM"],  # the template key the target config has
            "hidden_size": 896, "num_hidden_layers": 1, "tie_word_embeddings": False,
            "draft_vocab_size": 16000, "torch_dtype": "bfloat16", "rope_theta": 1000000.0,
            "vocab_size": 151936, "eos_token_id": 151645, "use_cache": True,
            "model_type": "llama"}  # not in this template: the official default
