"""The prepare post-processing of group assets_f's assets, reproduced as setup steps.

LettuceDetect, F5-TTS, ml-mdm, Sapiens, Open-Sora, finetrainers and Vim: each
test runs a stage's ``setup`` steps exactly as its ``repos/`` module declares
them (placeholders filled with temporary folders, the host python as
``{python}``) against a small stand-in of the raw asset as ``--reb-prepare``
lays it out (and of the repository code a step calls), and checks what they
wrote against what the official prepare step wrote, and that the paths the
run's argv and env read are the ones written.  Nothing here needs torch.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import shutil
import tarfile
import urllib.parse
import wave
import zipfile
from pathlib import Path

from repomodules import Stage, module, stages  # tests/repomodules.py

from pytest_reb.assets.fetchers import _extract_all, fetch
from pytest_reb.assets.view import needed
from pytest_reb.spec import Repo

ROOT = Path(__file__).resolve().parents[1]
REPOS = ROOT / "repos"








def assert_real(repo: Repo, name: str, readers: list[str]) -> None:
    """The asset is declared and exactly the stages ``readers`` need it."""
    assert any(a.name == name for a in repo.assets)
    for stage, run in stages(repo):
        read = [a.name for a in needed(repo, run)]
        assert (name in read) == (stage in readers), (repo.name, stage, read)




def fetched(repo: Repo, name: str, host: str, staging: Path) -> Path:
    """``--reb-prepare``'s fetch of asset ``name`` with its url's host swapped for ``host``."""
    asset = next(a for a in repo.assets if a.name == name)
    assert asset.url is not None
    local = dataclasses.replace(asset, url=host + urllib.parse.urlparse(asset.url).path)
    staging.mkdir(parents=True)
    fetch(local, staging, network=True)
    return staging


# --------------------------------------------------------------------------- LettuceDetect

#: A stand-in of the repository's sample class (the real one also imports torch).
LETTUCE_DATASET = '''
class HallucinationSample:
    def __init__(self, prompt, answer, labels, split, task_type, dataset, language):
        self.d = dict(prompt=prompt, answer=answer, labels=labels, split=split,
                      task_type=task_type, dataset=dataset, language=language)

    def to_json(self):
        return dict(self.d)


class HallucinationData:
    def __init__(self, samples):
        self.samples = samples

    def to_json(self):
        return [s.to_json() for s in self.samples]
'''

#: A stand-in of lettucedetect/preprocess/preprocess_ragtruth.py: same arguments, same output.
LETTUCE_PREPROCESS = '''
import argparse, json
from pathlib import Path
from lettucedetect.datasets.hallucination_dataset import HallucinationData, HallucinationSample

p = argparse.ArgumentParser()
p.add_argument("--input_dir", required=True)
p.add_argument("--output_dir", required=True)
a = p.parse_args()
src = Path(a.input_dir)
responses = [json.loads(x) for x in (src / "response.jsonl").read_text().splitlines()]
sources = {s["source_id"]: s for s in
           (json.loads(x) for x in (src / "source_info.jsonl").read_text().splitlines())}
data = HallucinationData([])
for r in responses:
    s = sources[r["source_id"]]
    labels = [{"start": x["start"], "end": x["end"], "label": x["label_type"]}
              for x in r["labels"]]
    data.samples.append(HallucinationSample(s["prompt"], r["response"], labels, r["split"],
                                            s["task_type"], "ragtruth", "en"))
(Path(a.output_dir) / "ragtruth_data.json").write_text(json.dumps(data.to_json(), indent=4))
'''


def lettuce_checkout(repo: Path) -> None:
    pkg = repo / "lettucedetect"
    (pkg / "datasets").mkdir(parents=True)
    (pkg / "preprocess").mkdir()
    for folder in (pkg, pkg / "datasets", pkg / "preprocess"):
        (folder / "__init__.py").write_text("")
    (pkg / "datasets" / "hallucination_dataset.py").write_text(LETTUCE_DATASET)
    (pkg / "preprocess" / "preprocess_ragtruth.py").write_text(LETTUCE_PREPROCESS)


def lettuce_raw(raw: Path, splits: list[str]) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    sources = [{"source_id": str(i), "prompt": f"context {i}", "task_type": "QA"}
               for i in range(len(splits))]
    responses = [{"source_id": str(i), "response": f"answer {i}", "split": split,
                  "labels": [{"start": 0, "end": 6, "label_type": "Evident Conflict"}]}
                 for i, split in enumerate(splits)]
    (raw / "source_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sources))
    (raw / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))


def test_lettucedetect_ragtruth_reduced_by_setup(tmp_path: Path) -> None:
    mod = module("test_KRLabsOrg__LettuceDetect")
    repo = mod.repo
    assert_real(repo, "ragtruth_mini", ["cpu", "single_gpu"])
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        lettuce_checkout(stage.repo)
        raw = stage.raw("ragtruth_mini")
        assert raw == stage.assets / "dataset" / "ragtruth"
        lettuce_raw(raw, ["test", "train", "train", "train"])
        before = sorted(p.name for p in raw.iterdir())
        stage.setup()
        assert sorted(p.name for p in raw.iterdir()) == before, "the raw asset is only read"
        full = json.loads((stage.out / "ragtruth" / "ragtruth_data.json").read_text())
        assert len(full) == 4 and {s["dataset"] for s in full} == {"ragtruth"}
        mini = json.loads(Path(stage.arg("--ragbench-path")).read_text())
        assert [(s["answer"], s["split"], s["dataset"]) for s in mini] == [
            ("answer 1", "train", "ragbench"), ("answer 2", "dev", "ragbench")]
        assert mini[0]["labels"] == [{"start": 0, "end": 6, "label": "Evident Conflict"}]
        assert mini[0]["prompt"] == "context 1" and mini[0]["task_type"] == "QA"
        assert json.loads(Path(stage.arg("--ragtruth-path")).read_text()) == []
        assert Path(stage.arg("--ragbench-path")).parent == stage.out


def test_lettucedetect_needs_two_train_samples(tmp_path: Path) -> None:
    repo = module("test_KRLabsOrg__LettuceDetect").repo
    assert repo.cpu is not None
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    lettuce_checkout(stage.repo)
    lettuce_raw(stage.raw("ragtruth_mini"), ["test", "train"])
    done = stage.setup(check=False)
    assert done.returncode != 0 and "need at least 2 train samples" in done.stderr
    assert not (stage.out / "ragbench_min.json").exists()


def test_lettucedetect_raw_download_is_what_the_setup_reads(
        tmp_path: Path, served: tuple[str, Path]) -> None:
    host, www = served
    repo = module("test_KRLabsOrg__LettuceDetect").repo
    lettuce_raw(www / "ParticleMedia" / "RAGTruth" / "main" / "dataset", ["train", "train"])
    staging = fetched(repo, "ragtruth_mini", host, tmp_path / "staging")
    assert sorted(p.name for p in staging.iterdir()) == ["response.jsonl", "source_info.jsonl"]
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    lettuce_checkout(stage.repo)
    shutil.copytree(staging, stage.raw("ragtruth_mini"))
    stage.setup()
    assert len(json.loads((stage.out / "ragbench_min.json").read_text())) == 2


# --------------------------------------------------------------------------- F5-TTS

#: Stand-ins of datasets' ArrowWriter (json lines) and of f5_tts's pinyin conversion.
ARROW_WRITER = '''
import json

class ArrowWriter:
    def __init__(self, path):
        self.path, self.rows, self.done = path, [], False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with open(self.path, "w") as fh:
            fh.write(json.dumps({"rows": self.rows, "finalized": self.done}))

    def write(self, row):
        self.rows.append(row)

    def finalize(self):
        self.done = True
'''
F5_UTILS = '''
def convert_char_to_pinyin(text_list, polyphone=True):
    return [list(text) for text in text_list]
'''


def write_wav(path: Path, frames: int, rate: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as fh:
        fh.setnchannels(1)
        fh.setsampwidth(2)
        fh.setframerate(rate)
        fh.writeframes(b"\0\0" * frames)


def f5_checkout(repo: Path, site: Path) -> None:
    (repo / "src" / "f5_tts" / "model").mkdir(parents=True)
    (repo / "src" / "f5_tts" / "__init__.py").write_text("")
    (repo / "src" / "f5_tts" / "model" / "__init__.py").write_text("")
    (repo / "src" / "f5_tts" / "model" / "utils.py").write_text(F5_UTILS)
    (repo / "data" / "Emilia_ZH_EN_pinyin").mkdir(parents=True)
    (repo / "data" / "Emilia_ZH_EN_pinyin" / "vocab.txt").write_text(" \na\nb\n")
    (site / "datasets").mkdir(parents=True)
    (site / "datasets" / "__init__.py").write_text("")
    (site / "datasets" / "arrow_writer.py").write_text(ARROW_WRITER)


def test_f5tts_wav_read_in_place_and_training_set_built_by_setup(tmp_path: Path) -> None:
    mod = module("test_SWivid__F5_TTS")
    repo = mod.repo
    assert_real(repo, "f5tts_minimal", ["cpu", "single_gpu", "multi_gpu"])
    for name in ("cpu", "single_gpu"):  # inference reads the prepared wav itself
        run = getattr(repo, name)
        assert not run.setup
        assert "{assets}/dataset/infer_minimal/ref_audio.wav" in run.argv
        assert repo.assets[0].dest == "dataset/infer_minimal/ref_audio.wav"
    run = repo.multi_gpu
    stage = Stage(run, tmp_path, "multi_gpu", repo)
    site = tmp_path / "site"
    f5_checkout(stage.repo, site)
    wav = stage.raw("f5tts_minimal")
    write_wav(wav, frames=48000, rate=24000)
    stage.setup(PYTHONPATH=f"{stage.repo}/src{os.pathsep}{site}")

    inputs = stage.out / "csv_wavs_minimal"
    assert (inputs / "metadata.csv").read_text() == (
        "audio_path|text\nwavs/sample.wav|Some call me nature, others call me mother nature.\n")
    assert (inputs / "wavs" / "sample.wav").read_bytes() == wav.read_bytes()
    # the run's datasets.name, resolved as F5's load_dataset and get_tokenizer do
    element = next(a for a in run.argv if a.startswith("datasets.name="))
    assert element == "datasets.name={file:{out}/f5tts_dataset_name}"
    name = (stage.out / "f5tts_dataset_name").read_text().strip()
    assert not name.startswith("/")
    package = stage.repo / "src" / "f5_tts"
    found = Path(os.path.realpath(str(package.joinpath(f"../../data/{name}_pinyin"))))
    assert found == (stage.out / "f5tts_minimal_pinyin").resolve()
    arrow = json.loads((found / "raw.arrow").read_text())
    text = list("Some call me nature, others call me mother nature.")
    assert arrow == {"finalized": True, "rows": [
        {"audio_path": str((inputs / "wavs" / "sample.wav").resolve()), "text": text,
         "duration": 2.0}] * 2}
    assert json.loads((found / "duration.json").read_text()) == {"duration": [2.0, 2.0]}
    vocab = os.path.join(str(package.joinpath("../../data")), f"{name}_pinyin/vocab.txt")
    assert Path(vocab).read_text() == " \na\nb\n"


def test_f5tts_setup_fails_without_the_checkout_data_folder(tmp_path: Path) -> None:
    repo = module("test_SWivid__F5_TTS").repo
    stage = Stage(repo.multi_gpu, tmp_path, "multi_gpu", repo)
    site = tmp_path / "site"
    f5_checkout(stage.repo, site)
    (stage.repo / "data" / "Emilia_ZH_EN_pinyin" / "vocab.txt").unlink()
    write_wav(stage.raw("f5tts_minimal"), frames=100, rate=16000)
    done = stage.setup(check=False, PYTHONPATH=f"{stage.repo}/src{os.pathsep}{site}")
    assert done.returncode != 0 and "missing the pretrained vocab" in done.stderr
    assert not (stage.out / "f5tts_dataset_name").exists()


# --------------------------------------------------------------------------- ml-mdm

MDM_CAPTION = "Manager in store with TVs, computers, laptops, printers, monitors."


def mdm_stand_ins(stage: Stage, files: list[str]) -> Path:
    """The prepared tar (holding ``files``) and the repository's own index; the tar's path."""
    tar = stage.raw("ml_mdm_dummy") / "images_00000.tar"
    tar.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tar, "w") as archive:
        for name in files:
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(b"jpg"))
    index = stage.repo / "ml-mdm-matryoshka" / "tests" / "test_files" / "images_00000.tsv"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("tar\tfile\tcaption\n"
                     f"tests/test_files/images_00000.tar\t0000000000.jpg\t{MDM_CAPTION}\n")
    return tar


def test_ml_mdm_file_list_rebuilt_by_setup(tmp_path: Path) -> None:
    mod = module("test_apple__ml_mdm")
    repo = mod.repo
    assert_real(repo, "ml_mdm_dummy", ["cpu", "single_gpu", "multi_gpu"])
    assert repo.assets[0].dest == "dataset/ml_mdm_dummy"
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        (stage.repo / "ml-mdm-matryoshka").mkdir(parents=True)  # the run's cwd
        tar = mdm_stand_ins(stage, ["0000000000.jpg", "0000000001.jpg"])
        stage.setup()
        file_list = Path(next(a for a in stage.argv() if a.startswith("--file-list="))
                         .removeprefix("--file-list="))
        assert file_list == stage.out / "ml_mdm_dummy" / "sample_training_0.tsv"
        with open(file_list, newline="") as fh:  # read as the reader does: tab-separated
            listed = [r["filename"] for r in csv.DictReader(fh, delimiter="\t")]
        assert listed == [str(stage.out / "ml_mdm_dummy" / "images_00000.tsv")]
        with open(listed[0], newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        assert rows == [{"tar": str(tar), "file": "0000000000.jpg", "caption": MDM_CAPTION}]
        with tarfile.open(rows[0]["tar"]) as archive:
            assert archive.extractfile(rows[0]["file"]).read() == b"jpg"  # type: ignore[union-attr]


def test_ml_mdm_setup_refuses_a_tar_without_the_indexed_image(tmp_path: Path) -> None:
    repo = module("test_apple__ml_mdm").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    (stage.repo / "ml-mdm-matryoshka").mkdir(parents=True)
    mdm_stand_ins(stage, ["0000000005.jpg"])
    done = stage.setup(check=False)
    assert done.returncode != 0 and "0000000000.jpg" in done.stderr
    assert not (stage.out / "ml_mdm_dummy" / "sample_training_0.tsv").exists()


# --------------------------------------------------------------------------- Sapiens


def test_sapiens_toy_dataset_pruned_by_setup_from_folders(tmp_path: Path) -> None:
    mod = module("test_facebookresearch__sapiens")
    repo = mod.repo
    assert_real(repo, "sapiens_toy_dataset_min1", ["cpu", "single_gpu", "multi_gpu"])
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        raw = stage.raw("sapiens_toy_dataset_min1")
        assert raw == stage.assets / "dataset" / "sapiens_toy_dataset"
        for stem in ("00000002", "00000001", "00000003"):
            for kind, suffix in (("images", ".png"), ("masks", ".png"), ("normals", ".npy")):
                (raw / kind).mkdir(parents=True, exist_ok=True)
                (raw / kind / f"{stem}{suffix}").write_text(f"{kind} {stem}")
        (raw / "images" / "notes.txt").write_text("not an image")
        (raw / "depths").mkdir()
        (raw / "depths" / "00000001.npy").write_text("depth")
        stage.setup()
        option = next(a for a in stage.argv() if a.startswith("dataset_train.data_root="))
        root = Path(option.removeprefix("dataset_train.data_root="))
        assert root == stage.out / "sapiens_toy_dataset_min1"
        assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
            "images/00000001.png", "masks/00000001.png", "normals/00000001.npy"]
        assert (root / "normals" / "00000001.npy").read_text() == "normals 00000001"
        assert len(list((raw / "images").iterdir())) == 4, "the raw download is only read"


def test_sapiens_toy_dataset_pruned_by_setup_from_zips(tmp_path: Path) -> None:
    repo = module("test_facebookresearch__sapiens").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    raw = stage.raw("sapiens_toy_dataset_min1")
    raw.mkdir(parents=True)
    with zipfile.ZipFile(raw / "images.zip", "w") as zf:  # members in their folder
        zf.writestr("images/", "")
        zf.writestr("images/b.png", "img b")
        zf.writestr("images/a.jpg", "img a")
    with zipfile.ZipFile(raw / "masks.zip", "w") as zf:  # flat members: the archive's name
        zf.writestr("a.png", "mask a")
        zf.writestr("b.png", "mask b")
    with zipfile.ZipFile(raw / "normals.zip", "w") as zf:
        zf.writestr("normals/a.npy", "normal a")
    stage.setup()
    root = stage.out / "sapiens_toy_dataset_min1"
    assert {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()} == {
        "images/a.jpg": "img a", "masks/a.png": "mask a", "normals/a.npy": "normal a"}


def test_sapiens_setup_fails_without_a_matching_normal(tmp_path: Path) -> None:
    repo = module("test_facebookresearch__sapiens").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    raw = stage.raw("sapiens_toy_dataset_min1")
    for kind, name in (("images", "1.png"), ("masks", "1.png"), ("normals", "2.npy")):
        (raw / kind).mkdir(parents=True)
        (raw / kind / name).write_text(kind)
    done = stage.setup(check=False)
    assert done.returncode != 0 and "no normals file for the sample '1'" in done.stderr


# --------------------------------------------------------------------------- Open-Sora


def test_open_sora_first_prompt_written_by_setup(tmp_path: Path) -> None:
    mod = module("test_hpcaitech__Open_Sora")
    repo = mod.repo
    assert_real(repo, "prompts", ["cpu", "single_gpu", "multi_gpu"])
    first = ('Imagine a cyberpunk close-up shot, with "quotes", commas\nand a line break.')
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        raw = stage.raw("prompts") / "example.csv"  # the repository file, copied as is
        raw.parent.mkdir(parents=True, exist_ok=True)
        with open(raw, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["text"])
            writer.writerows([[first], ["A sleek red sports car."]])
        stage.setup()
        path = Path(stage.arg("--dataset.data-path"))
        assert path == stage.out / "prompts.csv"
        with open(path, newline="") as fh:
            reader = csv.DictReader(fh)
            assert reader.fieldnames == ["text"]
            assert list(reader) == [{"text": first}]


def test_open_sora_fallback_prompt(tmp_path: Path) -> None:
    repo = module("test_hpcaitech__Open_Sora").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    raw = stage.raw("prompts") / "example.csv"
    raw.parent.mkdir(parents=True)
    raw.write_text("prompt\nsomething\n")
    stage.setup()
    assert (stage.out / "prompts.csv").read_bytes() == b'text\r\n"raining, sea"\r\n'


# --------------------------------------------------------------------------- finetrainers


def test_finetrainers_dataset_config_written_by_setup(tmp_path: Path) -> None:
    mod = module("test_huggingface__finetrainers")
    repo = mod.repo
    assert_real(repo, "crush-smol", ["single_gpu", "multi_gpu"])
    assert_real(repo, "Wan2.1-T2V-1.3B", ["single_gpu", "multi_gpu"])
    wan = next(a for a in repo.assets if a.name == "Wan2.1-T2V-1.3B")
    assert wan.dest == "model/current"  # the pretrained model path
    for name, run in stages(repo):
        assert "{assets}/model/current" in run.argv
        stage = Stage(run, tmp_path / name, name, repo)
        snapshot = stage.raw("crush-smol")
        assert snapshot == stage.assets / "dataset"
        (snapshot / "videos").mkdir(parents=True)
        (snapshot / "videos" / "1.mp4").write_bytes(b"mp4")
        (snapshot / "metadata.csv").write_text("file_name,caption\nvideos/1.mp4,crush\n")
        stage.setup()
        path = Path(stage.arg("--dataset_config"))
        assert path == stage.out / "dataset_config.json"
        assert json.loads(path.read_text()) == {"datasets": [{
            "data_root": str(snapshot), "dataset_type": "video", "id_token": "PIKA_CRUSH",
            "video_resolution_buckets": [[49, 480, 832]], "reshape_mode": "bicubic",
            "remove_common_llm_caption_prefixes": True}]}


def test_finetrainers_setup_refuses_an_empty_snapshot(tmp_path: Path) -> None:
    repo = module("test_huggingface__finetrainers").repo
    stage = Stage(repo.single_gpu, tmp_path, "single_gpu", repo)
    (stage.raw("crush-smol") / "videos").mkdir(parents=True)
    done = stage.setup(check=False)
    assert done.returncode != 0 and "missing or empty" in done.stderr
    assert not (stage.out / "dataset_config.json").exists()


# --------------------------------------------------------------------------- Vim

COCO_IMAGES = ["000000000139.jpg", "000000000285.jpg"]


def coco_download(folder: Path) -> None:
    """Stand-ins of the two downloaded files: the images tgz (val2017/...) and the json."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(folder / "val2017_100.tgz", "w:gz") as tar:
        for name in COCO_IMAGES:
            info = tarfile.TarInfo(f"val2017/{name}")
            info.size = len(name)
            tar.addfile(info, io.BytesIO(name.encode()))
    (folder / "instances_val2017_100.json").write_text('{"images": [], "annotations": []}')


