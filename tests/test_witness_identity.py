"""The checkout's code is known by what its files compile to, never by the name it carries.

A code object is the checkout's only if it equals what the checkout file it names compiles to
(``reb_witness_identity.c``: admitted at its ``exec`` event, with every code object nested in
it).  Everything else that names a checkout file is foreign: code made by ``marshal.loads`` at
start-up, ``compile()`` under a checkout name by an installed library the entrypoint calls,
``types.CodeType`` by a startup hook, a sourceless ``.pyc`` compiled with ``dfile=`` a checkout
file.  That holds for C1's finish (an ``os._exit(0)`` from such code is no finish, and it does
not reach the entrypoint) and for C3/C4's launches alike.  Honest code keeps its identity: the
main file, imported modules, runpy and ``-m``, the checkout's package installed into
site-packages, and code a framework rewrites on the checkout's own path (torch.compile's
dynamo makes its frames with ``types.CodeType``).  Real processes, the stand-in CUDA runtime.
"""

from __future__ import annotations

import marshal
import py_compile
import sys
from pathlib import Path

import pytest
from support.standin import CC, LIB, build, hook_dir, repo_with, stage

pytestmark = pytest.mark.skipif(LIB is None or CC is None, reason="no C compiler")
PY = sys.executable
BURST = "import standin_gpu\nfor _ in range(20):\n    standin_gpu.launch()\n"


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("standin"))


def test_marshalled_code_named_like_the_entrypoint_is_foreign(libs: Path,
                                                              tmp_path: Path) -> None:
    """Start-up code loads, with ``marshal``, a function compiled under ``train.py``'s name and
    puts it where the entrypoint calls it (``json.dumps``): no ``compile`` event at run time."""
    repo = repo_with(tmp_path, "import json\nprint(json.dumps([1]))\n")
    code = compile("def dumps(*a, **k):\n" + "".join(f"    {line}\n" for line in
                   BURST.splitlines()) + "    return '[1]'\n", str(repo / "train.py"), "exec")
    blob = marshal.dumps(code)
    hooks = hook_dir(tmp_path, f"import json, marshal\nns = {{}}\n"
                               f"exec(marshal.loads({blob!r}), ns)\njson.dumps = ns['dumps']\n")
    seen = stage(libs, repo, [PY, "train.py"], hooks=hooks)
    assert seen.res.returncode == 0 and "[1]" in seen.res.stdout, seen.res.stderr
    assert seen.attribution is not None and "outside the entrypoint's path" in seen.attribution
    assert "is not what it compiles to" in seen.attribution


def test_code_an_installed_library_compiles_under_a_checkout_name_is_foreign(
        libs: Path, tmp_path: Path) -> None:
    """An edited library the entrypoint calls compiles its burst as ``tinynet/config.py``."""
    repo = repo_with(tmp_path, "import standin_opt\nstandin_opt.step()\n")
    (repo / "tinynet").mkdir()
    (repo / "tinynet" / "config.py").write_text("LR = 0.1\n")
    (libs / "site" / "standin_opt.py").write_text(
        f"def step():\n    exec(compile({BURST!r}, {str(repo / 'tinynet' / 'config.py')!r}, "
        "'exec'), {})\n")
    seen = stage(libs, repo, [PY, "train.py"])
    assert seen.res.returncode == 0, seen.res.stderr
    assert seen.attribution is not None and "config.py" in seen.attribution


def test_a_burst_a_hook_compiles_under_the_entrypoints_name_is_foreign(
        libs: Path, tmp_path: Path) -> None:
    """Issue 47's first false pass: right after the entrypoint's import, a startup hook runs a
    burst compiled as ``train.py``; the entrypoint itself computes on the CPU."""
    repo = repo_with(tmp_path, "import json\nprint('trained on the CPU')\n")
    hooks = hook_dir(tmp_path, "import sys\n"
                     "class Burst:\n"
                     "    def find_spec(self, name, path=None, target=None):\n"
                     "        if name == 'json':\n"
                     "            sys.meta_path.remove(self)\n"
                     f"            exec(compile({BURST!r}, {str(repo / 'train.py')!r}, 'exec'))\n"
                     "sys.meta_path.insert(0, Burst())\n")
    seen = stage(libs, repo, [PY, "train.py"], hooks=hooks)
    assert seen.res.returncode == 0 and "trained on the CPU" in seen.res.stdout
    assert seen.attribution is not None and "outside the entrypoint's path" in seen.attribution
    launches = [p.state.launches_own for p in seen.procs.values() if p.state]
    assert launches == [0]


