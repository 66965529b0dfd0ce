"""Which stages need each asset we made real: exactly the stages that read it.

One table per batch of repositories whose prepare post-processing became setup steps; the
setup itself is tested in each repository's own file here.
"""

from __future__ import annotations

import pytest
from support.repomodules import module
from support.repomodules import runs as stages

from pytest_reb.assets.view import needed

#: Our assets, by repository module, and the stages that read each.
OURS = {
    "test_InternLM__InternEvo": {"alpaca_sample": ["single_gpu", "multi_gpu"]},
    "test_OpenBMB__VoxCPM": {"example_wav": ["single_gpu"]},
    "test_emidan19__deep_tempest": {"examples_pairs": ["cpu", "single_gpu", "multi_gpu"],
                                    "drunet_pretrained": ["cpu", "single_gpu", "multi_gpu"]},
    "test_FunAudioLLM__FunMusic": {"inspiremusic_samples": ["single_gpu", "multi_gpu"],
                                   "benchmark_config": ["single_gpu", "multi_gpu"]},
    "test_modelscope__ClearerVoice_Studio": {"input_wav": ["cpu", "single_gpu", "multi_gpu"]},
    "test_microsoft__renderformer": {"example_scenes": ["cpu", "single_gpu", "multi_gpu"]},
}


@pytest.mark.parametrize("stem", sorted(OURS))
def test_assets_are_real_and_read_by_their_stages(stem: str) -> None:
    repo = module(stem).repo
    for asset in repo.assets:
        if asset.name not in OURS[stem]:
            continue
        for stage in ("cpu", "single_gpu", "multi_gpu"):
            run = getattr(repo, stage)
            if run is None:
                continue
            read = asset.name in [a.name for a in needed(repo, run)]
            assert read == (stage in OURS[stem][asset.name]), (asset.name, stage)


MADE_REAL = [
    ("test_yuanze_lin__Olympus", "olympus_min"),
    ("test_thu_pacman__chitu", "tinyshakespeare_sharegpt"),
    ("test_sgl_project__SpecForge", "sharegpt_train"),
]


@pytest.mark.parametrize(("stem", "name"), MADE_REAL)
def test_layout_is_real_and_every_stage_needs_it(stem: str, name: str) -> None:
    repo = module(stem).repo
    for run in stages(repo):
        assert name in [a.name for a in needed(repo, run)]
        assert run.setup and run.shim_dir
