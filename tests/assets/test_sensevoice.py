"""SenseVoice's ModelScope model (``repos/test_FunAudioLLM__SenseVoice.py``): the
``modelscope`` fetcher (a stand-in ``modelscope`` module) lays the model out as
ModelScope's cache under the stages' HOME.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.assets import asset, standin
from support.repomodules import module, write_tree

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.fetchers import AssetError, fetch
from pytest_reb.assets.view import needed
from pytest_reb.pyramid.entrypoint import Places

SENSEVOICE = "test_FunAudioLLM__SenseVoice"


def modelscope_standin(monkeypatch: pytest.MonkeyPatch, download) -> None:
    standin(monkeypatch, "modelscope")
    standin(monkeypatch, "modelscope.hub")
    standin(monkeypatch, "modelscope.hub.snapshot_download", snapshot_download=download)


def test_sensevoice_model_lands_in_modelscopes_cache_under_the_stages_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sense = module(SENSEVOICE).repo
    model = asset(sense, "SenseVoiceSmall")
    calls = []

    def snapshot_download(model_id, local_dir=None, **kw):
        calls.append((model_id, kw))
        write_tree(Path(local_dir), {"configuration.json": "{}", "model.pt": "weights",
                                "config.yaml": "model: SenseVoiceSmall", ".msc": "index",
                                "._____temp/partial": "half"})
        return local_dir

    modelscope_standin(monkeypatch, snapshot_download)
    cache = AssetCache(tmp_path / "cache")
    (done,) = cache.prepare(sense, network=True, only=[model])
    assert done.status == "ready", done.detail
    assert calls == [("iic/SenseVoiceSmall", {})]
    assert cache.manifest(sense)["assets"]["SenseVoiceSmall"]["origin"] == (
        "modelscope iic/SenseVoiceSmall")
    view = cache.view(sense)
    for run in (sense.cpu, sense.single_gpu, sense.multi_gpu):
        assert run is not None and model in needed(sense, run)
        home = Places(sys.executable, "/r", str(view), "/o").fill(run.env["HOME"])
        # where ModelScope looks for iic/SenseVoiceSmall when MODELSCOPE_CACHE is unset
        assert "MODELSCOPE_CACHE" not in run.env
        folder = Path(home, ".cache", "modelscope", "hub", "models", "iic", "SenseVoiceSmall")
        assert sorted(p.name for p in folder.iterdir()) == [
            ".msc", "config.yaml", "configuration.json", "model.pt"]
        assert (folder / "model.pt").read_text() == "weights"


def test_modelscope_fetch_needs_the_client_and_says_why_it_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sense = module(SENSEVOICE).repo
    model = asset(sense, "SenseVoiceSmall")
    monkeypatch.setitem(sys.modules, "modelscope", None)  # not installed on this host
    with pytest.raises(AssetError, match=r"needs modelscope on this machine"):
        fetch(model, tmp_path, network=True)

    def offline(model_id, **kw):
        raise OSError("name resolution failed")

    modelscope_standin(monkeypatch, offline)
    with pytest.raises(AssetError, match=r"modelscope download of iic/SenseVoiceSmall failed: "
                                         r"OSError: name resolution failed"):
        fetch(model, tmp_path, network=True)
    with pytest.raises(AssetError, match=r"needs the network"):
        fetch(model, tmp_path, network=False)
