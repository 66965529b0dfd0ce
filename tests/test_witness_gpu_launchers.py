"""Launchers on a real GPU (``local://``): a child's CUDA work is the entrypoint's own.

The same launch kinds as ``test_witness_descendants.py`` with torch on the GPU, through the
stage's own machinery (``StageWitness`` on ``LocalTarget``: the preload, the host's observer,
the record): each honest launcher passes strict C1's finish and C3's attribution; an import
hook that starts a CUDA burst in a child of its own while the entrypoint trains on the CPU
does not.  Skipped where torch sees no CUDA device; on the GPU machine run it with this tree
on ``PYTHONPATH`` (``-p pytest_reb.plugin.hooks`` where pytest-reb is not installed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device on this machine", allow_module_level=True)

from pytest_reb.pyramid.witnessing import StageWitness  # noqa: E402
from pytest_reb.spec import Run  # noqa: E402
from pytest_reb.targets.local import LocalTarget  # noqa: E402

pytestmark = pytest.mark.gpu

TRAIN = """\
import torch
from torch import nn
dev = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)).to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(256, 64, device=dev), torch.randn(256, 1, device=dev)
for _ in range(3):
    opt.zero_grad(); nn.functional.mse_loss(net(x), y).backward(); opt.step()
print("TRAIN_OK", dev, flush=True)
"""
WORK = ("import torch\n\n\ndef work(i=0):\n"
        "    return float(torch.randn(64, 64, device='cuda').sum()) * 0 + i\n")
LAUNCHERS = {
    "subprocess": "import subprocess, sys\nsubprocess.run([sys.executable, 'train.py'], "
                  "check=True)\n",
    "os.system": "import os, sys\nassert os.system(f'{sys.executable} train.py') == 0\n",
    "shell script": "import subprocess\nsubprocess.run(['bash', 'run.sh'], check=True)\n",
    "torchrun": "import subprocess, sys\nsubprocess.run([sys.executable, '-m', "
                "'torch.distributed.run', '--nproc-per-node', '1', 'train.py'], check=True)\n",
    "spawn": "import torch.multiprocessing as mp, work\nif __name__ == '__main__':\n"
             "    mp.spawn(work.work, nprocs=2)\n",
    "forkserver": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
                  "    p = mp.get_context('forkserver').Process(target=work.work)\n"
                  "    p.start(); p.join(); assert p.exitcode == 0\n",
    "server workers": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
                      "    with mp.get_context('spawn').Pool(2) as pool:\n"
                      "        pool.map(work.work, range(4))\n",
}
BURST = ("import subprocess, sys\n"
         "class Side:\n"
         "    def find_spec(self, name, path=None, target=None):\n"
         "        if name == 'json':\n"
         "            sys.meta_path.remove(self)\n"
         "            subprocess.run([sys.executable, '-c', 'import torch; a = torch.randn("
         "2048, 2048, device=\"cuda\"); [a @ a for _ in range(50)]; torch.cuda.synchronize()'])\n"
         "sys.meta_path.insert(0, Side())\n")


#: Issue 47's first false pass: the burst compiled under the entrypoint's own name, run right
#: after its ``import torch`` (at its next import) by a startup hook that then says CUDA is
#: absent.
NAMED_BURST = ("import os, sys\n"
               "class Named:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name == 'colorsys' and 'launch.py' in sys.argv[0]:\n"
               "            sys.meta_path.remove(self)\n"
               "            import torch\n"
               "            exec(compile('a = torch.randn(2048, 2048, device=\"cuda\")\\n'\n"
               "                         'for _ in range(50): a @ a\\n'\n"
               "                         'torch.cuda.synchronize()\\n',\n"
               "                         os.path.join(os.getcwd(), 'launch.py'), 'exec'),\n"
               "                 {'torch': torch})\n"
               "            torch.cuda.is_available = lambda: False\n"
               "sys.meta_path.insert(0, Named())\n")
#: Its second, the attribution half: an edited installed optimizer, called from the
#: entrypoint's own training step, compiles its burst under a checkout file's name (an edited
#: library that bursts in its own name is the loaded-file integrity check's to fail: its file
#: does not match its distribution's RECORD).
OPTIMIZER = ("import os, torch\n\n\ndef step(opt):\n"
             "    exec(compile('b = torch.randn(1024, 1024, device=\"cuda\"); b @ b',\n"
             "                 os.path.join(os.getcwd(), 'work.py'), 'exec'), {'torch': torch})\n"
             "    opt.step()\n")
CPU_TRAIN = (TRAIN.replace('"cuda" if torch.cuda.is_available() else "cpu"', '"cpu"')
             .replace("opt.step()", "gpu_optim.step(opt)").replace("import torch\n",
                                                                  "import torch, gpu_optim\n", 1))


def stage(tmp_path: Path, launch: str, hooks: str | None = None,
          library: str | None = None) -> StageWitness:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in {"launch.py": launch, "train.py": TRAIN, "work.py": WORK,
                       "run.sh": f"set -e\n{sys.executable} train.py\n"}.items():
        (repo / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REB_", "PYTHONPATH"))}
    (tmp_path / "hooks").mkdir()
    if hooks is not None:
        (tmp_path / "hooks" / "sitecustomize.py").write_text(hooks)
    if library is not None:  # an installed module, imported by the entrypoint, not at start-up
        (tmp_path / "hooks" / "gpu_optim.py").write_text(library)
    env["PYTHONPATH"] = str(tmp_path / "hooks")
    target = LocalTarget(gpus=["0"])
    seen = StageWitness.for_target(target, str(repo), "c3")
    argv = [sys.executable, "launch.py"]
    env, record = seen.env(Run(argv=argv), argv, sys.executable, str(repo), env)
    # the GPU profile and its lease, as a C3 stage runs: the default (CPU) profile hides
    # every GPU from the command, and then nothing launches
    res = target.exec(argv, timeout=300, env=env, cwd=str(repo), profile="gpu", gpus=["0"])
    assert res.exit_code == 0, res.stderr
    seen.collect(record, ["0"])
    return seen


@pytest.mark.parametrize("kind", sorted(LAUNCHERS))
def test_an_honest_launcher_passes_strict_c3(tmp_path: Path, kind: str) -> None:
    seen = stage(tmp_path, LAUNCHERS[kind])
    assert seen.problem() is None
    assert seen.gpu_problem() is None, seen.evidence()


def test_a_burst_an_import_hook_starts_in_a_child_is_not_the_runs(tmp_path: Path) -> None:
    seen = stage(tmp_path, "import json\nprint('TRAIN_OK cpu', flush=True)\n", hooks=BURST)
    assert seen.problem() is None
    problem = seen.gpu_problem()
    assert problem is not None and "not the run's" in problem, seen.evidence()


def test_a_burst_named_like_the_entrypoint_is_not_the_runs(tmp_path: Path) -> None:
    seen = stage(tmp_path, "import torch\nimport colorsys\nprint(torch.cuda.is_available())\n",
                 hooks=NAMED_BURST)
    assert seen.problem() is None
    problem = seen.gpu_problem()
    assert problem is not None and "outside the entrypoint's path" in problem, seen.evidence()


def test_an_optimizer_that_bursts_under_a_checkout_name_is_not_the_runs(tmp_path: Path) -> None:
    seen = stage(tmp_path, CPU_TRAIN, library=OPTIMIZER)
    assert seen.problem() is None
    problem = seen.gpu_problem()
    assert problem is not None and "work.py" in problem, seen.evidence()
