"""pytest-reb installed, in a project that does not use it: the run is as if it were not.

Each check is made on a real pytest subprocess of a small unrelated project (a
fresh interpreter: its modules and signal handlers are its own), next to the
same project run with ``-p no:reb`` and, as the positive control that shows
each probe can see what it looks for, with a target option given.  The probes
are real: an ``nvidia-smi`` first on PATH that leaves a file when run, a
``DOCKER_HOST`` socket that counts who connects, and a test inside the project
that writes down its SIGTERM handler and every module loaded.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_reb.plugin import load_args

#: The modules of ours an inactive plugin may load: the entry point, its hookspecs, the
#: options' types (with the sizes they read) and the stash key (each stdlib only).
LIGHT = {"pytest_reb", "pytest_reb.plugin", "pytest_reb.plugin.hooks",
         "pytest_reb.plugin.hookspecs", "pytest_reb.plugin.optiontypes", "pytest_reb.sizes",
         "pytest_reb.plugin.stash"}
HEAVY = ("docker", "pydantic", "matplotlib", "testinfra", "pytest_reb.plugin.session")

PROJECT_TEST = """
import gc, json, signal, sys

def test_something_of_its_own(request):
    plugins = [getattr(p, "__name__", "") for p in request.config.pluginmanager.get_plugins()]
    with open({facts!r}, "w") as fh:
        json.dump({{"plugin_loaded": "pytest_reb.plugin.hooks" in plugins,
                   "sigterm_default": signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
                   "modules": sorted(sys.modules), "frozen": gc.get_freeze_count()}}, fh)
    assert 1 + 1 == 2
"""


class DockerListener:
    """A unix socket standing in for the Docker engine: it counts connections, answers none."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="reb-dk-"))  # short: unix paths are <108
        self.path = self.folder / "docker.sock"
        self.connections = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(16)
        self._server.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._server.close()
        self.path.unlink()
        self.folder.rmdir()


@pytest.fixture
def probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """A fake ``nvidia-smi`` first on PATH and a listening ``DOCKER_HOST``, for the runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "nvidia-smi-ran"
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    docker = DockerListener()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{docker.path}")
    try:
        yield {"nvidia_smi": marker, "docker": docker}
    finally:
        docker.close()


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, object]]:
    """The unrelated project's run, and what its own test saw."""
    facts = pytester.path / "facts.json"
    facts.unlink(missing_ok=True)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *load_args(), *args)
    return result, json.loads(facts.read_text())


def shown(result: pytest.RunResult, project: Path) -> list[str]:
    """The output less what differs between any two runs (times, the installed plugins),
    with the project's folder (named after the test) as ``<project>``."""
    return [re.sub(r"\d+\.\d+s", "Ns", line).replace(str(project), "<project>")
            for line in result.outlines if not line.startswith("plugins:")]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_unrelated=PROJECT_TEST.format(facts=str(pytester.path / "facts.json")))
    return pytester


def test_an_unrelated_run_is_as_if_pytest_reb_were_not_installed(
        project: pytest.Pytester, probes: dict[str, object]) -> None:
    docker, smi = probes["docker"], probes["nvidia_smi"]
    assert isinstance(docker, DockerListener) and isinstance(smi, Path)
    without, bare = run(project, "-p", "no:reb")
    result, facts = run(project)
    result.assert_outcomes(passed=1)
    assert facts["plugin_loaded"] and not bare["plugin_loaded"]
    assert [line for line in shown(result, project.path) if "reb" in line.lower()] == []
    assert shown(result, project.path) == shown(without, project.path)
    assert not smi.exists(), "nvidia-smi was run"
    assert facts["sigterm_default"], "a SIGTERM handler was installed"
    assert facts["frozen"] == bare["frozen"] == 0, "objects were kept from the collector"
    assert docker.connections == 0, "the Docker engine was asked something"
    ours = set(facts["modules"]) - set(bare["modules"])  # type: ignore[arg-type]
    assert ours <= LIGHT, sorted(ours - LIGHT)
    assert [m for m in HEAVY if m in facts["modules"]] == \
        [m for m in HEAVY if m in bare["modules"]]  # type: ignore[operator]


def test_the_probes_see_an_active_run(project: pytest.Pytester,
                                      probes: dict[str, object]) -> None:
    """The control: with a target option, each thing the test above rules out happens."""
    docker, smi = probes["docker"], probes["nvidia_smi"]
    assert isinstance(docker, DockerListener) and isinstance(smi, Path)
    result, facts = run(project, "--reb-host", "local://", "--reb-outdir",
                        str(project.path / "reports"))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["reb: run *", "reb: host *", "reb: targets local://"])
    assert smi.exists()
    assert not facts["sigterm_default"]
    assert facts["frozen"] > 0  # the imports' objects, kept from pytest's closing collections
    assert "pytest_reb.plugin.session" in facts["modules"]  # type: ignore[operator]
    # a run on hosts alone makes no container and asks the engine nothing; one with an image
    # asks it at once (whether it has the image), and fails clearly when it does not answer
    assert docker.connections == 0
    image = project.runpytest_subprocess("-p", "no:cacheprovider", *load_args(),
                                         "--reb-image", "reb-absent:probe",
                                         "--reb-outdir", str(project.path / "reports"))
    assert image.ret != 0 and docker.connections > 0


def test_a_run_nested_in_another_keeps_nothing_from_the_collector(
        project: pytest.Pytester) -> None:
    """pytester's in-process runs: the process goes on, so its objects stay collectable."""
    import gc

    before = gc.get_freeze_count()
    project.runpytest("--reb-host", "local://", "--reb-outdir", str(project.path / "reports"),
                      "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert gc.get_freeze_count() == before
    assert json.loads((project.path / "facts.json").read_text())["frozen"] == before


def test_a_repository_module_alone_makes_it_active(pytester: pytest.Pytester) -> None:
    """No option given, but a ``Repo`` collected: the items skip, and one line says why."""
    pytester.makepyfile(test_mini="from pytest_reb import Repo, Run\n"
                                  "repo = Repo('me/mini', commit='0' * 40, imports_total=1,\n"
                                  "            cpu=Run(['{python}', 'main.py']))\n",
                        test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=6)
    result.stdout.fnmatch_lines(["reb: no target given (--reb-image / --reb-host): "
                                 "tier items will skip", "*no target: pass --reb-image*"])
    assert result.stdout.str().count("no target given") == 1
    assert "reb: run" not in result.stdout.str()
    distributed = pytester.runpytest("-p", "no:cacheprovider", "-n", "2")
    distributed.assert_outcomes(passed=1, skipped=6)


def test_the_suite_markers_are_not_the_plugins(project: pytest.Pytester) -> None:
    """``container`` and ``gpu`` are this repository's test markers; c0..c5 ship."""
    result = project.runpytest("--markers", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["@pytest.mark.c0: C0 *"])
    assert "mark.container" not in result.stdout.str()
    assert "mark.gpu" not in result.stdout.str()
