"""InternEvo's generated-config shim (``repos/shims/test_InternLM__InternEvo``): the
tokenised Alpaca data and the minimal config its stages train with.
"""

from __future__ import annotations

import json
import runpy
import subprocess
from pathlib import Path

import pytest
from support.repomodules import Stage, module

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
