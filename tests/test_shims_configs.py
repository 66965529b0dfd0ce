"""The generated-config shims of InternEvo, VoxCPM, deep-tempest and FunMusic.

Each test runs a stage's ``setup`` steps exactly as its ``repos/`` module
declares them (placeholders filled with temporary folders, the host python as
``{python}``) and checks what they wrote against the values the official
probes and prepare steps wrote, and that the files the run's argv reads are
the ones written.  Stand-ins of the prepared assets are empty files and
folders; nothing here needs torch.
"""

from __future__ import annotations

import json
import runpy
import subprocess
from pathlib import Path
from typing import Any

import pytest
from repomodules import Stage, module  # tests/repomodules.py

from pytest_reb.spec import Run

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "repos"






# --------------------------------------------------------------------------- InternEvo


INTERNEVO = module("test_InternLM__InternEvo").repo

#: A stand-in of the repository's tools/alpaca_tokenizer.py: the four files it writes.
ALPACA_TOOL = """\
import sys
from pathlib import Path
out = Path(sys.argv[2])
for split in ("train", "valid"):
    (out / split / "en").mkdir(parents=True)
    (out / split / "en" / "dataset.bin").write_text('{"tokens": [1, 2]}\\n')
    (out / split / "en" / "dataset.bin.meta").write_bytes(b"meta")
"""


def internevo_inputs(st: Stage) -> None:
    """The raw Alpaca JSON, the tokenizer and the tool the tokenising setup step reads."""
    (st.assets / "dataset").mkdir(parents=True)
    (st.assets / "dataset" / "alpaca_data.json").write_text(
        json.dumps([{"instruction": "i", "input": "", "output": "o"}]))
    (st.assets / "model").mkdir()
    (st.assets / "model" / "tokenizer.model").write_bytes(b"spm")
    (st.repo / "tools").mkdir()
    (st.repo / "tools" / "alpaca_tokenizer.py").write_text(ALPACA_TOOL)


@pytest.mark.parametrize("stage", ["single_gpu", "multi_gpu"])
def test_internevo_minimal_config(tmp_path: Path, stage: str) -> None:
    st = Stage(getattr(INTERNEVO, stage), tmp_path, stage)
    internevo_inputs(st)
    st.setup()
    config = st.arg("--config")
    assert config == st.out / "minimal_config.py"
    cfg = runpy.run_path(str(config))
    assert cfg["JOB_NAME"] == f"scimlopsbench_{stage}"
    assert cfg["model_type"] == "INTERNLM2"
    model = cfg["model"]
    assert (model["num_layers"], model["hidden_size"], model["num_attention_heads"],
            model["num_kv_attention_heads"], model["vocab_size"]) == (2, 256, 8, 8, 92544)
    assert model["dtype"] == "torch.float16" and model["use_flash_attn"] is False
    data = cfg["data"]
    assert (data["seq_len"], data["micro_num"], data["micro_bsz"], data["total_steps"]) == (
        32, 1, 1, 1)
    dataset = st.out / "alpaca_tokenized"  # written by the tokenising setup step
    assert data["train_folder"] == str(dataset / "train")
    assert data["valid_folder"] == str(dataset / "valid")
    assert data["tokenizer_path"] == str(st.assets / "model" / "tokenizer.model")
    sizes = {k: v["size"] for k, v in cfg["parallel"].items()}
    assert sizes == {"zero1": 1, "tensor": 1, "pipeline": 1, "weight": 1, "expert": -1,
                     "expert_weight": 1}
    assert cfg["ckpt"]["enable_save_ckpt"] is False and cfg["enable_tb"] is True
    assert cfg["lr_scheduler"]["total_steps"] == 1
    assert (st.out / "tensorboard").is_dir()  # the stage's tensorboard_folder


