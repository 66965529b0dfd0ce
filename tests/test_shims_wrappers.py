"""Our shims of the "wrappers" group, run for real on small stand-ins of the code they serve.

Sana (config copy, null embedding), ClearerVoice-Studio (checkpoint choice, DDP scp lists, the
torchrun wrapper), FlagGems (the first test_accuracy_bert node) and RenderFormer (the per-rank
render). Each stage is also run the way the plugin runs it: the module's own ``setup`` and
``argv`` with the placeholders filled for a temporary tree, so a wrong path or flag in the
module fails here too. Host python only: no torch (Sana's null embedding is checked against a
stand-in ``torch`` that records what it was asked to save).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from repomodules import module  # tests/repomodules.py

REPOS = Path(__file__).resolve().parents[1] / "repos"




def shim(stem: str, name: str) -> str:
    path = REPOS / "shims" / stem / name
    assert path.is_file(), path
    return str(path)


def run(argv: Sequence[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


class Tree:
    """What a stage's placeholders stand for in a temporary target (a stand-in of the plugin's
    filling: placeholders first, then ``{file:..}`` and ``{glob:..}`` read from disk)."""

    def __init__(self, root: Path, stem: str) -> None:
        self.places = {"{python}": sys.executable, "{repo}": str(root / "repo"),
                       "{assets}": str(root / "assets"), "{out}": str(root / "out"),
                       "{shims}": str(REPOS / "shims" / stem), "{port}": "29555"}
        for key in ("{repo}", "{assets}", "{out}"):
            Path(self.places[key]).mkdir(parents=True, exist_ok=True)

    def __getitem__(self, key: str) -> Path:
        return Path(self.places["{" + key + "}"])

    def fill(self, value: str) -> str:
        for key, place in self.places.items():
            value = value.replace(key, place)

        def resolve(match: re.Match[str]) -> str:
            kind, arg = match.group(1), match.group(2)
            if kind == "file":
                return Path(arg).read_text(encoding="utf-8").strip()
            found = sorted(glob.glob(arg))
            assert found, f"nothing matches {arg}"
            return found[0]
        return re.sub(r"\{(glob|file):([^{}]+)\}", resolve, value)

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [self.fill(a) for a in argv]

    def setup(self, stage: Any, **env: str) -> None:
        for step in stage.setup:
            res = run(self.argv(step), Path(self.fill(stage.cwd)), **env)
            assert res.returncode == 0, (step, res.stdout, res.stderr)


# --------------------------------------------------------------------------- NVlabs/Sana

SANA = "test_NVlabs__Sana"

#: The parts of configs/sana_config/1024ms/Sana_600M_img1024.yaml (pinned commit) around the key,
#: plus the cases the patch must leave alone: a nested resume_from and a real value.
SANA_CONFIG = """\
data:
  data_dir: [data/toy_data]
# model config
model:
  model: SanaMS_600M_P1_D28
  load_from:
  resume_from:
  aspect_ratio_type: ASPECT_RATIO_1024
  mlp_acts:
    - silu
    -
other:
  resume_from: null  # nothing yet\r
  keep:
    resume_from:
      checkpoint: latest
  real:
    resume_from: /ckpt/epoch_1.pth
"""


def test_sana_patch_train_config(tmp_path: Path) -> None:
    """Only empty, non-nested resume_from values become 'latest'; every other byte is kept."""
    source, dest = tmp_path / "in.yaml", tmp_path / "out" / "sub" / "config_patched.yaml"
    source.write_bytes(SANA_CONFIG.encode())
    res = run([sys.executable, shim(SANA, "patch_train_config.py"), str(source), str(dest)],
              tmp_path)
    assert res.returncode == 0, res.stderr
    want = (SANA_CONFIG
            .replace("  load_from:\n  resume_from:\n", "  load_from:\n  resume_from: latest\n")
            .replace("  resume_from: null  # nothing yet\r",
                     "  resume_from: latest # nothing yet\r"))
    assert dest.read_bytes() == want.encode()
    assert source.read_bytes() == SANA_CONFIG.encode()


def test_sana_patch_train_config_fails_without_source(tmp_path: Path) -> None:
    res = run([sys.executable, shim(SANA, "patch_train_config.py"), str(tmp_path / "missing"),
               str(tmp_path / "out.yaml")], tmp_path)
    assert res.returncode != 0
    assert not (tmp_path / "out.yaml").exists()


#: A stand-in of torch: enough of zeros/ones/long/save to see what the helper saves.
FAKE_TORCH = """\
import json
long = "torch.int64"
def zeros(*shape, dtype="torch.float32"):
    return {"fill": 0, "shape": list(shape), "dtype": dtype}
