"""Assets of InternEvo, VoxCPM, deep-tempest, FunMusic, ClearerVoice-Studio and RenderFormer.

The official prepare steps post-processed what they fetched (tokenised a sample, paired
screenshots, picked a checkpoint, sliced a parquet, wrote scp lists, converted scenes to h5).
pytest-reb fetches the raw asset into the view and each stage's ``setup`` redoes the
post-processing into ``{out}``. Each test here prepares a real asset cache from stand-ins of the
raw downloads (a local HTTP server for ``url`` assets, a stand-in checkout for ``repo`` assets,
``ingest`` for hub snapshots), then runs the stage's setup steps exactly as its module declares
them, with ``{assets}`` the view, and checks what they wrote and that the stage's argv reads it.
Repository tools the setup calls (tools/alpaca_tokenizer.py, scene_processor/convert_scene.py)
are small stdlib stand-ins that record how they were called; nothing here needs torch.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest
from repomodules import module  # tests/repomodules.py

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.fetchers import checkout_copy
from pytest_reb.assets.view import needed
from pytest_reb.spec import Repo, Run
from pytest_reb.target import LocalTarget

REPOS = Path(__file__).resolve().parents[1] / "repos"

#: Our assets, by repository module, and the stages that read each.
OURS = {
    "test_InternLM__InternEvo": {"alpaca_sample": ["single_gpu", "multi_gpu"]},
    "test_OpenBMB__VoxCPM": {"example_wav": ["single_gpu"]},
    "test_emidan19__deep_tempest": {"examples_pairs": ["cpu", "single_gpu", "multi_gpu"],
                                    "drunet_pretrained": ["cpu", "single_gpu", "multi_gpu"]},
    "test_FunAudioLLM__FunMusic": {"inspiremusic_samples": ["single_gpu", "multi_gpu"],
                                   "benchmark_config": ["single_gpu", "multi_gpu"]},
    "test_modelscope__ClearerVoice_Studio": {"input_wav": ["cpu", "single_gpu", "multi_gpu"]},
    "test_microsoft__renderformer": {"example_scenes": ["cpu", "single_gpu", "multi_gpu"]},
}


@functools.cache


@pytest.mark.parametrize("stem", sorted(OURS))
def test_assets_are_real_and_read_by_their_stages(stem: str) -> None:
    repo = module(stem).repo
    for asset in repo.assets:
        if asset.name not in OURS[stem]:
            continue
        for stage in ("cpu", "single_gpu", "multi_gpu"):
            run = getattr(repo, stage)
            if run is None:
                continue
            read = asset.name in [a.name for a in needed(repo, run)]
            assert read == (stage in OURS[stem][asset.name]), (asset.name, stage)


# --------------------------------------------------------------------------- the machinery




def on_server(repo: Repo, served: tuple[str, Path], files: dict[str, bytes]) -> Repo:
    """``repo`` with each ``url`` asset's host swapped for the local server, which serves
    ``files[asset name]`` under the same path."""
    base, root = served
    changed = []
    for asset in repo.assets:
        if asset.source == "url" and asset.name in files:
            path = urllib.parse.urlparse(asset.url).path
            (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (root / path.lstrip("/")).write_bytes(files[asset.name])
            asset = dataclasses.replace(asset, url=base + path)
        changed.append(asset)
    return dataclasses.replace(repo, assets=changed)


class Target:
    """A stage's placeholders bound to temporary folders: the view as ``{assets}``."""

    def __init__(self, tmp: Path, repo: Repo, checkout: Path) -> None:
        self.repo = repo
        self.cache = AssetCache(tmp / "cache")
        self.checkout = checkout
        self.out = tmp / "out"
        self.out.mkdir(parents=True, exist_ok=True)

    @property
    def view(self) -> Path:
        return self.cache.view(self.repo)

    def prepare(self, **stand_ins: Path) -> None:
        """Prepare every asset: stand-ins ingested, the rest fetched (network = localhost)."""
        for name, path in stand_ins.items():
            self.cache.ingest(self.repo, name, path, origin="stand-in")
        copy = checkout_copy(LocalTarget(gpus=[]), str(self.checkout))
        for result in self.cache.prepare(self.repo, network=True, copy=copy):
            assert result.status in ("ready", "kept"), result.line()

    def fill(self, text: str, run: Run) -> str:
        places = {"{python}": sys.executable, "{shims}": str(run.shim_dir), "{out}": str(self.out),
                  "{assets}": str(self.view), "{repo}": str(self.checkout)}
        for key, value in places.items():
            text = text.replace(key, value)
        return text

    def setup(self, run: Run, *, check: bool = True) -> subprocess.CompletedProcess[str]:
        """The run's setup steps in order, with its env and cwd; stop at the first failure."""
        env = {**os.environ, **{k: self.fill(v, run) for k, v in run.env.items()}}
        env.pop("PYTHONPATH", None)
        cwd = Path(self.fill(run.cwd, run))
        cwd.mkdir(parents=True, exist_ok=True)
        done = None
        for step in run.setup:
            done = subprocess.run([self.fill(a, run) for a in step], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=120)
            if done.returncode:
                break
        assert done is not None
        if check:
            assert done.returncode == 0, (done.stdout, done.stderr)
        return done

    def arg(self, run: Run, flag: str) -> Path:
        argv = list(run.argv)
        return Path(self.fill(argv[argv.index(flag) + 1], run))


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- InternEvo