def test_internevo_config_needs_the_tokenized_dataset(tmp_path: Path) -> None:
    st = Stage(INTERNEVO.single_gpu, tmp_path, "single_gpu")
    done = subprocess.run([st.fill(a) for a in INTERNEVO.single_gpu.setup[-1]],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "alpaca_tokenized" in done.stderr
    assert not (st.out / "minimal_config.py").exists()


# --------------------------------------------------------------------------- VoxCPM


VOXCPM = module("test_OpenBMB__VoxCPM").repo


def voxcpm_model(st: Stage, *files: str) -> Path:
    model = st.assets / "model" / "openbmb__VoxCPM-0.5B"
    model.mkdir(parents=True)
    for name in files:
        (model / name).write_text("{}")
    return model


def test_voxcpm_config(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="VoxCPM reads the config with yaml.safe_load")
    st = Stage(VOXCPM.single_gpu, tmp_path, "single_gpu")
    model = voxcpm_model(st, "config.json", "audiovae.pth")
    wav = st.assets / "dataset" / "example.wav"  # the prepared asset
    wav.parent.mkdir()
    wav.write_bytes(b"RIFF")
    st.setup()
    config = st.arg("--config_path")
    assert config == st.out / "config.yaml"
    cfg = yaml.safe_load(config.read_text())
    manifest = st.out / "train_manifest.jsonl"
    assert cfg == {
        "pretrained_path": str(model), "train_manifest": str(manifest), "val_manifest": "",
        "sample_rate": 16000, "batch_size": 1, "grad_accum_steps": 1, "num_workers": 0,
        "num_iters": 1, "log_interval": 1, "valid_interval": 1000000, "save_interval": 1000000,
        "learning_rate": 1e-4, "weight_decay": 0.01, "warmup_steps": 0, "max_steps": 1,
        "max_batch_tokens": 0, "save_path": str(st.out / "checkpoints"),
        "tensorboard": str(st.out / "tensorboard"),
        "lambdas": {"loss/diff": 1.0, "loss/stop": 1.0},
        "lora": {"enable_lm": True, "enable_dit": True, "enable_proj": False, "r": 4,
                 "alpha": 4, "dropout": 0.0},
    }
    lines = manifest.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{
        "audio": str(wav),
        "text": "This is a minimal benchmark sample for VoxCPM fine-tuning.", "dataset_id": 0}]


def test_voxcpm_config_refuses_an_incomplete_model(tmp_path: Path) -> None:
    st = Stage(VOXCPM.single_gpu, tmp_path, "single_gpu")
    voxcpm_model(st, "config.json")
    done = st.setup(check=False)
    assert done.returncode != 0 and "audiovae.pth" in done.stderr
    assert not (st.out / "config.yaml").exists()


# --------------------------------------------------------------------------- deep-tempest


DEEP_TEMPEST = module("test_emidan19__deep_tempest").repo


def kair_parse(path: Path) -> dict[str, Any]:
    """How KAIR's utils_option.parse reads an options file: each line cut at '//', then JSON."""
    text = "".join(line.split("//")[0] + "\n" for line in path.read_text().splitlines())
    return json.loads(text)


def tempest_assets(st: Stage) -> None:
    """The raw assets: the checkout's examples/ in dataset/, the share's download in model/."""
    (st.assets / "dataset").mkdir(parents=True)
    for stamp, capture in (("18-08-19", "05-09-2023_21_07_37"),
                           ("18-08-27", "05-09-2023_21_10_14")):
        clean = f"Screenshot from 2023-08-29 {stamp}"
        (st.assets / "dataset" / f"{clean}.png").write_bytes(b"H")
        (st.assets / "dataset" / f"{clean}-gr-tempest_screenshot_{capture}.png").write_bytes(b"L")
    (st.assets / "model").mkdir()
    (st.assets / "model" / "download").write_bytes(b"a raw checkpoint")


def tempest_prepared(root: Path, *model_files: str) -> None:
    """A folder laid out as the official prepare left benchmark_assets."""
    for mini in ("mini_1", "mini_2"):
        for side in ("H", "L"):
            (root / "dataset" / mini / side).mkdir(parents=True)
    (root / "model").mkdir()
    for name in model_files:
        (root / "model" / name).write_bytes(b"PK")


def make_options_step(run: Run, prepared: str) -> list[str]:
    """The stage's make_options.py step, reading ``prepared`` instead of its {out}."""
    [step] = [s for s in run.setup if s[1].endswith("make_options.py")]
    return [prepared if a == "{out}" else a for a in step]


@pytest.mark.parametrize(("stage", "gpu_ids", "mini", "batch"), [
    ("cpu", [], "mini_1", 1), ("single_gpu", [0], "mini_1", 1),
    ("multi_gpu", [0, 1], "mini_2", 2), ("multi_gpu_retry", [0, 1], "mini_2", 2)])
