"""InternEvo's Alpaca sample (``repos/test_InternLM__InternEvo.py``): the setup tokenises
64 examples with the repository's tools/alpaca_tokenizer.py (a stdlib stand-in that records
how it was called) and the generated config trains on them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.assets import Target, on_server, write
from support.repomodules import module

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
