"""The entrypoint's descendants are its own (strict C1's finish, C3/C4's launches).

Research repositories start their real work in other processes: a launcher script that runs
``train.py`` in a child interpreter (``subprocess``, ``os.system``, a shell script), a ``-m``
launcher like torchrun, ``multiprocessing`` with each start method, a server's pool of
workers.  The host reads every process of the run whose main program is the checkout's code
(``witness.runs_the_checkout``) at its end, whoever started it, as it reads the entrypoint's:
the launcher's finish and its children's launches together pass.  A process whose main
program is not the checkout's (a command an import hook started, a bootstrap-looking command
that bursts) launches for nobody.  Real processes, the stand-in CUDA runtime of
``support.standin``; on a GPU machine ``tests/gpu/launchers.py`` runs the same launchers with
torch through ``--reb-host=local://``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.standin import CC, LIB, build, hook_dir, repo_with, stage

from pytest_reb.witness import observe

pytestmark = pytest.mark.skipif(LIB is None or CC is None, reason="no C compiler")

TRAIN = "import standin_gpu\nstandin_gpu.launch()\nprint('TRAIN_OK', flush=True)\n"
WORK = ("import standin_gpu\n\n\ndef work(i=0):\n    standin_gpu.launch()\n"
        "    return i\n")
PY = sys.executable
#: launcher script -> what it runs (the entrypoint of the run is the launcher)
LAUNCHERS = {
    "subprocess": "import subprocess, sys\nsubprocess.run([sys.executable, 'train.py'], "
                  "check=True)\n",
    "os.system": "import os, sys\nassert os.system(f'{sys.executable} train.py') == 0\n",
    "shell script": "import subprocess\nsubprocess.run(['bash', 'run.sh'], check=True)\n",
    "python -m": "import runpy, subprocess, sys\n"
                 "subprocess.run([sys.executable, '-m', 'pkg.train'], check=True)\n",
    "fork": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
            "    p = mp.get_context('fork').Process(target=work.work)\n"
            "    p.start(); p.join(); assert p.exitcode == 0\n",
    "spawn": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
             "    p = mp.get_context('spawn').Process(target=work.work)\n"
             "    p.start(); p.join(); assert p.exitcode == 0\n",
    "forkserver": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
                  "    p = mp.get_context('forkserver').Process(target=work.work)\n"
                  "    p.start(); p.join(); assert p.exitcode == 0\n",
    "server workers": "import multiprocessing as mp, work\nif __name__ == '__main__':\n"
                      "    with mp.get_context('spawn').Pool(2) as pool:\n"
                      "        assert pool.map(work.work, range(4)) == [0, 1, 2, 3]\n",
}


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("standin"))


def checkout(tmp_path: Path, launch: str) -> Path:
    """A checkout whose ``launch.py`` does its GPU work only in other processes."""
    repo = repo_with(tmp_path, TRAIN)
    (repo / "launch.py").write_text(launch)
    (repo / "work.py").write_text(WORK)
    (repo / "run.sh").write_text(f"set -e\n{PY} train.py\n")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "train.py").write_text(TRAIN)
    return repo


@pytest.mark.parametrize("kind", sorted(LAUNCHERS))
def test_an_honest_launcher_passes_with_its_childrens_work(libs: Path, tmp_path: Path,
                                                           kind: str) -> None:
    repo = checkout(tmp_path, LAUNCHERS[kind])
    seen = stage(libs, repo, [PY, "launch.py"])
    assert seen.res.returncode == 0, seen.res.stderr
    assert seen.finish is None  # C1: the launcher was seen at its own finish
    assert seen.attribution is None, seen.procs  # C3: its children's launches are its own
    launching = [p for p in seen.procs.values() if p.state and p.state.launches_own]
    assert launching and all(p.pid != min(seen.procs) for p in launching)


def test_a_launcher_of_the_modules_entrypoint_is_held_to_the_entrypoint(
        libs: Path, tmp_path: Path) -> None:
    """The module names ``train.py``; the run starts it through the launcher: the child that
    reached it is the finish, and its launches the work."""
    repo = checkout(tmp_path, LAUNCHERS["subprocess"])
    seen = stage(libs, repo, [PY, "launch.py"], entrypoint="train.py")
    assert seen.finish is None and seen.attribution is None


def test_a_forks_finish_is_not_the_entrypoints(libs: Path, tmp_path: Path) -> None:
    """A copy of the entrypoint's process that ends normally while the entrypoint itself fails
    is no finish of the entrypoint (its launches still count, as a worker's would)."""
    repo = repo_with(tmp_path, "import os\nif os.fork() == 0:\n    raise SystemExit(0)\n"
                               "os.wait()\nos._exit(3)\n")
    seen = stage(libs, repo, [PY, "train.py"])
    assert seen.res.returncode == 3
    forks = [p for p in seen.procs.values() if p.state and p.state.forked_from]
    assert [p.state.end for p in forks if p.state] == ["finish"]
    assert seen.finish is not None and "did not finish" in seen.finish


HOOK_CHILD = ("import subprocess, sys\n"
              "class Side:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'json':\n"
              "            sys.meta_path.remove(self)\n"
              "            subprocess.run([sys.executable, '-c', {command!r}])\n"
              "sys.meta_path.insert(0, Side())\n")


@pytest.mark.parametrize("command", [
    "import standin_gpu; standin_gpu.launch()",
    "import work; work.work()",  # the checkout's own code, in a main program that is not
    "from multiprocessing.spawn import spawn_main; spawn_main(__import__('standin_gpu')"
    ".launch())",
])
def test_a_child_an_import_hook_starts_launches_for_nobody(libs: Path, tmp_path: Path,
                                                          command: str) -> None:
    """The entrypoint computes on the CPU; an import hook starts a child that bursts on the
    GPU: the child's main program is not the checkout's (nor the host's command)."""
    repo = checkout(tmp_path, "import json\nprint('TRAIN_OK', flush=True)\n")
    hooks = hook_dir(tmp_path, HOOK_CHILD.format(command=command))
    seen = stage(libs, repo, [PY, "launch.py"], hooks=hooks)
    assert seen.res.returncode == 0, seen.res.stderr
    assert seen.finish is None  # the entrypoint did run to its end...
    assert seen.attribution is not None  # ...but none of the GPU work was the run's
    mains = sorted(p.state.main for p in seen.procs.values() if p.state)
    assert observe.MAIN_CHECKOUT in mains and len(mains) == 2


def test_the_hosts_command_is_the_run_and_no_other(libs: Path, tmp_path: Path) -> None:
    repo = checkout(tmp_path, "")
    mine = "import work; work.work()"
    assert stage(libs, repo, [PY, "-c", mine]).attribution is None
    other = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {mine!r} + ' '])"
    assert stage(libs, repo, [PY, "-c", other]).attribution is not None
