"""The entrypoint witness on real processes: this host's interpreter with the built library.

Each case runs ``python`` the way a stage would, with the witness preloaded,
and judges the record file with the rule strict C1/C3/C4 apply.  The fakes
are the ways code runs before an entrypoint (``.pth``, ``sitecustomize``,
``usercustomize``, ``PYTHONPATH``, a wrapper interpreter, a launcher whose
workers never reach the script) and the ways one might imitate the witness
from Python.  The same fakes as Docker images are in tests/hostile/.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from support.watched import watched

from pytest_reb import witness

LIB = witness.library_path()
pytestmark = pytest.mark.skipif(LIB is None, reason="no C compiler to build the witness")

ENTRY = "print('TRAIN_OK')\n"
EXIT_IN_STARTUP = ("import os, sys; any(a.endswith('train.py') for a in sys.argv) and "
                   "(print('TRAIN_OK', flush=True), os._exit(0))\n")


def run(tmp: Path, argv: list[str], *, env: dict[str, str] | None = None,
        entrypoint: str | None = None, cwd: Path | None = None, nproc: int = 1,
        ranks: bool = False) -> tuple[subprocess.CompletedProcess[str], str | None]:
    """Run ``argv`` under the witness; the rule's verdict (None: witnessed) and the output."""
    record = tmp / "reb-witness.log"
    record.unlink(missing_ok=True)
    where = str(cwd or tmp)
    exp = witness.expect(argv, python=sys.executable, entrypoint=entrypoint, checkout=where,
                         cwd=where, nproc=nproc, ranks=ranks, server=False, stopped=False)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REB_"))}
    full.update(env or {})
    full.update(witness.env_vars(str(LIB), str(record), exp.entries, None, where,
                                 witness.stops_for(exp)))
    return observed(argv, where, full, record, exp)


def observed(argv: list[str], cwd: str, env: dict[str, str], record: Path,
             exp: witness.Expect) -> tuple[subprocess.CompletedProcess[str], str | None]:
    """Run ``argv`` with the host's observer watching its process tree, as a target does."""
    res, procs = watched(argv, cwd, env, str(LIB), record)
    return res, witness.judge(exp, procs)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(ENTRY)
    return tmp_path


def user_site(base: Path) -> Path:
    """The user site-packages folder of this interpreter under ``PYTHONUSERBASE=base``."""
    site = Path(sysconfig.get_path("purelib", f"{os.name}_user", {"userbase": str(base)}))
    site.mkdir(parents=True, exist_ok=True)
    return site


def test_honest_script_is_witnessed(repo: Path) -> None:
    res, problem = run(repo, [sys.executable, "train.py"])
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert problem is None


def test_os_exit_at_the_end_is_a_finish(repo: Path) -> None:
    (repo / "train.py").write_text(ENTRY + "import os; os._exit(0)\n")
    assert run(repo, [sys.executable, "train.py"])[1] is None


def test_os_exit_from_an_import_hook_is_no_finish(repo: Path, tmp_path_factory: Any) -> None:
    """Issue 25: a hook outside the checkout ends the run at the entrypoint's own import."""
    hooks = tmp_path_factory.mktemp("hooks")
    (hooks / "sitecustomize.py").write_text(
        "import os, sys\n"
        "class End:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'json':\n"
        "            print('TRAIN_OK', flush=True); os._exit(0)\n"
        "sys.meta_path.insert(0, End())\n")
    (repo / "train.py").write_text("import json\n" + ENTRY)
    res, problem = run(repo, [sys.executable, "train.py"], env={"PYTHONPATH": str(hooks)})
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert problem is not None and "did not finish" in problem
    assert f"exit 0 from {hooks}/sitecustomize.py" in problem


def test_record_opened_by_a_bytes_path_is_a_taint(repo: Path) -> None:
    hooks = repo / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os\n"
        "os.close(os.open(os.fsencode(os.environ['REB_WITNESS']), os.O_WRONLY | os.O_CREAT))\n")
    res, problem = run(repo, [sys.executable, "train.py"], env={"PYTHONPATH": str(hooks)})
    assert res.returncode == 0
    assert problem is not None and "interfered with: open" in problem


@pytest.mark.parametrize("where", ["pth", "usercustomize", "sitecustomize"])
def test_startup_code_that_exits_first_is_caught(repo: Path, where: str) -> None:
    base = repo / "userbase"
    env = {"PYTHONUSERBASE": str(base)}
    if where == "pth":
        (user_site(base) / "zz_fast.pth").write_text(EXIT_IN_STARTUP)
    elif where == "usercustomize":
        (user_site(base) / "usercustomize.py").write_text(EXIT_IN_STARTUP)
    else:  # an image's PYTHONPATH with a sitecustomize on it
        hooks = repo / "hooks"
        hooks.mkdir()
        (hooks / "sitecustomize.py").write_text(EXIT_IN_STARTUP)
        env["PYTHONPATH"] = str(hooks)
    res, problem = run(repo, [sys.executable, "train.py"], env=env)
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout  # what the official rule sees
    assert problem is not None and "never began a main program" in problem


