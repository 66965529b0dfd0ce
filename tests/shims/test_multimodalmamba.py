"""MultiModalMamba's entrypoint wrapper (``repos/shims/test_kyegomez__MultiModalMamba``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.repomodules import module as repo_module
from support.repomodules import write_tree
from support.shims import SHIMS, fill, python

#: torch as the wrapper uses it; the calls are recorded for the example to print.
FAKE_TORCH = """
import os
CALLS = []
class cuda:
    @staticmethod
    def is_available():
        return os.environ.get("FAKE_GPUS", "0") != "0"
    @staticmethod
    def set_device(rank):
        CALLS.append(["set_device", rank])
def set_default_device(device):
    CALLS.append(["set_default_device", device])
"""


EXAMPLE = """
import json, sys
import torch
print(json.dumps({"name": __name__, "argv": sys.argv, "calls": torch.CALLS}))
"""


@pytest.mark.parametrize(("stage", "local_rank", "rank"),
                         [("single_gpu", None, 0), ("multi_gpu", "1", 1)])
def test_multimodalmamba_wrapper(tmp_path: Path, stage: str, local_rank: str | None,
                                 rank: int) -> None:
    """The wrapper the stages name through {shims}: cuda:<rank> becomes torch's default device
    (from --local-rank in C3, LOCAL_RANK under torchrun in C4), then example.py runs as
    __main__."""
    mmm = repo_module("test_kyegomez__MultiModalMamba")
    run = getattr(mmm.repo, stage)
    site = write_tree(tmp_path / "site", {"torch/__init__.py": FAKE_TORCH})
    checkout = write_tree(tmp_path / "repo", {"example.py": EXAMPLE})
    at = list(run.argv).index("{shims}/entrypoint_wrapper.py")
    shims = SHIMS / "test_kyegomez__MultiModalMamba"
    argv = [fill(a, shims=str(shims)) for a in run.argv[at:]]
    env = {"FAKE_GPUS": "2", **({"LOCAL_RANK": local_rank} if local_rank else {})}
    out = python(argv, [site], checkout, **env)
    assert out.returncode == 0, out.stderr
    last = json.loads(out.stdout.splitlines()[-1])
    assert last == {"name": "__main__", "argv": [str(checkout / "example.py")],
                    "calls": [["set_device", rank], ["set_default_device", f"cuda:{rank}"]]}
    no_gpu = python(argv, [site], checkout, FAKE_GPUS="0")
    assert no_gpu.returncode == 1
    assert "torch reports no CUDA device" in no_gpu.stderr