def test_deep_tempest_options(tmp_path: Path, stage: str, gpu_ids: list[int], mini: str,
                              batch: int) -> None:
    if stage == "multi_gpu_retry":
        assert DEEP_TEMPEST.multi_gpu.retry is not None
        run = DEEP_TEMPEST.multi_gpu.retry.run
    else:
        run = getattr(DEEP_TEMPEST, stage)
    st = Stage(run, tmp_path, stage)
    tempest_assets(st)
    st.setup()
    options = st.arg("--opt")
    assert options.name == f"options_{stage.removesuffix('_retry')}_min.json"
    opt = kair_parse(options)
    assert (opt["task"], opt["model"], opt["gpu_ids"]) == ("drunet", "plain", gpu_ids)
    assert (opt["n_channels"], opt["n_channels_datasetload"], opt["use_abs_value"]) == (1, 3, True)
    assert opt["path"] == {"root": str(st.out / "artifacts"),
                           "pretrained_netG": str(st.out / "model" / "pretrained.pth")}
    for phase in ("train", "test"):
        ds = opt["datasets"][phase]
        assert ds["dataroot_H"] == str(st.out / "dataset" / mini / "H")
        assert ds["dataroot_L"] == str(st.out / "dataset" / mini / "L")
        assert (ds["H_size"], ds["num_patches_per_image"], ds["dataloader_batch_size"],
                ds["dataloader_shuffle"], ds["dataloader_num_workers"]) == (128, 1, batch, False, 0)
    net = opt["netG"]
    assert (net["net_type"], net["in_nc"], net["out_nc"], net["nc"], net["nb"]) == (
        "drunet", 2, 1, [64, 128, 256, 512], 4)
    train = opt["train"]
    assert (train["epochs"], train["G_lossfn_type"], train["G_optimizer_type"],
            train["G_optimizer_lr"], train["G_param_strict"]) == (1, "l2", "adam", 1e-4, True)
    assert {train[k] for k in ("checkpoint_test", "checkpoint_test_save", "checkpoint_save",
                               "checkpoint_print")} == {999999}