def check_detectron2_layout(stage: Stage) -> None:
    """What detectron2's builtin coco_2017_val_100 reads under DETECTRON2_DATASETS."""
    root = Path(stage.fill(stage.run.env["DETECTRON2_DATASETS"]))
    assert root == stage.out / "datasets"
    images = root / "coco" / "val2017"
    assert sorted(p.name for p in images.iterdir()) == COCO_IMAGES
    assert (images / COCO_IMAGES[0]).read_text() == COCO_IMAGES[0]
    annotations = root / "coco" / "annotations" / "instances_val2017_100.json"
    assert json.loads(annotations.read_text()) == {"images": [], "annotations": []}


def test_vim_coco_laid_out_by_setup_from_the_prepared_view(tmp_path: Path) -> None:
    mod = module("test_hustvl__Vim")
    repo = mod.repo
    assert_real(repo, "coco_2017_val_100", ["cpu", "single_gpu", "multi_gpu"])
    coco = repo.assets[0]
    assert coco.dest == "dataset/coco/" and coco.extract
    staging = tmp_path / "staging"  # what --reb-prepare makes of the two downloads
    coco_download(staging)
    _extract_all(staging, "coco")
    assert sorted(p.name for p in staging.iterdir()) == ["instances_val2017_100.json", "val2017"]
    for name, run in stages(repo):
        stage = Stage(run, tmp_path / name, name, repo)
        raw = stage.raw("coco_2017_val_100")
        shutil.copytree(staging, raw)
        stage.setup()
        check_detectron2_layout(stage)
        assert (stage.out / "datasets" / "coco" / "val2017").resolve() == (raw / "val2017")
        stage.setup()  # a second run of the setup in the same {out} works too
        check_detectron2_layout(stage)


