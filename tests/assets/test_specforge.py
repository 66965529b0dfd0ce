"""SpecForge's ShareGPT split and draft config (``repos/test_sgl_project__SpecForge.py``): the
setup runs the repository's prepare_data.py (a stand-in) on the raw files and derives the
draft config from the target model's (a stand-in ``transformers``).
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import names, run_step, view_path
from support.repomodules import Stage, module, write_tree
from support.repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache

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
