"""FunMusic's config and sample (``repos/test_FunAudioLLM__FunMusic.py``): the setup rewrites
the raw YAML copy and slices one row out of the raw parquet.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.assets import Target, write
from support.repomodules import module

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
