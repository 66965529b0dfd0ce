"""Texo's stages (``repos/shims/test_alephpi__Texo``): the run-time ``{glob:..}`` that names
the pretrained checkpoint.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

from support.repomodules import module as repo_module
from support.repomodules import write_tree
from support.shims import fill


def test_texo_pretrained_pattern_finds_the_default_checkpoint(tmp_path: Path) -> None:
    """The glob picks checkpoints/formulanet.pt (what config/model/formulanet-S.yaml loads) from
    a FormulaNet snapshot laid out like the hub's, whether ** is read recursively or not."""
    texo = repo_module("test_alephpi__Texo")
    (spelled,) = texo.TOKENS[texo.PRETRAINED]
    match = re.fullmatch(r"model\.pretrained=\{glob:(.+)\}", spelled)
    assert match is not None
    assets = tmp_path / "assets"
    snapshot = write_tree(assets / "model" / "FormulaNet", {
        "config.json": "{}", "model.safetensors": "", "tokenizer.json": "{}",
        "checkpoints/formulanet_encoder.pt": "", "checkpoints/formulanet_distill.pt": "",
        "checkpoints/formulanet.pt": "", "checkpoints/formulanet_distill_best.pt": ""})
    pattern = fill(match.group(1), assets=str(assets))
    for recursive in (True, False):
        found = sorted(glob.glob(pattern, recursive=recursive))
        assert found[0] == str(snapshot / "checkpoints" / "formulanet.pt")
    for run in (texo.repo.cpu, texo.repo.single_gpu, texo.repo.multi_gpu):
        assert list(run.argv)[-1] == spelled