def ones(*shape, dtype="torch.float32"):
    return {"fill": 1, "shape": list(shape), "dtype": dtype}
def save(obj, path):
    with open(path, "w") as fh:
        json.dump(obj, fh)
"""


def test_sana_ensure_null_embed(tmp_path: Path) -> None:
    """The module's setup (config copy, folders, null embedding) with a stand-in torch: zeros of
    1x300x2304 and an all-ones long mask under the two keys train.py reads; kept when present."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text(FAKE_TORCH)
    tree = Tree(tmp_path, SANA)
    config = tree["repo"] / "configs" / "sana_config" / "1024ms" / "Sana_600M_img1024.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(SANA_CONFIG)
    checkpoints = tree["assets"] / "model" / "sana_600m_1024px" / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "Sana_600M_1024px.pth").write_text("")
    stage = module(SANA).repo.single_gpu
    tree.setup(stage, PYTHONPATH=str(fake))

    null = tree["out"] / "null_embed_root" / "null_embed_diffusers_gemma-2-2b-it_300token_2304.pth"
    assert json.loads(null.read_text()) == {
        "uncond_prompt_embeds": {"fill": 0, "shape": [1, 300, 2304], "dtype": "torch.float32"},
        "uncond_prompt_embeds_mask": {"fill": 1, "shape": [1, 300], "dtype": "torch.int64"},
    }
    assert "resume_from: latest" in (tree["out"] / "config_patched.yaml").read_text()
    for folder in ("work_dir", "valid_prompt_embed_root"):
        assert (tree["out"] / folder).is_dir()
    argv = tree.argv(stage.argv)
    assert f"--config_path={tree['out']}/config_patched.yaml" in argv
    assert f"--train.null_embed_root={null.parent}" in argv

    null.write_text("theirs")  # an existing file is kept
    tree.setup(stage, PYTHONPATH=str(fake))
    assert null.read_text() == "theirs"


def test_sana_null_embed_needs_torch(tmp_path: Path) -> None:
    """Without torch in the interpreter (-S: no site-packages) the helper fails, and so the
    stage, writing nothing."""
    path = tmp_path / "null" / "x.pth"
    res = run([sys.executable, "-S", shim(SANA, "ensure_null_embed.py"), f"--path={path}",
               "--max-length=3", "--hidden-size=4"], tmp_path, PYTHONPATH="")
    assert res.returncode == 1
    assert "No module named 'torch'" in res.stderr
    assert not path.exists()


def test_sana_checkpoint_is_the_shortest_name(tmp_path: Path) -> None:
    """--load_from is the first sorted checkpoints/*.pth, which is the official shortest name."""
    tree = Tree(tmp_path, SANA)
    folder = tree["assets"] / "model" / "sana_600m_1024px" / "checkpoints"
    folder.mkdir(parents=True)
    for name in ("Sana_600M_1024px_MultiLing.pth", "Sana_600M_1024px.pth"):
        (folder / name).write_text("")
    argv = tree.argv(module(SANA).repo.multi_gpu.argv)
    assert f"--load_from={folder}/Sana_600M_1024px.pth" in argv
    assert "--master_port=29555" in argv


# --------------------------------------------------------------------------- ClearerVoice

CV = "test_modelscope__ClearerVoice_Studio"


def choose(tmp_path: Path, *folders: Path) -> subprocess.CompletedProcess[str]:
    out = tmp_path / "out" / "ckpt"
    out.unlink(missing_ok=True)
    return run([sys.executable, shim(CV, "frcrn_checkpoint.py"), str(out), *map(str, folders)],
               tmp_path)