#: A stand-in of tools/alpaca_tokenizer.py: records its argv and the sample it was given, and
#: writes the four files of InternEvo's tokenized format.
ALPACA_TOOL = """\
import json, sys
from pathlib import Path
sample, out, tokenizer = sys.argv[1:4]
records = json.loads(Path(sample).read_text(encoding="utf-8"))
Path(out, "called.json").write_text(json.dumps({"argv": sys.argv[1:], "n": len(records),
                                                "first": records[0]}))
for split in ("train", "valid"):
    Path(out, split, "en").mkdir(parents=True)
    Path(out, split, "en", "dataset.bin").write_text('{"tokens": [1, 2]}\\n')
    Path(out, split, "en", "dataset.bin.meta").write_bytes(b"" if "EMPTY" in sample else b"m")
"""


def internevo(tmp_path: Path, served: tuple[str, Path], records: int = 100) -> Target:
    raw = [{"instruction": f"i{n}", "input": "", "output": f"ö{n}"} for n in range(records)]
    repo = on_server(module("test_InternLM__InternEvo").repo, served,
                  {"alpaca_sample": json.dumps(raw).encode()})
    checkout = tmp_path / "checkout"
    write(checkout / "tools" / "alpaca_tokenizer.py", ALPACA_TOOL)
    target = Target(tmp_path, repo, checkout)
    target.prepare(internlm2_tokenizer=write(tmp_path / "hub" / "tokenizer.model", b"spm"))
    return target


@pytest.mark.parametrize("stage", ["single_gpu", "multi_gpu"])
def test_internevo_tokenises_64_examples(tmp_path: Path, served: tuple[str, Path],
                                         stage: str) -> None:
    target = internevo(tmp_path, served)
    assert (target.view / "dataset" / "alpaca_data.json").is_file()  # the raw download
    run = getattr(target.repo, stage)
    target.setup(run)
    out = target.out / "alpaca_tokenized"
    sample = target.out / "alpaca_data.sample64.json"
    records = json.loads(sample.read_text(encoding="utf-8"))
    assert [r["instruction"] for r in records] == [f"i{n}" for n in range(64)]
    assert "ö0" in sample.read_text(encoding="utf-8")  # ensure_ascii=False, as officially
    called = json.loads((out / "called.json").read_text())
    assert called["argv"] == [str(sample), str(out), str(target.view / "model" /
                                                         "tokenizer.model"),
                              "--split_ratio", "0.1"]
    assert called["n"] == 64
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["max_examples"], manifest["split_ratio"]) == (64, "0.1")
    assert len(manifest["sample_sha256"]) == len(manifest["tokenizer_sha256"]) == 64
    # the generated config trains on what the setup tokenised
    config = target.arg(run, "--config")
    text = config.read_text()
    assert f"train_folder={str(out / 'train')!r}" in text
    assert f"valid_folder={str(out / 'valid')!r}" in text


