"""F5-TTS's inference stages find the vocos vocoder where they look for it: the HF cache.

``infer_cli`` loads the vocoder by hub id (``load_vocoder`` with ``is_local``
false: ``hf_hub_download("charactr/vocos-mel-24khz", ...)``), and C1 and C3 run
with ``HF_HUB_OFFLINE=1`` and ``HF_HUB_CACHE={assets}/cache/huggingface/hub``.
The official prepare downloaded into that cache and copied the files to
``{assets}/model/vocos-mel-24khz`` besides, and its note names the copy, where
the module declares the asset (``test_layouts_agree_with_the_reference_notes``).
With the copy alone an honest environment with the real vocoder failed both
stages on the offline hub lookup; their setup step now lays the cache entry out
from the copy.  Without that step the first test fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repomodules import Stage, module

from pytest_reb.assets.view import needed

REPO = module("test_SWivid__F5_TTS").repo
VOCOS = next(a for a in REPO.assets if a.name == "vocos-mel-24khz")
HUB_DIR = "models--charactr--vocos-mel-24khz"


def offline_hub_file(hub: Path, repo_id: str, filename: str) -> Path:
    """Where an offline ``hf_hub_download(repo_id, filename)`` finds the file in ``hub``: the
    revision ``refs/main`` names, then that snapshot's file (huggingface_hub's cache layout)."""
    entry = hub / ("models--" + repo_id.replace("/", "--"))
    revision = (entry / "refs" / "main").read_text().strip()
    found = entry / "snapshots" / revision / filename
    assert found.is_file(), found
    return found


@pytest.mark.parametrize("stage", ["cpu", "single_gpu"])
def test_the_stage_finds_the_prepared_vocoder_by_hub_id(stage: str, tmp_path: Path) -> None:
    run = getattr(REPO, stage)
    assert run.env["HF_HUB_OFFLINE"] == "1"
    assert VOCOS in needed(REPO, run)
    st = Stage(run, tmp_path, stage, REPO)
    copy = st.raw("vocos-mel-24khz")
    copy.mkdir(parents=True)
    for name in VOCOS.files:
        (copy / name).write_text(f"real {name}")
    st.setup()
    hub = Path(st.fill(run.env["HF_HUB_CACHE"]))
    for name in VOCOS.files:
        assert offline_hub_file(hub, "charactr/vocos-mel-24khz", name).read_text() == (
            f"real {name}")
    assert (hub / HUB_DIR).is_dir()


def test_the_asset_stays_at_the_copy_the_reference_note_names() -> None:
    assert VOCOS.dest == "model/vocos-mel-24khz"
    assert not VOCOS.hf_cache


def test_a_missing_copy_fails_the_setup_step_by_name(tmp_path: Path) -> None:
    st = Stage(REPO.cpu, tmp_path, "cpu", REPO)
    done = st.setup(check=False)
    assert done.returncode != 0
    assert "lacks config.yaml, pytorch_model.bin" in done.stderr