def test_vim_setup_unpacks_a_download_left_packed(tmp_path: Path) -> None:
    repo = module("test_hustvl__Vim").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    coco_download(stage.raw("coco_2017_val_100"))
    stage.setup()
    check_detectron2_layout(stage)
    assert not (stage.out / "datasets" / "coco" / "val2017").is_symlink()


def test_vim_setup_needs_the_annotations(tmp_path: Path) -> None:
    repo = module("test_hustvl__Vim").repo
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    coco_download(stage.raw("coco_2017_val_100"))
    (stage.raw("coco_2017_val_100") / "instances_val2017_100.json").unlink()
    done = stage.setup(check=False)
    assert done.returncode != 0 and "instances_val2017_100.json" in done.stderr


def test_vim_both_files_fetched_from_beside_the_tgz_url(
        tmp_path: Path, served: tuple[str, Path]) -> None:
    host, www = served
    repo = module("test_hustvl__Vim").repo
    coco_download(www / "detectron2" / "annotations" / "coco")
    staging = fetched(repo, "coco_2017_val_100", host, tmp_path / "staging")
    assert sorted(p.name for p in staging.iterdir()) == ["instances_val2017_100.json", "val2017"]
    stage = Stage(repo.cpu, tmp_path, "cpu", repo)
    shutil.copytree(staging, stage.raw("coco_2017_val_100"))
    stage.setup()
    check_detectron2_layout(stage)