def test_internevo_tokenising_checks_its_result(tmp_path: Path,
                                                served: tuple[str, Path]) -> None:
    target = internevo(tmp_path, served, records=3)
    run = target.repo.single_gpu
    step = [target.fill(a, run) for a in run.setup[0]]
    step[step.index(str(target.out / "alpaca_tokenized"))] = str(target.out / "EMPTY" / "tok")
    done = subprocess.run(step, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "missing or empty" in done.stderr
    assert not (target.out / "EMPTY" / "tok" / "manifest.json").exists()
    (target.checkout / "tools" / "alpaca_tokenizer.py").write_text("raise SystemExit(3)\n")
    done = target.setup(run, check=False)
    assert done.returncode != 0 and "rc=3" in done.stderr
    assert not (target.out / "minimal_config.py").exists()


# --------------------------------------------------------------------------- VoxCPM


def test_voxcpm_manifest_names_the_prepared_wav(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="VoxCPM reads the config with yaml.safe_load")
    checkout = tmp_path / "checkout"
    write(checkout / "examples" / "example.wav", b"RIFFwav")
    target = Target(tmp_path, module("test_OpenBMB__VoxCPM").repo, checkout)
    model = tmp_path / "hub" / "openbmb__VoxCPM-0.5B"
    write(model / "config.json", "{}")
    write(model / "audiovae.pth", b"pth")
    target.prepare(**{"VoxCPM-0.5B": model})
    wav = target.view / "dataset" / "example.wav"
    assert wav.read_bytes() == b"RIFFwav"  # copied from the checkout by --reb-prepare
    run = target.repo.single_gpu
    target.setup(run)
    cfg = yaml.safe_load(target.arg(run, "--config_path").read_text())
    lines = Path(cfg["train_manifest"]).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{
        "audio": str(wav), "text": "This is a minimal benchmark sample for VoxCPM fine-tuning.",
        "dataset_id": 0}]
    wav.unlink()
    done = target.setup(run, check=False)
    assert done.returncode != 0 and "example.wav" in done.stderr


# --------------------------------------------------------------------------- deep-tempest

TEMPEST_PAIRS = [
    ("Screenshot from 2023-08-29 18-08-19.png",
     "Screenshot from 2023-08-29 18-08-19-gr-tempest_screenshot_05-09-2023_21_07_37.png"),
    ("Screenshot from 2023-08-29 18-08-27.png",
     "Screenshot from 2023-08-29 18-08-27-gr-tempest_screenshot_05-09-2023_21_10_14.png"),
]


def tempest(tmp_path: Path, served: tuple[str, Path], download: bytes) -> Target:
    checkout = tmp_path / "checkout"
    for i, (clean, capture) in enumerate(TEMPEST_PAIRS):
        write(checkout / "examples" / clean, f"H{i}")
        write(checkout / "examples" / capture, f"L{i}")
    write(checkout / "examples" / "Screenshot from 2023-08-29 18-08-31.png", "other")
    repo = on_server(module("test_emidan19__deep_tempest").repo, served,
                  {"drunet_pretrained": download})
    target = Target(tmp_path, repo, checkout)
    target.prepare()
    return target


def zipped(path: Path, members: dict[str, bytes]) -> bytes:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path.read_bytes()


