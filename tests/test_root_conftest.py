"""The checkout's root ``conftest.py``: a checkout runs like an installed plugin, once.

Each check runs real pytest subprocesses on a copy of this checkout in two
interpreters built for the purpose, so neither depends on how this machine
installed pytest-reb:

* *not installed*: ``python -S`` with this machine's site-packages less every
  file of the pytest-reb distribution (no ``pytest11`` entry point, nothing to
  import ``pytest_reb`` from) and without the working directory on
  ``sys.path`` (``-P``), as the ``pytest`` console script runs;
* *installed*: the same, plus a ``pytest-reb`` distribution whose entry point
  is ``reb = pytest_reb.plugin.hooks`` and the copy on ``sys.path``: what an editable
  install of the copy amounts to.

A probe plugin (``-p reb_probe``) writes down under which names the plugin
module is registered and whether the entry point registered it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import sys
from importlib import metadata
from pathlib import Path

import pytest

from pytest_reb.pyramid.context import TIER_TESTS

ROOT = Path(__file__).resolve().parent.parent
#: What of the checkout the copy holds: the card's top level, less the suite's own tests.
COPIED = ("pyproject.toml", "conftest.py", "pytest_reb", "repos", "demo", "tests/data",
          "tests/realruns")
NOT_TESTS = ("repos/shims", "tests/realruns", "tests/data")
#: Runs pytest in an interpreter whose sys.path is the stdlib plus the folders in argv[1].
BOOT = ("import os, sys; sys.path += sys.argv.pop(1).split(os.pathsep); import pytest; "
        "raise SystemExit(pytest.console_main())")
PROBE = '''
import json, os, sys


def pytest_configure(config):
    pm = config.pluginmanager
    plugin = sys.modules.get("pytest_reb.plugin.hooks")
    with open(os.environ["REB_PROBE_OUT"], "w") as fh:
        json.dump({"names": [n for n, p in pm.list_name_plugin()
                             if plugin is not None and p is plugin],
                   "entry_point": any(p is plugin for p, _ in pm.list_plugin_distinfo()),
                   "file": getattr(plugin, "__file__", None)}, fh)
'''
DIST_INFO = ("Metadata-Version: 2.1\nName: pytest-reb\nVersion: 0.1.0\n",
             "[pytest11]\nreb = pytest_reb.plugin.hooks\n")


@pytest.fixture(scope="module")
def interpreters(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """``installed`` / ``not-installed`` -> the folders their sys.path adds to the stdlib
    (the checkout copy is added to the installed one's per test)."""
    base = tmp_path_factory.mktemp("interpreters")
    # the installed distribution's own files, read from site-packages: the checkout's
    # pytest_reb.egg-info (an editable install leaves one there) is first on this process's
    # sys.path and lists the sources instead
    ours = {Path(str(f)).parts[0]
            for d in metadata.distributions(path=list(site.getsitepackages()))
            if (d.metadata["Name"] or "").lower() == "pytest-reb" for f in d.files or []}
    ours -= {"..", "__pycache__"}
    site_dir = base / "site"
    site_dir.mkdir()
    for folder in map(Path, site.getsitepackages()):
        for entry in folder.iterdir() if folder.is_dir() else []:
            if entry.name not in ours and not (site_dir / entry.name).exists():
                (site_dir / entry.name).symlink_to(entry)
    probe = base / "probe"
    probe.mkdir()
    (probe / "reb_probe.py").write_text(PROBE)
    dist = base / "install" / "pytest_reb-0.1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(DIST_INFO[0])
    (dist / "entry_points.txt").write_text(DIST_INFO[1])
    return {"not-installed": [site_dir, probe], "installed": [site_dir, probe, base / "install"]}


@pytest.fixture
def checkout(pytester: pytest.Pytester) -> Path:
    """A copy of this checkout's top level, with an empty ``reports/``."""
    copy = pytester.path / "checkout"
    for part in COPIED:
        src, dst = ROOT / part, copy / part
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    (copy / "reports").mkdir()
    return copy


class Runner:
    """One interpreter's pytest runs, each from a working directory of the test's choice."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                 paths: list[Path], checkout: Path, installed: bool) -> None:
        self.pytester, self.monkeypatch, self.installed = pytester, monkeypatch, installed
        self.paths = [*paths, checkout] if installed else paths
        self.probe_out = pytester.path / "probe.json"
        monkeypatch.setenv("REB_PROBE_OUT", str(self.probe_out))

    def __call__(self, cwd: Path, *args: str) -> pytest.RunResult:
        """pytest with ``args``, started in ``cwd``."""
        self.monkeypatch.chdir(cwd)
        self.probe_out.unlink(missing_ok=True)
        return self.python(BOOT, "-p", "reb_probe", *args)

    def python(self, code: str, *args: str) -> pytest.RunResult:
        """``code`` run by this interpreter, its folders on sys.path."""
        return self.pytester.run(sys.executable, "-S", "-E", "-P", "-c", code,
                                 os.pathsep.join(map(str, self.paths)), *args)

    def registered(self) -> dict[str, object]:
        """What the probe saw of the plugin in the last run."""
        return json.loads(self.probe_out.read_text())  # type: ignore[no-any-return]


@pytest.fixture(params=["not-installed", "installed"])
def runner(request: pytest.FixtureRequest, pytester: pytest.Pytester,
           monkeypatch: pytest.MonkeyPatch, interpreters: dict[str, list[Path]],
           checkout: Path) -> Runner:
    return Runner(pytester, monkeypatch, interpreters[request.param], checkout,
                  installed=request.param == "installed")


def collected(result: pytest.RunResult) -> list[str]:
    """The node ids ``--collect-only -q`` listed."""
    return [line for line in result.outlines if "::" in line and " " not in line]


def test_the_interpreters_are_what_they_claim(runner: Runner) -> None:
    """The control: the not-installed one cannot import pytest_reb and has no entry point;
    both have what the plugin needs."""
    result = runner.python(
        "import importlib.util, json, os, sys; sys.path += sys.argv.pop(1).split(os.pathsep); "
        "from importlib import metadata; import docker, pydantic, xdist; "
        "print(json.dumps([importlib.util.find_spec('pytest_reb') is not None, "
        "[e.value for e in metadata.entry_points(group='pytest11')]]))")
    importable, entry_points = json.loads(result.outlines[-1])
    assert importable is runner.installed
    assert ("pytest_reb.plugin.hooks" in entry_points) is runner.installed


@pytest.mark.parametrize("import_mode", ["prepend", "importlib"])
def test_repos_and_demo_run_from_the_checkout(runner: Runner, checkout: Path,
                                              import_mode: str) -> None:
    """Every module's tier items, run (no target: each skips and says why), with the
    checkout's plugin registered exactly once: by the entry point when installed, by the
    root conftest when not."""
    result = runner(checkout, "repos", "demo", "-q", "-rs", f"--import-mode={import_mode}")
    modules = [*(checkout / "repos").glob("test_*.py"), *(checkout / "demo").glob("test_*.py")]
    result.assert_outcomes(skipped=len(modules) * len(TIER_TESTS))
    result.stdout.fnmatch_lines(["SKIPPED * no target: pass --reb-image*"])
    seen = runner.registered()
    assert seen["names"] == ["reb"]
    assert seen["entry_point"] is runner.installed
    assert Path(str(seen["file"])).is_relative_to(checkout)


def test_a_blocked_plugin_stays_out(runner: Runner, checkout: Path) -> None:
    """``-p no:reb`` in a checkout: the conftest does not register it behind the user's back."""
    result = runner(checkout, "demo", "--collect-only", "-q", "-p", "no:reb")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.outlines[-20:]
    assert runner.registered()["names"] == []


def plant(checkout: Path) -> tuple[set[str], set[str]]:
    """A test file in each non-test folder (and a module that fails when imported), and the
    controls beside them: the node ids that must not and that must be collected."""
    shims = sorted(p for p in (checkout / "repos" / "shims").iterdir() if p.is_dir())[0]
    ignored, wanted = set(), set()
    for folder in (shims, checkout / "tests" / "realruns", checkout / "tests" / "data" / "gpu"):
        (folder / "test_planted.py").write_text("def test_planted():\n    pass\n")
        (folder / "import_fails.py").write_text("raise RuntimeError('imported')\n")
        ignored.add(str((folder / "test_planted.py").relative_to(checkout)))
    for folder in (checkout / "tests", checkout / "repos"):
        control = folder / f"test_control_{folder.name}.py"
        control.write_text("def test_planted():\n    pass\n")
        wanted.add(str(control.relative_to(checkout)))
    return ignored, wanted


@pytest.mark.parametrize("where", [".", "tests", "tests/data", "repos/shims"])
def test_non_test_folders_are_never_collected(runner: Runner, checkout: Path,
                                              where: str) -> None:
    """Whatever the working directory, even inside one of them; ``--doctest-modules`` shows
    that no file of theirs is even imported."""
    ignored, wanted = plant(checkout)
    args = ["repos", "tests"] if where == "." else []
    result = runner(checkout / where, *args, "--collect-only", "-q", "--doctest-modules")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), \
        result.outlines[-20:]
    files = {n.split("::")[0] for n in collected(result)}  # node ids: from the checkout's top
    assert not files & ignored
    assert files >= {w for w in wanted if Path(w).is_relative_to(Path(where))}
    if where in NOT_TESTS or where.startswith(NOT_TESTS):
        assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def run_dir(result: pytest.RunResult, cwd: Path) -> Path:
    """Where the run's header says it writes."""
    found = [m for line in result.outlines if (m := re.match(r"reb: run (\S+) -> (\S+) ", line))]
    assert len(found) == 1, result.outlines[-20:]
    return (cwd / found[0].group(2)).resolve()


