"""GPU launch attribution (strict C3/C4) on real processes, without a GPU.

The witness interposes the CUDA runtime's and driver's launch entry points and
counts each launch by where the launching thread's Python code is: the
entrypoint's own code path, or a startup hook, an import hook, an exec'd string.
No CUDA here, so the runtime is a stand-in with the same shape as the real one:
``libstandin_cudart.so`` defines ``cudaLaunchKernel`` and ``cuLaunchKernel``, and
``libstandin_op.so``, like a framework's kernel library, calls them through its
PLT (the path torch's own kernels take).  Python reaches the op with ``ctypes``,
the way a framework's extension module would.  The same rule on an H200 with torch
is in docs/gpu.md.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.standin import CC, LIB, build, hook_dir, repo_with, run

pytestmark = pytest.mark.skipif(LIB is None or CC is None, reason="no C compiler")


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("standin"))


def test_the_entrypoint_launching_is_attributed(libs: Path, tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "import standin_gpu\nstandin_gpu.launch()\n"
                               "standin_gpu.launch_driver()\nprint(standin_gpu.launched())\n")
    res, procs, problem = run(libs, repo, [sys.executable, "train.py"])
    assert res.returncode == 0 and res.stdout.split() == ["2"], res.stderr
    assert problem is None
    (proc,) = [p for p in procs.values() if p.python]
    assert proc.launched_own and proc.launches == (2, 0) and proc.launched_other is None


def test_entry_points_found_at_run_time_are_counted(libs: Path, tmp_path: Path) -> None:
    """Triton's launcher and cuBLAS find the driver's launch by dlsym on a handle or through
    cuGetProcAddress, not through a PLT: those launches are counted as well."""
    repo = repo_with(tmp_path, "import standin_gpu\nstandin_gpu.launch_found_at_run_time()\n"
                               "print(standin_gpu.launched())\n")
    res, procs, problem = run(libs, repo, [sys.executable, "train.py"])
    assert res.returncode == 0 and res.stdout.split() == ["2"], res.stderr
    assert problem is None
    assert next(p for p in procs.values() if p.python).launches == (2, 0)


def test_library_code_the_entrypoint_calls_is_its_own(libs: Path, tmp_path: Path) -> None:
    """A model's forward in site-packages, called from the checkout: the checkout's work."""
    (libs / "site" / "standin_model.py").write_text(
        "import standin_gpu\n\ndef forward():\n    return standin_gpu.launch()\n")
    repo = repo_with(tmp_path, "import standin_model\nstandin_model.forward()\n")
    assert run(libs, repo, [sys.executable, "train.py"])[2] is None


def test_a_thread_the_entrypoint_starts_is_its_own(libs: Path, tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "import threading, standin_gpu\n"
                               "t = threading.Thread(target=standin_gpu.launch)\n"
                               "t.start(); t.join()\n")
    assert run(libs, repo, [sys.executable, "train.py"])[2] is None


def test_the_stages_own_command_is_its_own(libs: Path, tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "")
    res, _, problem = run(libs, repo, [sys.executable, "-c",
                                       "import standin_gpu; standin_gpu.launch()"])
    assert res.returncode == 0 and problem is None


def test_an_import_hook_launching_at_the_entrypoints_import_is_not(
        libs: Path, tmp_path: Path) -> None:
    """Issue 26's false pass: a meta-path finder bursts on the GPU at ``import torch``, and the
    entrypoint then computes on the CPU."""
    hooks = hook_dir(tmp_path, "import sys\n"
                               "class Burst:\n"
                               "    def find_spec(self, name, path=None, target=None):\n"
                               "        if name == 'json':\n"
                               "            import standin_gpu\n"
                               "            for _ in range(50): standin_gpu.launch()\n"
                               "sys.meta_path.insert(0, Burst())\n")
    repo = repo_with(tmp_path, "import json\nprint('trained on the CPU')\n")
    res, procs, problem = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)
    assert res.returncode == 0 and "trained on the CPU" in res.stdout
    assert problem is not None and "outside the entrypoint's path" in problem
    assert "sitecustomize.py" in problem
    assert next(p for p in procs.values() if p.python).launches == (0, 50)


def test_a_finder_written_as_an_exec_string_is_not(libs: Path, tmp_path: Path) -> None:
    """The hook imports nothing but ``base64`` at start-up; its finder is an exec'd string."""
    code = ("import sys\n"
            "class Burst:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'json':\n"
            "            import standin_gpu; standin_gpu.launch()\n"
            "sys.meta_path.insert(0, Burst())\n")
    hooks = hook_dir(tmp_path, "import base64\n"
                     f"exec(base64.b64decode({base64.b64encode(code.encode())!r}))\n")
    repo = repo_with(tmp_path, "import json\n")
    problem = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)[2]
    assert problem is not None and "<string>" in problem


