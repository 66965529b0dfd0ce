"""Olympus' minimal training set (``repos/test_yuanze_lin__Olympus.py``): the raw file lands
where the setup reads it, and the setup keeps the first example.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import view_path
from support.repomodules import Stage, module
from support.repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache


def test_olympus_minimal_train(tmp_path: Path) -> None:
    """First example, image dropped, two turns kept; only the first element is parsed."""
    mod = module("test_yuanze_lin__Olympus")
    first = {"id": "a", "image": "coco/1.jpg", "conversations": [
        {"from": "human", "value": "<image>\nWhat is shown? ünïcode"},
        {"from": "gpt", "value": "A cat."}, {"from": "human", "value": "More?"}]}
    second = {"id": "b", "conversations": []}
    for run in stages(mod.repo):
        places = Stage(run, tmp_path / run.argv[-1])
        raw = view_path(mod.repo, "olympus_min", places, "Olympus.json")
        raw.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps([first, second], indent=2)
        raw.write_text(text[:text.index('"b"') + 5])  # a cut-off tail is never read
        places.setup()
        data_path = Path(places.arg("--data_path"))
        assert data_path.parent == places.out
        written = json.loads(data_path.read_text(encoding="utf-8"))
        assert written == [{"id": "a", "conversations": first["conversations"][:2]}]
        assert "ünïcode" in data_path.read_text(encoding="utf-8")  # ensure_ascii=False


def test_olympus_raw_file_lands_where_the_setup_reads_it(tmp_path: Path) -> None:
    mod = module("test_yuanze_lin__Olympus")
    src = tmp_path / "Olympus.json"
    src.write_text("[]")
    cache = AssetCache(tmp_path / "cache")
    cache.ingest(mod.repo, "olympus_min", src, origin="stand-in")
    run = mod.repo.cpu
    step = run.setup[0]
    rel = step[2].removeprefix("{assets}/")
    assert (cache.view(mod.repo) / rel).is_file()