def torch_zip(tmp_path: Path) -> bytes:
    """What torch.save writes: a zip of <prefix>/data.pkl, <prefix>/version, <prefix>/data/N."""
    return zipped(tmp_path / "ckpt.zip", {"archive/data.pkl": b"p", "archive/version": b"3",
                                          "archive/data/0": b"w" * 10})


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu", "retry"])
def test_deep_tempest_pairs_and_checkpoint(tmp_path: Path, served: tuple[str, Path],
                                           stage: str) -> None:
    download = torch_zip(tmp_path)
    target = tempest(tmp_path, served, download)
    raw = target.view / "model" / "download"
    assert raw.read_bytes() == download  # the share's download, as fetched
    repo = target.repo
    run = repo.multi_gpu.retry.run if stage == "retry" else getattr(repo, stage)
    target.setup(run)
    data = target.out / "dataset"
    for mini, count in (("mini_1", 1), ("mini_2", 2)):
        for side in ("H", "L"):  # pair i's clean screenshot in H, its capture in L
            got = sorted(p.name for p in (data / mini / side).iterdir())
            assert got == [f"sample{i}.png" for i in range(count)]
            for i in range(count):
                assert (data / mini / side / f"sample{i}.png").read_text() == f"{side}{i}"
    checkpoint = target.out / "model" / "pretrained.pth"
    assert checkpoint.read_bytes() == download  # a torch checkpoint is used as it is
    opt = json.loads(target.arg(run, "--opt").read_text())
    mini = "mini_1" if stage in ("cpu", "single_gpu") else "mini_2"
    assert opt["path"]["pretrained_netG"] == str(checkpoint)
    assert opt["datasets"]["train"]["dataroot_H"] == str(data / mini / "H")
    assert opt["datasets"]["test"]["dataroot_L"] == str(data / mini / "L")


def pick(tmp_path: Path, download: Path) -> subprocess.CompletedProcess[str]:
    shim = REPOS / "shims" / "test_emidan19__deep_tempest" / "pick_checkpoint.py"
    return subprocess.run([sys.executable, str(shim), str(download), str(tmp_path / "model")],
                          capture_output=True, text=True, timeout=60)


def test_deep_tempest_checkpoint_out_of_an_archive(tmp_path: Path) -> None:
    """An archive: a *_G.pth first, else the largest checkpoint-like file, extracted with its
    extension; none, or a truncated zip, fails."""
    out = tmp_path / "model"
    archive = tmp_path / "a.zip"
    zipped(archive, {"x/big.pth": b"b" * 50, "x/net_G.pth": b"g", "README": b"r" * 99})
    assert pick(tmp_path, archive).returncode == 0
    assert (out / "pretrained.pth").read_bytes() == b"g"
    assert not (out / "pretrained.pth").is_symlink()
    zipped(archive, {"m/a.pt": b"a" * 5, "m/B.PTH.TAR": b"t" * 9, "m/c.bin": b"c" * 9})
    done = pick(tmp_path, archive)
    assert done.returncode == 0, done.stderr
    assert (out / "pretrained.pth.tar").read_bytes() == b"t" * 9  # largest; ties: first by name
    zipped(archive, {"notes.txt": b"n"})
    done = pick(tmp_path, archive)
    assert done.returncode == 1 and "no checkpoint-like file" in done.stderr
    archive.write_bytes(b"PK\x03\x04truncated")
    done = pick(tmp_path, archive)
    assert done.returncode == 1 and "truncated zip" in done.stderr
    raw = write(tmp_path / "raw.bin", b"\x80\x02legacy pickle")
    assert pick(tmp_path, raw).returncode == 0
    assert (out / "pretrained.pth").resolve() == raw.resolve()  # a raw checkpoint: linked