def test_a_code_object_a_startup_hook_builds_is_foreign(libs: Path, tmp_path: Path) -> None:
    """``types.CodeType`` (through ``code.replace``) from start-up code: a checkout function's
    body swapped, as the entrypoint imports it, for a burst that carries its name and file."""
    repo = repo_with(tmp_path, "import work\nwork.work()\n")
    (repo / "work.py").write_text("import standin_gpu\n\n\ndef work():\n    return 0\n")
    burst = compile("def work():\n    for _ in range(20):\n        standin_gpu.launch()\n",
                    str(repo / "work.py"), "exec").co_consts[0]
    hooks = hook_dir(tmp_path, "import builtins, marshal\n_imp = builtins.__import__\n"
                     "def imp(name, *a, **k):\n"
                     "    m = _imp(name, *a, **k)\n"
                     "    if name == 'work':\n"
                     f"        m.work.__code__ = marshal.loads({marshal.dumps(burst)!r})"
                     ".replace(co_name='work')\n"
                     "    return m\n"
                     "builtins.__import__ = imp\n")
    seen = stage(libs, repo, [PY, "train.py"], hooks=hooks)
    assert seen.res.returncode == 0, seen.res.stderr
    assert seen.attribution is not None and "outside the entrypoint's path" in seen.attribution
    taints = [t for p in seen.procs.values() for t in p.taints]
    assert any("code made under the checkout's name by foreign code" in t for t in taints)


def test_a_sourceless_pyc_named_like_the_entrypoint_neither_reaches_nor_finishes(
        libs: Path, tmp_path: Path) -> None:
    """``site-packages/standin_torch.pyc``, compiled with ``dfile=<checkout>/train.py``, ends
    the run with ``os._exit(0)`` as the entrypoint imports it: no finish, nothing reached."""
    repo = repo_with(tmp_path, "import standin_torch\nraise SystemExit(3)\n")
    source = tmp_path / "standin_torch.py"
    source.write_text("import os\nprint('TRAIN_OK', flush=True)\nos._exit(0)\n")
    py_compile.compile(str(source), cfile=str(libs / "site" / "standin_torch.pyc"),
                       dfile=str(repo / "train.py"), doraise=True)
    try:
        seen = stage(libs, repo, [PY, "-c", "import standin_torch"], entrypoint="train.py")
        assert seen.res.returncode == 0 and "TRAIN_OK" in seen.res.stdout
        assert seen.finish is not None and "no process of the run reached" in seen.finish
        seen = stage(libs, repo, [PY, "train.py"])
        assert seen.res.returncode == 0 and "TRAIN_OK" in seen.res.stdout
        assert seen.finish is not None and "did not finish" in seen.finish, seen.finish
        assert "exit 0 from" in seen.finish
    finally:
        (libs / "site" / "standin_torch.pyc").unlink()


def test_code_compiled_to_look_like_the_entrypoint_does_not_reach_it(libs: Path,
                                                                    tmp_path: Path) -> None:
    """Start-up code runs ``compile(..., 'train.py')`` of other source: not the entrypoint."""
    repo = repo_with(tmp_path, "print('the real one')\n")
    hooks = hook_dir(tmp_path, f"exec(compile('x = 1', {str(repo / 'train.py')!r}, 'exec'))\n")
    seen = stage(libs, repo, [PY, "-c", "import json"], entrypoint="train.py", hooks=hooks)
    assert seen.finish is not None and "no process of the run reached" in seen.finish


@pytest.mark.parametrize("how", ["main", "import", "-m", "runpy", "installed copy",
                                 "framework rewrite"])