@pytest.mark.parametrize("where", [".", "demo", "outside"])
def test_default_reports_is_the_checkouts(runner: Runner, checkout: Path, where: str) -> None:
    """From the top, from a folder of it, or naming it from outside: ``<checkout>/reports``;
    ``--reb-outdir`` still wins."""
    cwd = checkout.parent if where == "outside" else checkout / where
    target = os.path.relpath(checkout / "demo", cwd)
    result = runner(cwd, target, "--collect-only", "--reb-compat")
    assert result.ret == 0, result.outlines[-20:]
    assert run_dir(result, cwd).parent == (checkout / "reports").resolve()
    if where == ".":
        result.stdout.fnmatch_lines(["reb: run * -> reports/* *"])  # shown as before
    if where == "demo":
        mine = runner(cwd, target, "--collect-only", "--reb-compat", "--reb-outdir", "mine")
        assert run_dir(mine, cwd).parent == (cwd / "mine").resolve()


def test_default_reports_elsewhere_is_the_working_directorys(
        interpreters: dict[str, list[Path]], pytester: pytest.Pytester,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin installed in another project: ``reports/`` where pytest was started."""
    # installed from this checkout, whose files are nowhere on the project's way
    runner = Runner(pytester, monkeypatch, interpreters["installed"], ROOT, installed=True)
    project = pytester.path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "test_mine.py").write_text("def test_mine():\n    pass\n")
    for cwd, arg in ((project, "."), (project / "sub", "..")):
        result = runner(cwd, arg, "--reb-compat", "-p", "no:cacheprovider")
        assert result.ret == 0, result.outlines[-20:]
        assert run_dir(result, cwd).parent == (cwd / "reports").resolve()