def test_clearervoice_checkpoint_preference(tmp_path: Path) -> None:
    """last_best_checkpoint.pt, else the file named in last_best_checkpoint, else the first *.pt;
    the first folder holding one wins; none fails."""
    link, snap = tmp_path / "model" / "FRCRN_SE_16K", tmp_path / "cache" / "FRCRN_SE_16K"
    snap.mkdir(parents=True)
    out = tmp_path / "out" / "ckpt"

    assert choose(tmp_path, link, snap).returncode == 1
    assert not out.exists()

    for name in ("b.pt", "a.pt", "named.pt"):
        (snap / name).write_text(name)
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text() == f"{snap / 'a.pt'}\n"

    (snap / "last_best_checkpoint").write_text("missing.pt\n")  # names no file: first *.pt
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "a.pt")

    (snap / "last_best_checkpoint").write_text("named.pt\r\nother.pt\n")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "named.pt")

    (snap / "last_best_checkpoint.pt").write_text("best")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "last_best_checkpoint.pt")

    link.mkdir(parents=True)  # an empty first folder is passed over
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(snap / "last_best_checkpoint.pt")
    (link / "z.pt").write_text("")
    assert choose(tmp_path, link, snap).returncode == 0
    assert out.read_text().strip() == str(link / "z.pt")


def test_clearervoice_ddp_scp(tmp_path: Path) -> None:
    source, dest = tmp_path / "train.scp", tmp_path / "out" / "train_ddp.scp"
    source.write_text("/d/input.wav /d/input.wav\r\n/d/other.wav /d/other.wav\n")
    res = run([sys.executable, shim(CV, "ddp_scp.py"), "3", str(source), str(dest)], tmp_path)
    assert res.returncode == 0, res.stderr
    assert dest.read_text() == "/d/input.wav /d/input.wav\n" * 3

    source.write_text("")
    dest.unlink()
    res = run([sys.executable, shim(CV, "ddp_scp.py"), "2", str(source), str(dest)], tmp_path)
    assert res.returncode == 1 and not dest.exists()


#: A stand-in of train/speech_enhancement/train.py: imports a sibling package as the real one
#: does (dataloader.dataloader) and reports how it was started.
STANDIN_TRAIN = """\
import json, os, sys
from dataloader.dataloader import WHERE
if __name__ == "__main__":
    print("REPORT " + json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "where": WHERE,
                                 "path0": sys.path[0]}))
"""


def standin_repo(root: Path) -> Path:
    train = root / "train" / "speech_enhancement"
    (train / "dataloader").mkdir(parents=True)
    (train / "dataloader" / "__init__.py").write_text("")
    (train / "dataloader" / "dataloader.py").write_text("WHERE = __file__\n")
    (train / "train.py").write_text(STANDIN_TRAIN)
    return train


