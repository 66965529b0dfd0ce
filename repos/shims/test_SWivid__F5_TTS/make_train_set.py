"""Build F5-TTS's one-sample training set from the prepared reference wav (the C4 stage).

The official prepare step copied the repository's ``basic_ref_en.wav`` into a
csv-style input folder (``metadata.csv`` + ``wavs/sample.wav``) and wrote the
preprocessed set ``f5tts_minimal_pinyin/`` that ``f5_tts.train.train`` loads
for ``datasets.name=f5tts_minimal``:

    raw.arrow      rows {audio_path, text, duration} written with datasets'
                   ArrowWriter; text = f5_tts's convert_char_to_pinyin of the
                   reference sentence, the same row twice
    duration.json  {"duration": [seconds, seconds]}
    vocab.txt      copied from the checkout's data/Emilia_ZH_EN_pinyin/vocab.txt

This script writes the same under ``--out``.  F5 finds a training set only as
``<checkout>/data/<name>_pinyin`` (relative to the installed package), so the
last file written, ``--out``/f5tts_dataset_name, holds the name that reaches
``--out``/f5tts_minimal_pinyin from there (the official name was the relative
``../benchmark_assets/dataset/f5tts_minimal``; the run reads ours with
``{file:...}``).  The audio path in the rows is absolute: the official one was
relative to the checkout, where train.py changes directory, and ``--out`` is
not under it.

It imports f5_tts and datasets (and torchaudio only when the wav is not plain
PCM), which the repository needs anyway: run it under the report's python.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import wave
from pathlib import Path

TEXT = "Some call me nature, others call me mother nature."


def duration_of(wav: Path) -> float:
    """Seconds of audio: frames / rate, as torchaudio's shape[-1] / sample_rate gives."""
    try:
        with wave.open(str(wav), "rb") as fh:
            return fh.getnframes() / float(fh.getframerate())
    except (wave.Error, EOFError):
        import torchaudio  # not plain PCM: load it as the official step did

        audio, rate = torchaudio.load(str(wav))
        return float(audio.shape[-1]) / float(rate)


def data_dir() -> Path:
    """``<package>/../../data``, where F5 looks up ``<name>_pinyin`` (resolved)."""
    from importlib.resources import files

    folder = Path(str(files("f5_tts").joinpath("../../data")))
    if not folder.is_dir():
        raise SystemExit(f"f5_tts's data folder {folder} does not exist: F5 cannot find a "
                         "training set by name (is f5_tts the checkout's src/f5_tts?)")
    return folder.resolve()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wav", required=True, type=Path, help="the prepared reference wav")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--samples", type=int, default=2, help="rows (the official wrote 2)")
    args = parser.parse_args(argv)
    if not args.wav.is_file():
        raise SystemExit(f"missing reference wav {args.wav}")
    out = args.out.resolve()

    inputs = out / "csv_wavs_minimal"
    (inputs / "wavs").mkdir(parents=True, exist_ok=True)
    sample = inputs / "wavs" / "sample.wav"
    shutil.copyfile(args.wav, sample)
    (inputs / "metadata.csv").write_text(f"audio_path|text\nwavs/sample.wav|{args.text}\n",
                                         encoding="utf-8")

    from datasets.arrow_writer import ArrowWriter
    from f5_tts.model.utils import convert_char_to_pinyin

    tokens = convert_char_to_pinyin([args.text], polyphone=True)[0]
    if not isinstance(tokens, list):
        raise SystemExit(f"convert_char_to_pinyin gave {type(tokens).__name__}, not a list")
    seconds = duration_of(sample)
    rows = [{"audio_path": str(sample), "text": tokens, "duration": seconds}
            for _ in range(max(1, args.samples))]

    prepared = out / "f5tts_minimal_pinyin"
    prepared.mkdir(parents=True, exist_ok=True)
    with ArrowWriter(path=str(prepared / "raw.arrow")) as writer:
        for row in rows:
            writer.write(row)
        writer.finalize()
    (prepared / "duration.json").write_text(
        json.dumps({"duration": [seconds] * len(rows)}, ensure_ascii=False), encoding="utf-8")
    data = data_dir()
    vocab = data / "Emilia_ZH_EN_pinyin" / "vocab.txt"
    if not vocab.is_file():
        raise SystemExit(f"missing the pretrained vocab {vocab}")
    shutil.copyfile(vocab, prepared / "vocab.txt")

    name = os.path.relpath(out / "f5tts_minimal", data)
    if Path(os.path.realpath(os.path.join(data, f"{name}_pinyin"))) != prepared.resolve():
        raise SystemExit(f"{name!r} does not lead from {data} to {prepared}")
    (out / "f5tts_dataset_name").write_text(name + "\n", encoding="utf-8")
    print(f"wrote {prepared} ({len(rows)} rows, {seconds:.3f} s); datasets.name={name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
