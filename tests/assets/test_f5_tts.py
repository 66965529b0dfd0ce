"""F5-TTS's wav (``repos/test_SWivid__F5_TTS.py``): read in place by inference, turned into a
training set by the multi-GPU stage's setup.
"""

from __future__ import annotations

import json
import os
import wave
from pathlib import Path

from support.assets import assert_real
from support.repomodules import Stage, module

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
        # their one setup step lays out the vocoder's hub cache (tests/test_repo_f5_tts_vocoder)
        assert [step[1] for step in run.setup] == ["{shims}/vocos_hub_cache.py"]
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
