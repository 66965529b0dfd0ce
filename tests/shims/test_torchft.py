"""torchft's shims (``repos/shims/test_meta_pytorch__torchft``): the budget sitecustomize
and the lighthouse helper.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.repomodules import SHIMLIB, write_tree
from support.repomodules import module as repo_module
from support.shims import BUDGET_VARS, SHIMS, fill, python

from pytest_reb.spec import Repo

TORCHFT = SHIMS / "test_meta_pytorch__torchft"


#: Stand-ins with the signatures train_ddp.py uses; torch.cuda counts the ids in
#: CUDA_VISIBLE_DEVICES below FAKE_GPUS, as the driver would.
STAND_INS = {
    "torch/__init__.py": """
        from . import cuda, nn
    """,
    "torch/cuda.py": """
        import os
        def device_count():
            present = int(os.environ.get("FAKE_GPUS", "0"))
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            ids = range(present) if visible is None else [
                int(i) for i in visible.split(",") if i.strip()]
            return len([i for i in ids if i < present])
        def is_available():
            return device_count() > 0
    """,
    "torch/nn/__init__.py": """
        class Embedding:
            def __init__(self, num_embeddings, embedding_dim, padding_idx=None, _weight=None):
                self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
    """,
    "torchft/__init__.py": """
        import torch
        from torchft.manager import Manager
    """,
    "torchft/manager.py": """
        class Manager:
            def __init__(self):
                self._step = 0
            def step(self):
                self._step += 1
            def current_step(self):
                return self._step
    """,
    "torchft/coordination.py": """
        import json, os
        class LighthouseServer:
            def __init__(self, bind, min_replicas, join_timeout_ms=None):
                self.args = {"bind": bind, "min_replicas": min_replicas,
                             "join_timeout_ms": join_timeout_ms}
                with open(os.environ["LIGHTHOUSE_LOG"], "a") as f:
                    f.write(json.dumps(self.args) + "\\n")
            def address(self):
                return "http://fakehost:29510"
            def shutdown(self):
                with open(os.environ["LIGHTHOUSE_LOG"], "a") as f:
                    f.write("shutdown\\n")
    """,
    "torchdata/__init__.py": "",
    "torchdata/stateful_dataloader/__init__.py": """
        from .stateful_dataloader import StatefulDataLoader
    """,
    "torchdata/stateful_dataloader/stateful_dataloader.py": """
        class StatefulDataLoader:
            def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None,
                         batch_sampler=None, num_workers=0, collate_fn=None):
                self.batch_size, self.num_workers = batch_size, num_workers
    """,
    "torchvision/__init__.py": """
        from . import datasets
    """,
    "torchvision/datasets/__init__.py": """
        from .cifar import CIFAR10, CIFAR100
    """,
    "torchvision/datasets/cifar.py": """
        class CIFAR10:
            base_folder = "cifar-10-batches-py"
            def __init__(self, root, train=True, transform=None, target_transform=None,
                         download=False):
                self.root, self.download = root, download
        class CIFAR100(CIFAR10):
            base_folder = "cifar-100-python"
    """,
}


#: What train_ddp.py does that the budget touches, reported as JSON.
TRAIN = """
import json, os, sys
heavy = sorted(m for m in sys.modules if m.split(".")[0] in
               ("torch", "torchft", "torchdata", "torchvision"))
os.environ["CUDA_VISIBLE_DEVICES"] = "3"
os.environ["XPU_VISIBLE_DEVICES"] = "3"
os.environ["NCCL_HOSTID"] = "0"
import torch, torchvision
from torch import nn
from torchdata.stateful_dataloader import StatefulDataLoader
from torchft import Manager
cifar = torchvision.datasets.CIFAR10(root="./cifar", train=True, download=True)
positional = torchvision.datasets.CIFAR10("./cifar", True, None, None, True)
other = torchvision.datasets.CIFAR100(root="./cifar", download=True)
loader = StatefulDataLoader([0] * 8, batch_size=64, num_workers=2)
loader_pos = StatefulDataLoader([0] * 8, 64, None, None, None, 2)
manager = Manager()
steps = []
while True:
    manager.step()
    steps.append(manager.current_step())
    if manager.current_step() >= 10000 or len(steps) > 50:
        break