def test_sys_audit_cannot_forge_the_start(repo: Path) -> None:
    hooks = repo / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import os, sys\n"
        "sys.audit('cpython.run_file', os.path.abspath('train.py'))\n"
        "exec(compile(open('train.py').read(), os.path.abspath('train.py'), 'exec'))\n"
        "sys.stdout.flush(); os._exit(0)\n")
    res, problem = run(repo, [sys.executable, "train.py"], env={"PYTHONPATH": str(hooks)})
    assert "TRAIN_OK" in res.stdout
    assert problem is not None and "interfered" in problem and "forged" in problem


def test_touching_the_record_from_python_taints_it(repo: Path) -> None:
    (repo / "train.py").write_text(
        "import os\nopen(os.environ['REB_WITNESS'], 'a').write('1 1 reach x\\n')\n")
    problem = run(repo, [sys.executable, "train.py"])[1]
    assert problem is not None and "interfered" in problem


def test_a_wrapper_interpreter_that_runs_something_else(repo: Path) -> None:
    wrapper = repo / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"print('TRAIN_OK')\"\n")
    wrapper.chmod(0o755)
    res, problem = run(repo, [str(wrapper), "train.py"])
    assert "TRAIN_OK" in res.stdout
    assert problem is not None and "no process of the run reached" in problem


def test_a_transparent_wrapper_interpreter_is_fine(repo: Path) -> None:
    wrapper = repo / "python"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    assert run(repo, [str(wrapper), "train.py"])[1] is None


LAUNCHER = """\
import os, subprocess, sys
script = sys.argv[-1]
for rank in range(2):
    env = dict(os.environ, LOCAL_RANK=str(rank))
    subprocess.run([sys.executable, script], env=env, check=True)
"""


def _launcher_with_hook(repo: Path, sitecustomize: str) -> Path:
    """A torchrun-shaped launcher package in ``repo`` and a hooks folder with ``sitecustomize``."""
    pkg = repo / "launch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text(LAUNCHER)
    hooks = repo / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(sitecustomize)
    return hooks


def test_launcher_workers_that_never_reach_the_script(repo: Path) -> None:
    """torchrun's shape (``-m launcher ... script``): a hook ends only the workers."""
    hooks = _launcher_with_hook(repo, "import os\nif 'LOCAL_RANK' in os.environ: "
                                      "print('TRAIN_OK', flush=True); os._exit(0)\n")
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "train.py"]
    exp = witness.expect(argv, python=sys.executable, entrypoint=None, checkout=str(repo),
                         cwd=str(repo), nproc=2, ranks=True, server=False, stopped=False)
    assert (exp.kind, exp.workers) == ("launcher workers", 2)
    env = {"PYTHONPATH": f"{hooks}:{repo}"}
    honest = [sys.executable, "-m", "launch.run", "train.py"]
    assert run(repo, honest, env={"PYTHONPATH": str(repo)}, entrypoint="train.py", nproc=2)[1] \
        is None
    res, problem = run(repo, honest, env=env, entrypoint="train.py", nproc=2)
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert problem is not None and "reached" in problem


def test_fewer_workers_than_ranks(repo: Path) -> None:
    hooks = _launcher_with_hook(
        repo, "import os\nif os.environ.get('LOCAL_RANK') == '1': os._exit(0)\n")
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "train.py"]
    record = repo / "reb-witness.log"
    exp = witness.expect(argv, python=sys.executable, entrypoint=None, checkout=str(repo),
                         cwd=str(repo), nproc=2, ranks=True, server=False, stopped=False)
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REB_"))}
    full.update(PYTHONPATH=f"{hooks}:{repo}",
                **witness.env_vars(str(LIB), str(record), exp.entries, None, str(repo),
                                   witness.stops_for(exp)))
    res, problem = observed([sys.executable, "-m", "launch.run", "train.py"], str(repo), full,
                            record, exp)
    assert res.returncode == 0
    assert problem is not None and "only 1 process(es) reached" in problem