def report(res: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


def test_clearervoice_wrapper_ranks(tmp_path: Path) -> None:
    """--local-rank from LOCAL_RANK (or a --local_rank flag, removed), rank<N> checkpoints for
    non-zero ranks, run in train.py's folder as __main__."""
    train = standin_repo(tmp_path / "repo")
    wrapper = shim(CV, "torchrun_train_wrapper.py")
    ckpt = tmp_path / "out" / "checkpoints"
    args = ["--config", "c.yaml", "--checkpoint_dir", str(ckpt), "--use-cuda", "1"]

    got = report(run([sys.executable, wrapper, *args], train, LOCAL_RANK="1"))
    assert got["argv"] == [str(train / "train.py"), "--local-rank", "1", "--config", "c.yaml",
                           "--checkpoint_dir", str(ckpt / "rank1"), "--use-cuda", "1"]
    assert (ckpt / "rank1").is_dir()
    assert got["cwd"] == str(train) and got["path0"] == str(train)
    assert got["where"] == str(train / "dataloader" / "dataloader.py")

    got = report(run([sys.executable, wrapper, *args], train, LOCAL_RANK="0"))
    assert got["argv"][1:] == ["--local-rank", "0", *args]

    got = report(run([sys.executable, wrapper, "--local_rank=3", *args[:2],
                      f"--checkpoint_dir={ckpt}"], train, LOCAL_RANK="0"))
    assert got["argv"][1:] == ["--local-rank", "3", "--config", "c.yaml",
                               f"--checkpoint_dir={ckpt / 'rank3'}"]

    env = {k: v for k, v in os.environ.items() if k != "LOCAL_RANK"}
    res = subprocess.run([sys.executable, wrapper, "--local_rank", "2"], cwd=train,
                         capture_output=True, text=True, timeout=60, env=env)
    assert report(res)["argv"][1:] == ["--local-rank", "2"]


def test_clearervoice_wrapper_from_the_probe_folder(tmp_path: Path) -> None:
    """Started elsewhere, the wrapper mounted at {repo}/benchmark_scripts finds the repo's
    train/speech_enhancement/train.py."""
    repo = tmp_path / "repo"
    train = standin_repo(repo)
    probe = repo / "benchmark_scripts"
    probe.mkdir()
    (probe / "torchrun_train_wrapper.py").write_text(
        Path(shim(CV, "torchrun_train_wrapper.py")).read_text())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    got = report(run([sys.executable, str(probe / "torchrun_train_wrapper.py")], elsewhere))
    assert got["cwd"] == str(train)
    assert got["argv"] == [str(train / "train.py"), "--local-rank", "0"]


def test_clearervoice_multi_gpu_stage(tmp_path: Path) -> None:
    """The module's C4 setup and, per rank, what torchrun would start: the wrapper with the
    module's argv after the launcher flags."""
    tree = Tree(tmp_path, CV)
    train = standin_repo(tree["repo"])
    dataset = tree["assets"] / "dataset"
    dataset.mkdir()
    (dataset / "input.wav").write_bytes(b"RIFF")  # the prepared asset; setup writes the lists
    snapshot = tree["assets"] / "cache" / "hf_models" / "FRCRN_SE_16K"
    snapshot.mkdir(parents=True)
    (snapshot / "pytorch_model.pt").write_text("")
    (snapshot / "last_best_checkpoint").write_text("pytorch_model.pt\n")
    stage = module(CV).repo.multi_gpu
    tree.setup(stage)

    out = tree["out"]
    line = f"{dataset}/input.wav {dataset}/input.wav\n"
    assert (out / "train.scp").read_text() == (out / "cv.scp").read_text() == line
    assert (out / "train_ddp.scp").read_text() == (out / "cv_ddp.scp").read_text() == line * 2
    assert (out / "checkpoints").is_dir()
    argv = tree.argv(stage.argv)
    assert argv[5:7] == ["--master_port", "29555"]
    script = argv.index(shim(CV, "torchrun_train_wrapper.py"))
    for rank in ("0", "1"):
        got = report(run([sys.executable, *argv[script:]], train, LOCAL_RANK=rank))
        flags = got["argv"][1:]
        assert flags[:2] == ["--local-rank", rank]
        assert flags[flags.index("--init_checkpoint_path") + 1] == str(snapshot /
                                                                        "pytorch_model.pt")
        assert flags[flags.index("--tr-list") + 1] == str(out / "train_ddp.scp")
        want = out / "checkpoints" if rank == "0" else out / "checkpoints" / f"rank{rank}"
        assert flags[flags.index("--checkpoint_dir") + 1] == str(want)


def test_clearervoice_single_stages_resolve_the_checkpoint(tmp_path: Path) -> None:
    tree = Tree(tmp_path, CV)
    link = tree["assets"] / "model" / "FRCRN_SE_16K"
    link.mkdir(parents=True)
    (link / "last_best_checkpoint.pt").write_text("")
    (tree["assets"] / "dataset").mkdir()
    (tree["assets"] / "dataset" / "input.wav").write_bytes(b"RIFF")
    standin_repo(tree["repo"])
    for stage in (module(CV).repo.cpu, module(CV).repo.single_gpu):
        tree.setup(stage)
        argv = tree.argv(stage.argv)
        assert argv[argv.index("--init_checkpoint_path") + 1] == str(
            link / "last_best_checkpoint.pt")


def test_clearervoice_missing_checkpoint_fails_setup(tmp_path: Path) -> None:
    tree = Tree(tmp_path, CV)
    standin_repo(tree["repo"])
    step = module(CV).repo.cpu.setup[0]
    res = run(tree.argv(step), tmp_path)
    assert res.returncode == 1 and "no FRCRN checkpoint" in res.stderr


# --------------------------------------------------------------------------- FlagGems

GEMS = "test_flagos_ai__FlagGems"

#: A stand-in of examples/model_bert_test.py: the same parametrize stack, no torch.
STANDIN_BERT = """\
import pytest

def test_other():
    pass

@pytest.mark.parametrize("prompt", ["How are you today?", "What is your name?"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_accuracy_bert(prompt, dtype):
    print("RAN", prompt, dtype)
"""

#: pytest in the stand-in checkout loads no plugin of this machine (ours included).
QUIET_PYTEST = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}