print(json.dumps({
    "heavy_at_start": heavy,
    "cuda": os.environ["CUDA_VISIBLE_DEVICES"], "xpu": os.environ["XPU_VISIBLE_DEVICES"],
    "nccl": os.environ["NCCL_HOSTID"],
    "embedding": nn.Embedding(1_000_000_000 // 10 // 4, 10).num_embeddings,
    "embedding_kw": nn.Embedding(num_embeddings=5000, embedding_dim=3).num_embeddings,
    "embedding_small": nn.Embedding(7, 3).num_embeddings,
    "embedding_weight": nn.Embedding(5000, 3, _weight=object()).num_embeddings,
    "cifar": [cifar.root, cifar.download], "positional": [positional.root, positional.download],
    "cifar100": [other.root, other.download],
    "loader": [loader.batch_size, loader.num_workers],
    "loader_pos": [loader_pos.batch_size, loader_pos.num_workers],
    "steps": steps,
}))
"""


def torchft_env(stage: str, assets: Path) -> dict[str, str]:
    """The stage env of the module, placeholders filled, without PYTHONPATH."""
    run = getattr(repo_module("test_meta_pytorch__torchft").repo, stage)
    env = {k: fill(v, assets=str(assets), repo="/nonexistent") for k, v in run.env.items()}
    env.pop("PYTHONPATH")
    return env


@pytest.fixture
def stand_ins(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "site", STAND_INS)


def test_torchft_budget_cpu_stage(tmp_path: Path, stand_ins: Path) -> None:
    """The CPU stage's variables: one step, batch 1, 0 workers, prepared CIFAR-10 without
    download, embeddings capped, device variables kept empty; nothing imported at start."""
    (tmp_path / "train.py").write_text(TRAIN)
    env = torchft_env("cpu", tmp_path / "assets")
    out = python(["train.py"], [TORCHFT, stand_ins], tmp_path, **env)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    dataset = str(tmp_path / "assets" / "dataset" / "cifar10")
    assert seen == {
        "heavy_at_start": [],
        "cuda": "", "xpu": "", "nccl": "0",
        "embedding": 1000, "embedding_kw": 1000, "embedding_small": 7, "embedding_weight": 5000,
        "cifar": [dataset, False], "positional": [dataset, False],
        "cifar100": ["./cifar", True],
        "loader": [1, 0], "loader_pos": [1, 0],
        "steps": [10**9],
    }


def test_torchft_without_budget_variables_changes_nothing(tmp_path: Path,
                                                          stand_ins: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    out = python(["train.py"], [TORCHFT, stand_ins], tmp_path)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert (seen["cuda"], seen["embedding"], seen["cifar"], seen["loader"]) == (
        "3", 25_000_000, ["./cifar", True], [64, 2])
    assert seen["steps"][:3] == [1, 2, 3]


def test_torchft_gpu_stage_keeps_devices_and_checks_gpus(tmp_path: Path,
                                                         stand_ins: Path) -> None:
    """C3: the program may pick its GPU (here GPU 3 of 4); torch's import passes when the GPU
    it sees exists and fails when there is none."""
    (tmp_path / "train.py").write_text(TRAIN)
    env = torchft_env("single_gpu", tmp_path / "assets")
    out = python(["train.py"], [TORCHFT, stand_ins], tmp_path, **env, FAKE_GPUS="4")
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert (seen["cuda"], seen["steps"], seen["loader"]) == ("3", [10**9], [1, 0])
    failed = python(["train.py"], [TORCHFT, stand_ins], tmp_path, **env, FAKE_GPUS="0")
    assert failed.returncode != 0
    assert "this stage requires CUDA, but torch.cuda.is_available() is False" in failed.stderr


#: A torchrun launcher: imports torch, then starts a worker that narrows its devices to one
#: GPU before importing torch (as train_ddp.py does for its replica group).
LAUNCHER = """
import os, subprocess, sys
import torch
worker = "import os; os.environ['CUDA_VISIBLE_DEVICES'] = '1'; import torch; print('worker ok')"
env = dict(os.environ)
if len(sys.argv) > 1:
    env.pop(sys.argv[1])
sys.exit(subprocess.run([sys.executable, "-c", worker], env=env).returncode)
"""


def test_torchft_gpu_count_is_checked_once_per_process_tree(tmp_path: Path,
                                                            stand_ins: Path) -> None:
    """C4: the launcher, seeing GPUs 0,1, checks >= 2; its worker, narrowed to one GPU, inherits
    the verdict (without it, it would count one and fail)."""
    (tmp_path / "launch.py").write_text(LAUNCHER)
    env = torchft_env("multi_gpu", tmp_path / "assets")
    assert (env["CUDA_VISIBLE_DEVICES"], env["SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT"]) == ("0,1", "2")
    ok = python(["launch.py"], [TORCHFT, stand_ins], tmp_path, **env, FAKE_GPUS="2")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "worker ok"
    too_few = python(["launch.py"], [TORCHFT, stand_ins], tmp_path, **env, FAKE_GPUS="1")
    assert too_few.returncode != 0
    assert "requires >= 2 GPUs, but torch.cuda.device_count() == 1" in too_few.stderr
    rechecked = python(["launch.py", "_REB_TORCHFT_CUDA_CHECKED"], [TORCHFT, stand_ins],
                       tmp_path, **env, FAKE_GPUS="2")
    assert rechecked.returncode != 0
    assert "device_count() == 1" in rechecked.stderr


def test_torchft_requirement_waits_for_torch(tmp_path: Path, stand_ins: Path) -> None:
    """Nothing is checked in a process that never imports torch (lazy, unlike the official)."""
    env = torchft_env("multi_gpu", tmp_path / "assets")
    out = python(["-c", "import sys; print('torch' in sys.modules)"], [TORCHFT, stand_ins],
                 tmp_path, **env, FAKE_GPUS="0")
    assert (out.returncode, out.stdout.strip()) == (0, "False"), out.stderr


def test_torchft_runs_a_shadowed_sitecustomize(tmp_path: Path, stand_ins: Path) -> None:
    theirs = write_tree(tmp_path / "theirs", {
        "sitecustomize.py": "import os\nos.environ['THEIRS_RAN'] = '1'\n"})
    out = python(["-c", "import os; print(os.environ.get('THEIRS_RAN'))"],
                 [TORCHFT, stand_ins, theirs], tmp_path)
    assert out.stdout.strip() == "1", out.stderr


#: An environment's own sitecustomize with an import hook of the same kind (it asks every other
#: finder, ours included): the two must not ask each other forever, and each patches once.
OTHER_HOOK = """
import importlib.abc, sys
class Theirs(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torchdata.stateful_dataloader":
            return None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.THEIRS = getattr(module, "THEIRS", 0) + 1
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Theirs())
"""


def test_torchft_hook_beside_another_import_hook(tmp_path: Path, stand_ins: Path) -> None:
    theirs = write_tree(tmp_path / "theirs", {"sitecustomize.py": OTHER_HOOK})
    code = ("import torchdata.stateful_dataloader as m\n"
            "init = m.StatefulDataLoader.__init__\n"
            "print(m.StatefulDataLoader([0], batch_size=64).batch_size, m.THEIRS,\n"
            "      hasattr(init.__wrapped__, '__wrapped__'))")
    out = python(["-c", code], [TORCHFT, stand_ins, theirs], tmp_path,
                 SCIMLOPSBENCH_BATCH_SIZE="1")
    assert out.returncode == 0, out.stderr[-2000:]
    # theirs, unguarded, patches twice; ours wraps the loader once
    assert out.stdout.split() == ["1", "2", "False"]


def test_torchft_lighthouse_helper(tmp_path: Path, stand_ins: Path) -> None:
    """lighthouse.py starts the official server settings, prints a line the stages' Helper
    reads as TORCHFT_LIGHTHOUSE, and shuts the server down when terminated."""
    repo: Repo = repo_module("test_meta_pytorch__torchft").repo
    helpers = {stage: list(getattr(repo, stage).helpers) for stage in
               ("cpu", "single_gpu", "multi_gpu")}
    assert all(len(h) == 1 for h in helpers.values())
    helper = helpers["cpu"][0]
    assert helpers["single_gpu"][0] == helper == helpers["multi_gpu"][0]
    assert repo.multi_gpu is not None
    assert [list(r.helpers) for r in repo.multi_gpu.together] == [[]]  # one lighthouse for both
    assert helper.export == "TORCHFT_LIGHTHOUSE"
    argv = [fill(a, python=sys.executable, shims=str(TORCHFT)) for a in helper.argv]
    log = tmp_path / "lighthouse.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(BUDGET_VARS)}
    env.update(torchft_env("cpu", tmp_path / "assets"), LIGHTHOUSE_LOG=str(log),
               PYTHONPATH=f"{TORCHFT}:{SHIMLIB}:{stand_ins}")
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(helper.ready, line)
        assert match is not None, (line, proc.stderr.read() if proc.poll() is not None else "")
        assert match.group(1) == "http://fakehost:29510"
        assert proc.poll() is None, "the lighthouse must keep serving"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    assert code == 0
    lines = log.read_text().splitlines()
    assert json.loads(lines[0]) == {"bind": "[::]:0", "min_replicas": 1,
                                    "join_timeout_ms": 60000}
    assert lines[1:] == ["shutdown"]
