"""yomitoku's models (``repos/test_kotaro_kinoshita__yomitoku.py``): the hub ids its pinned
configs name, each fetched into the one HF cache (a stand-in hub client).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.assets import asset
from support.repomodules import module
from support.repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed


def test_yomitoku_models_are_the_hub_ids_of_its_configs(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The asset's id is a pattern; prepare fetches the four repositories the pinned configs
    name, each into the one HF cache (a stand-in hub client records what was asked)."""
    import types

    repo = module("test_kotaro_kinoshita__yomitoku").repo
    models = asset(repo, "yomitoku_models")
    assert "*" in str(models.id) and len(models.hub_ids) == 4
    asked: list[str] = []

    def snapshot_download(*, repo_id: str, cache_dir: str, **_: object) -> None:
        asked.append(repo_id)
        folder = Path(cache_dir) / f"models--{repo_id.replace('/', '--')}"
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_text(repo_id)

    monkeypatch.setitem(sys.modules, "huggingface_hub",
                        types.SimpleNamespace(snapshot_download=snapshot_download))
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[models])
    assert done.status == "ready", done.detail
    assert asked == list(models.hub_ids)
    hub = cache.view(repo) / "cache" / "huggingface" / "hub"
    assert len(list(hub.glob("models--KotaroKinoshita--yomitoku-*/model.safetensors"))) == 4
    for run in stages(repo):
        assert "yomitoku_models" in [a.name for a in needed(repo, run)]
