"""FlagGems' prompts (``repos/test_flagos_ai__FlagGems.py``): generated at prepare, read by
the stage through its env.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import names
from support.repomodules import module

from pytest_reb.assets.cache import AssetCache


def test_flaggems_prompts_are_generated_at_prepare(tmp_path: Path) -> None:
    mod = module("test_flagos_ai__FlagGems")
    cache = AssetCache(tmp_path / "cache")
    run = mod.repo.single_gpu
    assert "prompts" in names(mod.repo, run)
    prompts = next(a for a in mod.repo.assets if a.name == "prompts")
    [res] = cache.prepare(mod.repo, network=False, only=[prompts])
    assert res.status == "ready", res.detail
    text = (cache.view(mod.repo) / "dataset" / "prompts.jsonl").read_text()
    assert text == '{"text": "How are you today?"}\n'
    assert [json.loads(line) for line in text.splitlines()] == [{"text": "How are you today?"}]
    assert run.env["SCIMLOPSBENCH_DATASET_PATH"] == "{assets}/dataset/prompts.jsonl"