def test_a_patched_function_the_entrypoint_calls_is_not(libs: Path, tmp_path: Path) -> None:
    """A startup hook swaps a library function the entrypoint calls for its own: the work is
    launched inside the entrypoint's call, from the hook's code."""
    hooks = hook_dir(tmp_path, "import json, standin_gpu\n"
                               "_dumps = json.dumps\n"
                               "def dumps(*a, **k):\n"
                               "    standin_gpu.launch()\n"
                               "    return _dumps(*a, **k)\n"
                               "json.dumps = dumps\n")
    repo = repo_with(tmp_path, "import json\nprint(json.dumps([1]))\n")
    res, _, problem = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)
    assert res.returncode == 0 and problem is not None
    assert "outside the entrypoint's path" in problem and "startup code" in problem


def test_a_module_a_hook_imports_later_is_the_hooks(libs: Path, tmp_path: Path) -> None:
    """The hook's finder imports a helper module only at the entrypoint's import (so it was not
    loaded at start-up) and patches with the helper's function: still the hook's code."""
    (libs / "site" / "late_helper.py").write_text(
        "import standin_gpu\n\ndef getcwd():\n    standin_gpu.launch()\n    return '/here'\n")
    hooks = hook_dir(tmp_path, "import os, sys\n"
                               "class Patch:\n"
                               "    def find_spec(self, name, path=None, target=None):\n"
                               "        if name == 'json':\n"
                               "            import late_helper\n"
                               "            os.getcwd = late_helper.getcwd\n"
                               "sys.meta_path.insert(0, Patch())\n")
    repo = repo_with(tmp_path, "import json, os\nprint(os.getcwd())\n")
    res, _, problem = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)
    assert res.returncode == 0 and "/here" in res.stdout
    assert problem is not None and "late_helper.py (loaded by" in problem
    assert "sitecustomize.py" in problem


def test_a_thread_a_startup_hook_starts_is_not(libs: Path, tmp_path: Path) -> None:
    hooks = hook_dir(tmp_path, "import threading, time, standin_gpu\n"
                               "def burst():\n"
                               "    time.sleep(0.3); standin_gpu.launch()\n"
                               "threading.Thread(target=burst).start()\n")
    repo = repo_with(tmp_path, "import time\ntime.sleep(1)\n")
    problem = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)[2]
    assert problem is not None and "outside the entrypoint's path" in problem


def test_code_compiled_under_the_checkouts_name_by_a_hook_is_a_taint(
        libs: Path, tmp_path: Path) -> None:
    """Foreign code cannot dress its work up as the checkout's by naming it ``train.py``."""
    repo = repo_with(tmp_path, "import json\n")
    hooks = hook_dir(tmp_path, "import sys\n"
                               "class Dress:\n"
                               "    def find_spec(self, name, path=None, target=None):\n"
                               "        if name == 'json':\n"
                               "            c = compile('import standin_gpu; standin_gpu.launch()',"
                               f" {str(repo / 'train.py')!r}, 'exec')\n"
                               "            exec(c)\n"
                               "sys.meta_path.insert(0, Dress())\n")
    procs = run(libs, repo, [sys.executable, "train.py"], hooks=hooks)[1]
    taints = [t for p in procs.values() for t in p.taints]
    assert any("under the checkout's name" in t for t in taints), taints


def test_no_launch_at_all_is_no_attribution(libs: Path, tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "print('nothing on the GPU')\n")
    problem = run(libs, repo, [sys.executable, "train.py"])[2]
    assert problem is not None and "no process of the run launched a GPU kernel" in problem


