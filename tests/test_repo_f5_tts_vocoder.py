"""F5-TTS's inference stages find the vocos vocoder where they look for it: the HF cache.

``infer_cli`` loads the vocoder by hub id (``load_vocoder`` with ``is_local``
false: ``hf_hub_download("charactr/vocos-mel-24khz", ...)``), and C1 and C3 run
with ``HF_HUB_OFFLINE=1`` and ``HF_HUB_CACHE={assets}/cache/huggingface/hub``, as
the official prepare left it (it downloaded into that cache and copied the files
to ``model/vocos-mel-24khz`` besides).  The module once placed the asset at the
copy only, so an honest environment with the real vocoder would have failed both
stages on the offline hub lookup.  These tests hold the asset to the cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repomodules import module

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import needed

REPO = module("test_SWivid__F5_TTS").repo
VOCOS = next(a for a in REPO.assets if a.name == "vocos-mel-24khz")
HUB_DIR = "models--charactr--vocos-mel-24khz"


@pytest.mark.parametrize("stage", ["cpu", "single_gpu"])
def test_vocoder_is_in_the_hub_cache_the_stage_reads(stage: str) -> None:
    run = getattr(REPO, stage)
    assert run.env["HF_HUB_OFFLINE"] == "1"
    assert VOCOS.hf_cache
    assert "{assets}/" + VOCOS.dest == run.env["HF_HUB_CACHE"]
    assert VOCOS in needed(REPO, run)


def test_a_cache_layout_lands_where_the_hub_client_looks(tmp_path: Path) -> None:
    """A hub-cache download of the vocoder, ingested, appears under the stage's HF_HUB_CACHE
    as ``models--org--name/{refs/main, snapshots/<rev>/...}`` (what hf_hub_download reads
    offline)."""
    rev = "0" * 40
    hub = tmp_path / "hub"
    snapshot = hub / HUB_DIR / "snapshots" / rev
    snapshot.mkdir(parents=True)
    for name in VOCOS.files:
        (snapshot / name).write_text(name)
    (hub / HUB_DIR / "refs").mkdir()
    (hub / HUB_DIR / "refs" / "main").write_text(rev)
    cache = AssetCache(tmp_path / "cache")
    cache.ingest(REPO, VOCOS.name, hub, origin="test")
    seen = cache.view(REPO) / REPO.cpu.env["HF_HUB_CACHE"].removeprefix("{assets}/") / HUB_DIR
    assert (seen / "refs" / "main").read_text() == rev
    assert {p.name for p in (seen / "snapshots" / rev).iterdir()} == set(VOCOS.files)
