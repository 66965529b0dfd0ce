"""VisionMamba's drivers (``repos/shims/test_kyegomez__VisionMamba``), run for real against
a stand-in checkout: the patched constructor, the CPU and CUDA example drivers and the
multi-GPU launcher with its worker.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.repomodules import write_tree as write
from support.shims import FAKE_TORCH, SHIMS
from support.shims import run_python as run

VIM = SHIMS / "test_kyegomez__VisionMamba"


@pytest.fixture
def vim(tmp_path: Path) -> tuple[Path, Path]:
    """A stand-in VisionMamba checkout (pinned constructor signature, debug print, Vim forwarding
    unknown keywords to the block) and its libraries."""
    repo = write(tmp_path / "repo", {
        "vision_mamba/__init__.py": "from vision_mamba.model import Vim\n",
        "vision_mamba/model.py": """
            from einops import rearrange

            class VisionEncoderMambaBlock:
                def __init__(self, dim, dt_rank, dim_inner, d_state):
                    self.dim = dim
                    self.softplus = lambda v: ("softplus", v)

                def process_direction(self, x, conv1d, ssm):
                    x = rearrange(x, "b s d -> b d s")
                    x = self.softplus(conv1d(x))
                    print(f"Conv1d: {x}")
                    x = rearrange(x, "b d s -> b s d")
                    x = ssm(x)
                    return x

                def forward(self, x):
                    return self.process_direction(x, lambda v: ("conv", v), lambda v: ("ssm", v))

            class Vim:
                def __init__(self, dim, dt_rank=32, dim_inner=None, d_state=None, depth=12,
                             *args, **kwargs):
                    self.layers = [VisionEncoderMambaBlock(dim=dim, dt_rank=dt_rank,
                                                           dim_inner=dim_inner, d_state=d_state,
                                                           *args, **kwargs)
                                   for _ in range(depth)]

                def __call__(self, x):
                    for layer in self.layers:
                        x = layer.forward(x)
                    return x
        """,
        "example.py": """
            import torch
            from vision_mamba.model import Vim

            model = Vim(dim=256, heads=8, dt_rank=32, dim_inner=256, d_state=256, depth=1)
            print("out", model("x"))
            print("device", torch.DEFAULT_DEVICE, torch.cuda.CURRENT, __name__)
        """,
    })
    libs = write(tmp_path / "libs", {
        **FAKE_TORCH,
        "einops/__init__.py": "def rearrange(x, pattern):\n    return (pattern, x)\n"})
    return repo, libs


VIM_OUT = "out ('ssm', ('b d s -> b s d', ('softplus', ('conv', ('b s d -> b d s', 'x')))))"


def test_vim_stand_in_needs_the_patch(vim: tuple[Path, Path]) -> None:
    """Unpatched, the example fails the way the pinned repository does."""
    repo, libs = vim
    res = run(["example.py"], repo, [repo, libs])
    assert res.returncode != 0
    assert "unexpected keyword argument 'heads'" in res.stderr


def test_vim_cpu_driver(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    res = run([str(VIM / "run_example.py"), "--device", "cpu"], repo, [VIM, libs])
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [VIM_OUT, "device cpu None __main__"]


def test_vim_cuda_driver(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    argv = [str(VIM / "run_example.py"), "--device", "cuda"]
    res = run(argv, repo, [VIM, libs], FAKE_GPUS="0")
    assert res.returncode == 1
    assert "out" not in res.stdout and "no CUDA" in res.stderr
    res = run(argv, repo, [VIM, libs], FAKE_GPUS="1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["set_device 0", VIM_OUT, "device cuda 0 __main__"]


def test_vim_multi_gpu_launcher_and_worker(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    env = {"NPROC": "2", "WORKER": str(VIM / "torchrun_worker.py")}
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="1", **env)
    assert res.returncode == 1
    assert res.stdout.splitlines() == ["[multi_gpu] visible_gpu_count=1",
                                       "[multi_gpu] need >= 2 GPUs for this stage"]
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="2", **env)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    worker = str(VIM / "torchrun_worker.py")
    assert lines[:3] == [
        "[multi_gpu] visible_gpu_count=2",
        f"[multi_gpu] launch: {sys.executable} -m torch.distributed.run --standalone "
        f"--nproc_per_node 2 {worker}",
        f"torchrun ['--standalone', '--nproc_per_node', '2', '{worker}']"]
    assert lines[3:] == ["set_device 0", VIM_OUT, "device cuda 0 __main__",
                         "set_device 1", VIM_OUT, "device cuda 1 __main__"]


def test_vim_launcher_passes_a_failing_rank_on(vim: tuple[Path, Path]) -> None:
    repo, libs = vim
    (repo / "example.py").write_text("raise SystemExit(3)\n")
    res = run([str(VIM / "multi_gpu_impl.py")], repo, [VIM, libs], FAKE_GPUS="2", NPROC="2",
              WORKER=str(VIM / "torchrun_worker.py"))
    assert res.returncode == 3