def test_deep_tempest_missing_pair_fails(tmp_path: Path, served: tuple[str, Path]) -> None:
    target = tempest(tmp_path, served, b"raw checkpoint")
    (target.view / "dataset" / TEMPEST_PAIRS[1][1]).unlink()
    done = target.setup(target.repo.multi_gpu, check=False)
    assert done.returncode == 1 and "expected example files not found" in done.stderr
    assert not (target.out / "options_multi_gpu_min.json").exists()


# --------------------------------------------------------------------------- FunMusic

MUSIC_YAML = """\
basemodel_path: '../../pretrained_models/InspireMusic-Base/'
generator_path: '../../pretrained_models/InspireMusic-Base/music_tokenizer'
filter: !name:inspiremusic.dataset.processor.filter
    min_length: 10
    min_acoustic_length: 1800
train_conf:
    max_epoch: 200
    accum_grad: 2
    log_interval: 100
    save_per_step: 500
"""

MUSIC_SAMPLE = "examples/music_generation/data/samples/parquet/parquet_000000000.tar"


def funmusic(tmp_path: Path, parquet: bytes = b"PAR1") -> Target:
    checkout = tmp_path / "checkout"
    write(checkout / "examples" / "music_generation" / "conf" / "inspiremusic.yaml", MUSIC_YAML)
    write(checkout / MUSIC_SAMPLE, parquet)
    target = Target(tmp_path, module("test_FunAudioLLM__FunMusic").repo, checkout)
    model = tmp_path / "hub" / "InspireMusic-Base"
    write(model / "llm.pt", b"llm")
    target.prepare(**{"InspireMusic-Base": model})
    return target


@pytest.mark.parametrize("stage", ["single_gpu", "multi_gpu"])
def test_funmusic_yaml_from_the_raw_copy(tmp_path: Path, stage: str) -> None:
    target = funmusic(tmp_path)
    raw_yaml = target.view / "model" / "inspiremusic.yaml"
    assert raw_yaml.read_text() == MUSIC_YAML  # copied from the checkout by prepare
    assert (target.view / "dataset" / "inspiremusic_samples" /
            "parquet_000000000.tar").read_bytes() == b"PAR1"
    run = getattr(target.repo, stage)
    target.setup(run, check=False)  # the YAML comes first; slicing needs pyarrow
    config = target.arg(run, "--config")
    model = target.view / "model" / "InspireMusic-Base"
    text = config.read_text()
    assert f"basemodel_path: '{model}/'" in text
    assert f"generator_path: '{model}/music_tokenizer'" in text
    for line in ("min_length: 1\n", "min_acoustic_length: 1\n", "max_epoch: 1\n",
                 "accum_grad: 1\n", "log_interval: 1\n", "save_per_step: 0\n"):
        assert line in text


