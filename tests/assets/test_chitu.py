"""chitu's TinyShakespeare ShareGPT set (``repos/test_thu_pacman__chitu.py``): the raw
download is renamed to the official raw name and chunked into prompts by the setup.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.assets import with_url
from support.repomodules import Stage, module
from support.repomodules import runs as stages

from pytest_reb.assets.cache import AssetCache

LINES = [f"Line number {i} of the play, spoken with feeling." for i in range(1000)]


def test_chitu_sharegpt_json(tmp_path: Path) -> None:
    mod = module("test_thu_pacman__chitu")
    text = "\n\n".join(["First Citizen:", *LINES])  # blank lines are skipped
    for run in stages(mod.repo):
        places = Stage(run, tmp_path / str(run.nproc))
        raw = places.assets / run.setup[0][2].removeprefix("{assets}/")
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(text)
        places.setup()
        path = next(places.fill(a).split("=", 1)[1] for a in run.argv
                    if a.startswith("benchmark.dataset_path="))
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        assert len(data) == 64
        prompts = [d["conversations"][0]["value"] for d in data]
        assert all(d["conversations"] == [{"from": "human", "value": p},
                                          {"from": "gpt", "value": ""}]
                   for d, p in zip(data, prompts, strict=True))
        assert prompts[0].startswith("First Citizen: Line number 0 of")
        # whole lines, in order, none lost; each chunk just reaches 400 counted characters
        assert " ".join(["First Citizen:", *LINES]).startswith(" ".join(prompts))
        assert all(p.endswith("with feeling.") and 399 <= len(p) < 399 + 50 for p in prompts)


def test_chitu_sample_count_and_empty_text(tmp_path: Path) -> None:
    run = module("test_thu_pacman__chitu").repo.single_gpu
    places = Stage(run, tmp_path)
    raw = places.assets / run.setup[0][2].removeprefix("{assets}/")
    raw.parent.mkdir(parents=True)
    raw.write_text("\n".join(LINES))
    places.setup(SCIMLOPSBENCH_DATASET_NUM_SAMPLES="3")
    assert len(json.loads((places.out / "tinyshakespeare_sharegpt.json").read_text())) == 3
    raw.write_text("\n  \n")
    res = places.setup(check=False)
    assert res.returncode != 0 and "no samples" in res.stderr


def test_chitu_download_lands_where_the_setup_reads_it(tmp_path: Path,
                                                       served: tuple[str, Path]) -> None:
    """The url asset's input.txt is renamed to the official raw name in the view."""
    base, www = served
    (www / "input.txt").write_text("\n".join(LINES))
    repo = module("test_thu_pacman__chitu").repo
    repo, local = with_url(repo, "tinyshakespeare_sharegpt", f"{base}/input.txt")
    cache = AssetCache(tmp_path / "cache")
    [done] = cache.prepare(repo, network=True, only=[local])
    assert done.status == "ready", done.detail
    rel = repo.single_gpu.setup[0][2].removeprefix("{assets}/")
    assert (cache.view(repo) / rel).read_text() == "\n".join(LINES)