def test_a_forked_worker_does_not_inherit_the_parents_launches(
        libs: Path, tmp_path: Path) -> None:
    """A DataLoader worker forked after the parent launched is not a second rank."""
    repo = repo_with(tmp_path, "import os, standin_gpu\nstandin_gpu.launch()\n"
                               "pid = os.fork()\n"
                               "if pid == 0:\n    os._exit(0)\n"
                               "os.waitpid(pid, 0)\n")
    res, procs, problem = run(libs, repo, [sys.executable, "train.py"])
    assert res.returncode == 0 and problem is None
    assert res.stdout.strip() == ""
    launching = [(p.pid, p.launches) for p in procs.values() if p.launched_own or p.launches]
    assert len(launching) == 1 and launching[0][1] == (1, 0), launching


def test_the_h200_record_attributes_every_honest_run_and_no_hostile_one() -> None:
    """What ``tests/gpu/attribution.py`` recorded on an H200 with torch (docs/gpu.md): the
    calibration family launched from its own code, every injected burst from elsewhere."""
    data = json.loads((Path(__file__).parent / "data" / "gpu" / "h200-attribution.json")
                      .read_text())
    assert len(data["honest"]) == 14 and len(data["hostile"]) == 4
    for name, run_ in data["honest"].items():
        assert run_["exit"] == 0 and run_["attribution"] is None, name
        assert run_["launches"][0] > 0, name
    for name, run_ in data["hostile"].items():
        assert run_["attribution"] is not None and run_["launches"][0] == 0, name
        assert run_["launches"][1] > 0, name


def test_a_program_the_checkout_built_launches_as_the_checkout(libs: Path, tmp_path: Path) -> None:
    """A compiled benchmark of the repository (not Python, run by a shell driver) is the
    repository's code; the same program from outside the checkout is not."""
    repo = repo_with(tmp_path, "")
    source = tmp_path / "bench.c"
    source.write_text("int op(void);\nint main(void) { return op(); }\n")
    for where in (repo / "bench", tmp_path / "elsewhere"):
        subprocess.run([CC, "-o", str(where), str(source), f"-L{libs}", "-lstandin_op",
                        f"-Wl,-rpath,{libs}"], check=True)
    inside, procs, problem = run(libs, repo, ["bash", "-c", str(repo / "bench")])
    assert inside.returncode == 0 and problem is None, procs
    outside, _, problem = run(libs, repo, ["bash", "-c", str(tmp_path / "elsewhere")])
    assert outside.returncode == 0 and problem is not None


def test_a_stage_on_local_grants_from_the_hosts_read(libs: Path, tmp_path: Path) -> None:
    """The stage's own machinery (``StageWitness`` on ``local://``, its observer and its
    record): the launch counts that grant C3 are the ones the host read from the stopped
    process, and a run launching from elsewhere fails with the hook named."""
    from pytest_reb.pyramid.witnessing import StageWitness
    from pytest_reb.spec import Run
    from pytest_reb.targets.local import LocalTarget

    def stage(repo: Path, hooks: Path | None) -> StageWitness:
        target = LocalTarget(gpus=[])
        seen = StageWitness.for_target(target, str(repo), "c3")
        argv = [sys.executable, "train.py"]
        path = [str(libs / "site")] + ([str(hooks)] if hooks else [])
        env, record = seen.env(Run(argv=argv), argv, sys.executable, str(repo),
                               {"STANDIN_LIBS": str(libs), "PYTHONPATH": os.pathsep.join(path)})
        res = target.exec(argv, timeout=60, env=env, cwd=str(repo))
        assert res.exit_code == 0, res.stderr
        seen.collect(record, [])
        return seen

    (tmp_path / "honest").mkdir()
    good = stage(repo_with(tmp_path / "honest", "import standin_gpu\nstandin_gpu.launch()\n"),
                 None)
    assert good.problem() is None and good.gpu_problem() is None
    (tmp_path / "hostile").mkdir()
    hostile = repo_with(tmp_path / "hostile", "import json\n")
    hooks = hook_dir(tmp_path / "hostile", "import sys\n"
                     "class Burst:\n"
                     "    def find_spec(self, name, path=None, target=None):\n"
                     "        if name == 'json':\n"
                     "            import standin_gpu; standin_gpu.launch()\n"
                     "sys.meta_path.insert(0, Burst())\n")
    bad = stage(hostile, hooks)
    assert bad.problem() is None
    problem = bad.gpu_problem()
    assert problem is not None and "sitecustomize.py" in problem
