"""FunMusic's generated-config shim (``repos/shims/test_FunAudioLLM__FunMusic``): the
benchmark YAML and the one-row data list its stages read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repomodules import REPOS, Stage, module

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
