"""finetrainers' dataset (``repos/test_huggingface__finetrainers.py``): the setup writes the
dataset config naming the prepared snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import assert_real
from support.repomodules import Stage, module, stages


def test_finetrainers_dataset_config_written_by_setup(tmp_path: Path) -> None:
    mod = module("test_huggingface__finetrainers")
    repo = mod.repo
    assert_real(repo, "crush-smol", ["single_gpu", "multi_gpu"])
    assert_real(repo, "Wan2.1-T2V-1.3B", ["single_gpu", "multi_gpu"])
    wan = next(a for a in repo.assets if a.name == "Wan2.1-T2V-1.3B")
    assert wan.dest == "model/current"  # the pretrained model path
    for name, run in stages(repo):
        assert "{assets}/model/current" in run.argv
        stage = Stage(run, tmp_path / name, name, repo)
        snapshot = stage.raw("crush-smol")
        assert snapshot == stage.assets / "dataset"
        (snapshot / "videos").mkdir(parents=True)
        (snapshot / "videos" / "1.mp4").write_bytes(b"mp4")
        (snapshot / "metadata.csv").write_text("file_name,caption\nvideos/1.mp4,crush\n")
        stage.setup()
        path = Path(stage.arg("--dataset_config"))
        assert path == stage.out / "dataset_config.json"
        assert json.loads(path.read_text()) == {"datasets": [{
            "data_root": str(snapshot), "dataset_type": "video", "id_token": "PIKA_CRUSH",
            "video_resolution_buckets": [[49, 480, 832]], "reshape_mode": "bicubic",
            "remove_common_llm_caption_prefixes": True}]}


def test_finetrainers_setup_refuses_an_empty_snapshot(tmp_path: Path) -> None:
    repo = module("test_huggingface__finetrainers").repo
    stage = Stage(repo.single_gpu, tmp_path, "single_gpu", repo)
    (stage.raw("crush-smol") / "videos").mkdir(parents=True)
    done = stage.setup(check=False)
    assert done.returncode != 0 and "missing or empty" in done.stderr
    assert not (stage.out / "dataset_config.json").exists()