def test_killed_before_the_end(repo: Path) -> None:
    (repo / "train.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    problem = run(repo, [sys.executable, "train.py"])[1]
    assert problem is not None and "did not finish" in problem


def test_module_and_command_runs_reach_the_entrypoint_file(repo: Path) -> None:
    pkg = repo / "src" / "tool"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("def main():\n    print('TRAIN_OK')\nmain()\n")
    env = {"PYTHONPATH": str(repo / "src")}
    assert run(repo, [sys.executable, "-m", "tool.cli"], env=env)[1] is None
    # the module's file named by the repo module, imported by a command: found by its suffix
    assert run(repo, [sys.executable, "-c", "import tool.cli"], env=env,
               entrypoint="src/tool/cli.py")[1] is None
    problem = run(repo, [sys.executable, "-c", "print('TRAIN_OK')"], env=env,
                  entrypoint="src/tool/cli.py")[1]
    assert problem is not None and "no process of the run reached" in problem


def test_a_program_that_is_not_python(repo: Path) -> None:
    problem = run(repo, ["sh", "-c", "echo TRAIN_OK"], entrypoint="train.py")[1]
    assert problem is not None and "no process of the run ran the entrypoint" in problem


@pytest.mark.parametrize(("argv", "kind", "script", "workers"), [
    (["/py", "train.py", "--x"], "python file", "/r/train.py", 1),
    (["timeout", "--preserve-status", "--signal=SIGINT", "8s", "/py", "-u", "a/b.py"],
     "python file", "/r/a/b.py", 1),
    (["/.reb/busybox", "timeout", "-sINT", "8", "/py", "a/b.py"], "python file", "/r/a/b.py", 1),
    (["/py", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "t/x.py", "--c",
      "y.py"], "launcher workers", "/r/t/x.py", 2),
    (["torchrun", "--nproc_per_node=2", "s.py"], "launcher workers", "/r/s.py", 2),
    (["/py", "-m", "accelerate.commands.launch", "--num_processes", "2", "s.py"],
     "launcher workers", "/r/s.py", 2),
    (["/py", "-m", "pkg.mod", "--flag"], "python module", "pkg/mod.py", 1),
    (["bash", "-lc", "python x.py"], "shell driver: the Python processes it started", None, 1),
])
def test_what_a_run_shape_allows(argv: list[str], kind: str, script: str | None,
                                 workers: int) -> None:
    exp = witness.expect(argv, python="/py", entrypoint=None, checkout="/r", cwd="/r", nproc=2,
                         ranks=True, server=False, stopped=False)
    assert (exp.kind, exp.workers) == (kind, workers)
    assert (exp.entries[0] if exp.entries else None) == script


def test_entries_cover_a_package_installed_elsewhere() -> None:
    assert witness.entries_of("src/f5_tts/infer/infer_cli.py", "/repo", "/repo") == (
        "/repo/src/f5_tts/infer/infer_cli.py", "src/f5_tts/infer/infer_cli.py",
        "f5_tts/infer/infer_cli.py", "infer/infer_cli.py")


def test_a_shell_driver_gets_what_its_launcher_allows(repo: Path) -> None:
    """``bash run.sh``: the shell ran the script to its end (its Python, if any, is judged
    only when the repository names a Python entrypoint)."""
    (repo / "run.sh").write_text(f"{sys.executable} train.py\n")
    assert run(repo, ["bash", "run.sh"])[1] is None
    assert run(repo, ["bash", "run.sh"], entrypoint="train.py")[1] is None
    (repo / "run.sh").write_text("echo TRAIN_OK; kill -9 $$\n")
    problem = run(repo, ["bash", "run.sh"])[1]
    assert problem is not None and "did not end normally" in problem
    assert run(repo, ["sh", "-c", "echo TRAIN_OK"])[1] is None


def test_an_image_wide_preload_is_a_known_fake() -> None:
    """What could impersonate the witness natively is reported, and could produce any run
    tier's verdict (``findings``)."""
    from pytest_reb.evidence.fakescan import rules

    class Files:
        def __init__(self, text: str) -> None:
            self.text = text

        def read(self, path: str, limit: int = 1 << 20) -> bytes | None:
            return self.text.encode() if path == "/etc/ld.so.preload" else None

    [found] = rules().preload_findings(Files("# comment\n/usr/lib/libfake.so\n"))
    assert found["kind"] == "ld_preload" and "libfake.so" in found["detail"]
    assert rules().preload_findings(Files("")) == []


def test_a_failed_exec_in_a_vfork_child_does_not_end_the_parent(repo: Path) -> None:
    """subprocess starts children with vfork: the child shares the parent's memory until it
    execs, and one whose exec fails leaves by ``_exit(255)``.  That end is the child's, not
    the program's (seen on VisionMamba's honest image: strict C1 failed it as "did not
    finish")."""
    (repo / "train.py").write_text(
        "import subprocess\n"
        "try:\n    subprocess.run(['/no/such/program'])\nexcept FileNotFoundError:\n    pass\n"
        + ENTRY)
    res, problem = run(repo, [sys.executable, "train.py"])
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert problem is None