def test_the_checkouts_own_code_keeps_its_identity(libs: Path, tmp_path: Path,
                                                   how: str) -> None:
    repo = repo_with(tmp_path, "")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "model.py").write_text(f"def forward():\n    {BURST.splitlines()[0]}\n"
                                           "    standin_gpu.launch()\n")
    train = {"main": BURST,
             "import": "from pkg import model\nmodel.forward()\n",
             "-m": "",
             "runpy": "import runpy\nrunpy.run_path('pkg/model.py', run_name='m')['forward']()\n",
             "installed copy": "import installed_pkg.model as m\nm.forward()\n",
             "framework rewrite": "from pkg import model\nimport standin_compile\n"
                                  "standin_compile.compiled(model.forward)()\n"}[how]
    (repo / "train.py").write_text(train)
    (repo / "pkg" / "__main__.py").write_text("from pkg import model\nmodel.forward()\n")
    if how == "installed copy":  # ``pip install .`` copies the package into site-packages
        (repo / "installed_pkg").mkdir()
        for name in ("__init__.py", "model.py"):
            text = (repo / "pkg" / name).read_text()
            (repo / "installed_pkg" / name).write_text(text)
            (libs / "site" / "installed_pkg").mkdir(exist_ok=True)
            (libs / "site" / "installed_pkg" / name).write_text(text)
    (libs / "site" / "standin_compile.py").write_text(
        "import types\n\ndef compiled(fn):\n"
        "    c = fn.__code__\n"
        "    fn.__code__ = c.replace(co_consts=c.co_consts + (None,))  # a rewrite, as dynamo's\n"
        "    return fn\n")
    argv = [PY, "-m", "pkg"] if how == "-m" else [PY, "train.py"]
    seen = stage(libs, repo, argv, entrypoint="pkg/__main__.py" if how == "-m" else None)
    assert seen.res.returncode == 0, seen.res.stderr
    assert seen.finish is None and seen.attribution is None, (seen.finish, seen.attribution)


@pytest.mark.parametrize("source", ["bytes", "text"])
def test_a_wrapper_outside_the_checkout_that_runs_the_entrypoint_with_runpy_keeps_it(
        libs: Path, tmp_path: Path, source: str) -> None:
    """A driver script outside the checkout (a benchmark's shim, a job wrapper) runs the
    checkout's ``example.py`` with ``runpy.run_path``, which compiles the file's own bytes
    under its name: that is the checkout's code, not code made under its name."""
    repo = repo_with(tmp_path, "")
    (repo / "example.py").write_text(BURST + "print('EXAMPLE_OK', flush=True)\n")
    wrapper = tmp_path / "driver.py"
    example = str(repo / "example.py")
    run = ("import runpy, sys\nsys.path.insert(0, '.')\n"
           f"runpy.run_path({example!r}, run_name='__main__')\n" if source == "bytes" else
           "import sys\nsys.path.insert(0, '.')\n"
           f"text = open({example!r}).read()\n"
           f"exec(compile(text, {example!r}, 'exec'), {{'__name__': '__main__'}})\n")
    wrapper.write_text(run)
    seen = stage(libs, repo, [PY, str(wrapper)], entrypoint="example.py")
    assert seen.res.returncode == 0 and "EXAMPLE_OK" in seen.res.stdout, seen.res.stderr
    taints = [t for p in seen.procs.values() for t in p.taints]
    assert not taints, taints
    assert seen.finish is None and seen.attribution is None, (seen.finish, seen.attribution)


def test_a_wrapper_that_compiles_other_source_under_the_entrypoints_name_is_tainted(
        libs: Path, tmp_path: Path) -> None:
    """The same wrapper compiling a burst of its own as ``example.py``: bytes that are not the
    file's are code made under the checkout's name."""
    repo = repo_with(tmp_path, "")
    (repo / "example.py").write_text("print('EXAMPLE_OK', flush=True)\n")
    wrapper = tmp_path / "driver.py"
    example = str(repo / "example.py")
    wrapper.write_text("import sys\nsys.path.insert(0, '.')\n"
                       f"exec(compile({BURST!r} + open({example!r}).read(), {example!r}, "
                       "'exec'), {'__name__': '__main__'})\n")
    seen = stage(libs, repo, [PY, str(wrapper)], entrypoint="example.py")
    assert seen.res.returncode == 0, seen.res.stderr
    taints = [t for p in seen.procs.values() for t in p.taints]
    assert any("code made under the checkout's name by foreign code" in t for t in taints)
    assert seen.attribution is not None


def test_a_pytest_node_of_the_checkout_keeps_its_identity(libs: Path, tmp_path: Path) -> None:
    """``spec.pytest_node``'s command: the test module is the checkout's code, the command is
    the host's own, and pytest's clean end is the run's finish."""
    from pytest_reb.spec import pytest_node

    repo = repo_with(tmp_path, "")
    (repo / "test_gpu.py").write_text("import standin_gpu\n\n\ndef test_launch():\n"
                                      "    for _ in range(20):\n        standin_gpu.launch()\n")
    argv = [PY if a == "{python}" else a for a in pytest_node("test_gpu.py::test_launch").argv]
    seen = stage(libs, repo, argv, entrypoint="test_gpu.py")
    assert seen.res.returncode == 0, seen.res.stdout + seen.res.stderr
    assert not [t for p in seen.procs.values() for t in p.taints]
    assert seen.finish is None and seen.attribution is None, (seen.finish, seen.attribution)
    assert not (repo / ".pytest_cache").exists()