def test_funmusic_one_row_from_the_raw_copy(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow", reason="slicing the parquet needs pyarrow")
    import pyarrow.parquet as pq

    made = tmp_path / "made.parquet"
    pq.write_table(pa.table({"utt": ["a", "b"]}), made)
    target = funmusic(tmp_path, made.read_bytes())
    run = target.repo.multi_gpu
    target.setup(run)
    listed = target.arg(run, "--train_data").read_text().splitlines()
    assert pq.read_table(listed[0]).to_pylist() == [{"utt": "a"}]


# --------------------------------------------------------------------------- ClearerVoice


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu"])
def test_clearervoice_scp_lists_name_the_prepared_wav(tmp_path: Path, stage: str) -> None:
    checkout = tmp_path / "checkout"
    write(checkout / "clearvoice" / "samples" / "input.wav", b"RIFF")
    write(checkout / "train" / "speech_enhancement" / "train.py", "")
    target = Target(tmp_path, module("test_modelscope__ClearerVoice_Studio").repo, checkout)
    snapshot = tmp_path / "hub" / "FRCRN_SE_16K"
    write(snapshot / "last_best_checkpoint.pt", b"pt")
    target.prepare(FRCRN_SE_16K=snapshot)
    wav = target.view / "dataset" / "input.wav"
    assert wav.read_bytes() == b"RIFF"
    run = getattr(target.repo, stage)
    target.setup(run)
    line = f"{wav} {wav}\n"
    assert (target.out / "train.scp").read_text() == (target.out / "cv.scp").read_text() == line
    times = 2 if stage == "multi_gpu" else 1
    assert target.arg(run, "--tr-list").read_text() == line * times
    assert target.arg(run, "--cv-list").read_text() == line * times
    wav.unlink()
    done = target.setup(run, check=False)
    assert done.returncode == 1 and "missing sample audio" in done.stderr


# --------------------------------------------------------------------------- RenderFormer

#: A stand-in of scene_processor/convert_scene.py: reads the scene's meshes against the JSON's
#: folder (as generate_scene_mesh does), writes the mesh and the h5, records its call.
CONVERTER = """\
import argparse, json, os
parser = argparse.ArgumentParser()
parser.add_argument("scene_config_path")
parser.add_argument("--mesh_path")
parser.add_argument("--output_h5_path")
args = parser.parse_args()
config = json.load(open(args.scene_config_path))
folder = os.path.dirname(args.scene_config_path)
meshes = [open(folder + "/" + o["mesh_path"]).read() for o in config["objects"].values()]
open(args.mesh_path, "w").write("".join(meshes))
open(args.output_h5_path, "w").write(json.dumps({"scene": config["scene_name"],
                                                  "cwd": os.getcwd()}))
"""


def renderformer(tmp_path: Path) -> Target:
    checkout = tmp_path / "checkout"
    write(checkout / "scene_processor" / "convert_scene.py", CONVERTER)
    examples = checkout / "examples"
    write(examples / "templates" / "backgrounds" / "plane.obj", "plane\n")
    for scene, mesh in (("cbox", "objects/cbox/tall-box.obj"),
                        ("shader-ball", "objects/shader-ball/ball.obj")):
        write(examples / mesh, f"{scene} mesh\n")
        write(examples / f"{scene}.json", json.dumps({"scene_name": scene, "objects": {
            "bg": {"mesh_path": "templates/backgrounds/plane.obj"},
            "obj": {"mesh_path": mesh}}}))
    target = Target(tmp_path, module("test_microsoft__renderformer").repo, checkout)
    model = tmp_path / "hub" / "renderformer-v1-base"
    write(model / "config.json", "{}")
    target.prepare(**{"renderformer-v1-base": model})
    return target


@pytest.mark.parametrize("stage", ["cpu", "single_gpu", "multi_gpu"])
def test_renderformer_scenes_converted_into_out(tmp_path: Path, stage: str) -> None:
    target = renderformer(tmp_path)
    assert sorted(p.name for p in (target.view / "dataset").iterdir()) == [
        "cbox.json", "shader-ball.json"]  # the raw copies
    run = getattr(target.repo, stage)
    target.setup(run)
    scenes = ["cbox", "shader-ball"] if stage == "multi_gpu" else ["cbox"]
    for scene in scenes:
        h5 = json.loads((target.out / scene / f"{scene}.h5").read_text())
        assert h5 == {"scene": scene, "cwd": str(target.checkout)}
        mesh = (target.out / "scene_meshes" / f"{scene}.obj").read_text()
        assert mesh == f"plane\n{scene} mesh\n"
    argv = [target.fill(a, run) for a in run.argv]
    h5s = [argv[i + 1] for i, a in enumerate(argv) if a in ("--h5_file", "--scene")]
    assert h5s == [str(target.out / s / f"{s}.h5") for s in scenes]


def test_renderformer_failed_conversion_fails_setup(tmp_path: Path) -> None:
    target = renderformer(tmp_path)
    (target.checkout / "scene_processor" / "convert_scene.py").write_text("pass\n")
    done = target.setup(target.repo.cpu, check=False)
    assert done.returncode == 1 and "failed to generate" in done.stderr