def gems_tree(tmp_path: Path, test_file: str) -> Tree:
    tree = Tree(tmp_path, GEMS)
    (tree["repo"] / "examples").mkdir()
    (tree["repo"] / "examples" / "model_bert_test.py").write_text(test_file)
    (tree["repo"] / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    return tree


def test_flaggems_first_node_then_only_that_node(tmp_path: Path) -> None:
    """Setup collects -k test_accuracy_bert and writes the first node; the stage's argv then
    runs exactly that one node."""
    tree = gems_tree(tmp_path, STANDIN_BERT)
    stage = module(GEMS).repo.single_gpu
    tree.setup(stage, **QUIET_PYTEST)
    node = (tree["out"] / "bert_node").read_text().strip()
    assert node == "examples/model_bert_test.py::test_accuracy_bert[float16-How are you today?]"

    argv = tree.argv(stage.argv)
    assert argv == [sys.executable, "-m", "pytest", "-q", node]
    res = run([*argv, "-s"], tree["repo"], **QUIET_PYTEST)
    assert res.returncode == 0, res.stdout
    assert res.stdout.count("RAN ") == 1 and "RAN How are you today? float16" in res.stdout
    assert "1 passed" in res.stdout


@pytest.mark.parametrize("test_file", ["def test_other():\n    pass\n", "import nope\n"])
def test_flaggems_no_node_exits_16(tmp_path: Path, test_file: str) -> None:
    """No matching node, or a collection error: exit 16 and no node file."""
    tree = gems_tree(tmp_path, test_file)
    step = module(GEMS).repo.single_gpu.setup[0]
    res = run(tree.argv(step), tree["repo"], **QUIET_PYTEST)
    assert res.returncode == 16, res.stdout
    assert not (tree["out"] / "bert_node").exists()


# --------------------------------------------------------------------------- renderformer

RF = "test_microsoft__renderformer"

#: A stand-in of infer.py: reports its argv and the two variables the rank script sets.
STANDIN_INFER = """\
import json, os, sys
print("REPORT " + json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
      "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"), "attn": os.environ.get("ATTN_IMPL")}))
"""


def test_renderformer_rank_picks_device_and_scene(tmp_path: Path) -> None:
    """The module's C4 argv after 'torchrun --standalone --nproc_per_node=2', per LOCAL_RANK:
    device LOCAL_RANK of the visible list, cbox on rank 0, shader-ball on rank 1, the official
    infer.py flags, {out}/output_rank<N> made."""
    tree = Tree(tmp_path, RF)
    (tree["repo"] / "infer.py").write_text(STANDIN_INFER)
    stage = module(RF).repo.multi_gpu
    argv = tree.argv(stage.argv)
    assert argv[:3] == ["torchrun", "--standalone", "--nproc_per_node=2"]
    assets, out = tree["assets"], tree["out"]
    scenes = {0: f"{out}/cbox/cbox.h5",  # converted there by the stage's setup
              1: f"{out}/shader-ball/shader-ball.h5"}
    for rank, gpu in ((0, "4"), (1, "6")):
        got = report(run([sys.executable, *argv[3:]], tree["repo"], LOCAL_RANK=str(rank),
                         CUDA_VISIBLE_DEVICES="4,6", ATTN_IMPL="flash"))
        assert got["gpu"] == gpu and got["attn"] == "sdpa"
        assert got["cwd"] == str(tree["repo"])
        flags = got["argv"]
        pairs = dict(zip(flags[::2], flags[1::2], strict=True))
        assert pairs == {"--model_id": f"{assets}/model/renderformer-v1-base",
                         "--precision": "fp16", "--resolution": "64",
                         "--h5_file": scenes[rank], "--output_dir": f"{out}/output_rank{rank}"}
        assert (out / f"output_rank{rank}").is_dir()


def test_renderformer_rank_without_a_device_fails(tmp_path: Path) -> None:
    tree = Tree(tmp_path, RF)
    (tree["repo"] / "infer.py").write_text(STANDIN_INFER)
    argv = tree.argv(module(RF).repo.multi_gpu.argv)
    res = run([sys.executable, *argv[3:]], tree["repo"], LOCAL_RANK="1", CUDA_VISIBLE_DEVICES="0")
    assert res.returncode == 1
    assert "rank 1 has no GPU mapping for VISIBLE=0" in res.stderr
    assert "REPORT" not in res.stdout