def test_deep_tempest_checkpoint_order_and_kair_comments(tmp_path: Path) -> None:
    """The prepare step's first checkpoint-like file, sorted; a '//' in a path would be cut
    off by KAIR's comment stripping, so none is written."""
    st = Stage(DEEP_TEMPEST.cpu, tmp_path, "cpu")
    prepared = tmp_path / "prepared"
    tempest_prepared(prepared, "zz.bin", "drunet_G.pth", "notes.txt")
    step = make_options_step(DEEP_TEMPEST.cpu, str(prepared) + "//")  # a trailing slash
    done = subprocess.run([st.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    raw = (st.out / "options_cpu_min.json").read_text()
    assert "//" not in raw
    assert kair_parse(st.out / "options_cpu_min.json")["path"]["pretrained_netG"] == str(
        prepared / "model" / "drunet_G.pth")


def test_deep_tempest_options_need_the_prepared_assets(tmp_path: Path) -> None:
    st = Stage(DEEP_TEMPEST.single_gpu, tmp_path, "single_gpu")
    tempest_prepared(tmp_path / "prepared", "notes.txt")
    step = make_options_step(DEEP_TEMPEST.single_gpu, str(tmp_path / "prepared"))
    done = subprocess.run([st.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "checkpoint" in done.stderr
    st2 = Stage(DEEP_TEMPEST.multi_gpu, tmp_path / "2", "multi_gpu")
    step = make_options_step(DEEP_TEMPEST.multi_gpu, str(tmp_path / "2" / "nothing"))
    done = subprocess.run([st2.fill(a) for a in step], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "mini_2" in done.stderr


# --------------------------------------------------------------------------- FunMusic


FUNMUSIC = module("test_FunAudioLLM__FunMusic")
MAKE_INPUTS = REPOS / "shims" / "test_FunAudioLLM__FunMusic" / "make_inputs.py"

#: The lines of the pinned examples/music_generation/conf/inspiremusic.yaml the prepare step
#: edited, with neighbours it must leave alone.
MUSIC_YAML = """\
__set_seed1: !apply:random.seed [1024]
sample_rate: 24000

basemodel_path: '../../pretrained_models/InspireMusic-Base/'
generator_path: '../../pretrained_models/InspireMusic-Base/music_tokenizer'

llm: !new:inspiremusic.llm.llm.LLM
        pretrain_path: !ref <basemodel_path>
filter: !name:inspiremusic.dataset.processor.filter
    max_length: 20000
    min_length: 1
    token_max_length: 200
    token_min_length: 1
    max_acoustic_length: 20000
    min_acoustic_length: 1800
sort: !name:inspiremusic.dataset.processor.sort
    sort_size: 500  # sort_size should be less than shuffle_size
train_conf:
    max_epoch: 200
    grad_clip: 5
    accum_grad: 2
    log_interval: 100
    save_per_step: 500
"""


def music_repo(st: Stage, yaml_text: str = MUSIC_YAML) -> None:
    """The raw copy of the repository's YAML, where the asset view holds it."""
    (st.assets / "model").mkdir(parents=True)
    (st.assets / "model" / "inspiremusic.yaml").write_text(yaml_text)


def test_funmusic_benchmark_yaml(tmp_path: Path) -> None:
    """The prepare step's edits, line by line; runs without pyarrow (the YAML is written
    before the parquet is sliced)."""
    st = Stage(FUNMUSIC.repo.single_gpu, tmp_path, "single_gpu")
    music_repo(st)
    st.setup(check=False)
    config = st.arg("--config")
    assert config == st.out / "inspiremusic_benchmark.yaml"
    model = st.assets / "model" / "InspireMusic-Base"
    want = (MUSIC_YAML
            .replace("'../../pretrained_models/InspireMusic-Base/'", f"'{model}/'")
            .replace("'../../pretrained_models/InspireMusic-Base/music_tokenizer'",
                     f"'{model}/music_tokenizer'")
            .replace("min_acoustic_length: 1800", "min_acoustic_length: 1")
            .replace("max_epoch: 200", "max_epoch: 1").replace("accum_grad: 2", "accum_grad: 1")
            .replace("log_interval: 100", "log_interval: 1")
            .replace("save_per_step: 500", "save_per_step: 0"))
    assert config.read_text() == want


def test_funmusic_yaml_missing_key_is_an_error(tmp_path: Path) -> None:
    st = Stage(FUNMUSIC.repo.multi_gpu, tmp_path, "multi_gpu")
    music_repo(st, MUSIC_YAML.replace("    accum_grad: 2\n", ""))
    done = st.setup(check=False)
    assert done.returncode != 0 and "accum_grad" in done.stderr
    assert not (st.out / "inspiremusic_benchmark.yaml").exists()


@pytest.mark.parametrize("stage", ["single_gpu", "multi_gpu"])
def test_funmusic_one_row_list(tmp_path: Path, stage: str) -> None:
    pa = pytest.importorskip("pyarrow", reason="slicing the parquet needs pyarrow, as in the "
                                               "repository's own data pipeline")
    import pyarrow.parquet as pq

    run = getattr(FUNMUSIC.repo, stage)
    st = Stage(run, tmp_path, stage)
    music_repo(st)
    sample = st.assets / "dataset" / "inspiremusic_samples"  # the raw copy in the view
    sample.mkdir(parents=True)
    table = pa.table({"utt": ["a", "b", "c"], "text": ["x", "y", "z"]})
    pq.write_table(table, sample / "parquet_000000000.tar")  # a parquet file, despite its name
    st.setup()
    flags = ["--prompt_data"] if stage == "single_gpu" else ["--train_data", "--cv_data"]
    for flag in flags:
        assert st.arg(flag) == st.out / "data_1row.list"
    listed = (st.out / "data_1row.list").read_text().splitlines()
    assert listed == [str(st.out / "parquet_000000000_1row.parquet")]
    assert pq.read_table(listed[0]).to_pylist() == [{"utt": "a", "text": "x"}]


def test_funmusic_tokens_name_what_the_setup_writes() -> None:
    """Each generated file the reference read under {assets} is read under {out} instead."""
    written = {"{out}/inspiremusic_benchmark.yaml", "{out}/data_1row.list"}
    assert {v for vs in FUNMUSIC.TOKENS.values() for v in vs} == written
    for run in (FUNMUSIC.repo.single_gpu, FUNMUSIC.repo.multi_gpu):
        assert written <= set(run.argv) and not set(FUNMUSIC.TOKENS) & set(run.argv)
        assert list(run.setup) == [FUNMUSIC.MAKE_INPUTS]
        assert run.shim_dir and Path(run.shim_dir, "make_inputs.py") == MAKE_INPUTS
