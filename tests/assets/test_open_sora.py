"""Open-Sora's prompts (``repos/test_hpcaitech__Open_Sora.py``): the setup writes the first
prompt of the repository's example CSV, or a fallback.
"""

from __future__ import annotations

import csv
from pathlib import Path

from support.assets import assert_real
from support.repomodules import Stage, module, stages


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
