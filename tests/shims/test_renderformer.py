"""RenderFormer's shims (``repos/shims/test_microsoft__renderformer``): the per-rank
render.
"""

from __future__ import annotations

import sys
from pathlib import Path

from support.repomodules import module
from support.shims import Tree, report, run

RF = "test_microsoft__renderformer"


#: A stand-in of infer.py: reports its argv and the two variables the rank script sets.
STANDIN_INFER = """\
import json, os, sys
print("REPORT " + json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(),
      "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"), "attn": os.environ.get("ATTN_IMPL")}))
"""


def test_renderformer_rank_picks_device_and_scene(tmp_path: Path) -> None:
    """The module's C4 argv after 'torchrun --standalone --nproc_per_node=2', per LOCAL_RANK:
    device LOCAL_RANK of the visible list, cbox on rank 0, shader-ball on rank 1, the official
    infer.py flags, {out}/output_rank<N> made."""
    tree = Tree(tmp_path, RF)
    (tree["repo"] / "infer.py").write_text(STANDIN_INFER)
    stage = module(RF).repo.multi_gpu
    argv = tree.argv(stage.argv)
    assert argv[:3] == ["torchrun", "--standalone", "--nproc_per_node=2"]
    assets, out = tree["assets"], tree["out"]
    scenes = {0: f"{out}/cbox/cbox.h5",  # converted there by the stage's setup
              1: f"{out}/shader-ball/shader-ball.h5"}
    for rank, gpu in ((0, "4"), (1, "6")):
        got = report(run([sys.executable, *argv[3:]], tree["repo"], LOCAL_RANK=str(rank),
                         CUDA_VISIBLE_DEVICES="4,6", ATTN_IMPL="flash"))
        assert got["gpu"] == gpu and got["attn"] == "sdpa"
        assert got["cwd"] == str(tree["repo"])
        flags = got["argv"]
        pairs = dict(zip(flags[::2], flags[1::2], strict=True))
        assert pairs == {"--model_id": f"{assets}/model/renderformer-v1-base",
                         "--precision": "fp16", "--resolution": "64",
                         "--h5_file": scenes[rank], "--output_dir": f"{out}/output_rank{rank}"}
        assert (out / f"output_rank{rank}").is_dir()


def test_renderformer_rank_without_a_device_fails(tmp_path: Path) -> None:
    tree = Tree(tmp_path, RF)
    (tree["repo"] / "infer.py").write_text(STANDIN_INFER)
    argv = tree.argv(module(RF).repo.multi_gpu.argv)
    res = run([sys.executable, *argv[3:]], tree["repo"], LOCAL_RANK="1", CUDA_VISIBLE_DEVICES="0")
    assert res.returncode == 1
    assert "rank 1 has no GPU mapping for VISIBLE=0" in res.stderr
    assert "REPORT" not in res.stdout
