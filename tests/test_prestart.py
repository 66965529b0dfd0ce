"""pytest-reb's own time before the first command: what it imports, when the container starts.

* Importing the plugin, or the modules a run activates, imports no Docker SDK and no pydantic:
  those come when a target or a report is first used (``engine``, ``session.report``).
* The first pair's CPU container is started from a thread at the end of collection
  (``prestart``), and the tiers use that very container: the mounts they ask for are
  already in place, so nothing is started a second time.
* It is not started early when the report comes from the host (``--agent-report``).
* One Docker client per engine address (``engine.client``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_reb import engine

DEMO_MODULE = Path(__file__).resolve().parent.parent / "demo" / "test_demo__tinynet.py"
HEAVY = {"docker", "requests", "pydantic"}

#: a conftest that looks, once pytest-reb's collection_finish is done, whether the container
#: is being started, waits for it, and lists the run's containers
LOOK = '''
import json, pytest
from pytest_reb import engine
from pytest_reb.stash import SESSION_KEY

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    reb = session.config.stash[SESSION_KEY]
    thread = reb._prestarting
    if thread is not None:
        thread.join()
    ctrs = engine.client().containers.list(all=True, filters={"label": f"reb.run={reb.run_id}"})
    with open("look.json", "w") as fh:
        json.dump({"prestarted": thread is not None, "run": reb.run_id,
                   "profiles": [c.labels.get("reb.profile") for c in ctrs]}, fh)
'''


def _loaded_after(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json\n"
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_plugin_imports_no_docker_nor_pydantic() -> None:
    assert not _loaded_after("import pytest_reb.plugin") & HEAVY


def test_the_modules_of_an_active_run_import_no_pydantic_until_a_report_is_read() -> None:
    loaded = _loaded_after("import pytest_reb.fixtures, pytest_reb.session, pytest_reb.collect,"
                           " pytest_reb.housekeeping, pytest_reb.targets")
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_one_client_per_engine_address(monkeypatch: pytest.MonkeyPatch,
                                       docker_client: Any) -> None:
    assert engine.client() is engine.client()
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/reb-no-daemon.sock")
    from docker.errors import DockerException

    for _ in range(2):  # a failure is not kept: each call asks again
        with pytest.raises(DockerException):
            engine.client()
    monkeypatch.undo()
    assert engine.client().ping()


def _run(pytester: pytest.Pytester, image: str, *args: str) -> tuple[pytest.RunResult,
                                                                      dict[str, Any]]:
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    pytester.makeconftest(LOOK)
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider", "-m", "c0", *args)
    return result, json.loads((pytester.path / "look.json").read_text())


def test_the_first_container_starts_at_collection_and_is_the_one_the_tiers_use(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    since = int(time.time()) - 1
    result, look = _run(pytester, demo_image)
    result.assert_outcomes(passed=1, deselected=5)
    assert look["prestarted"] and look["profiles"] == ["cpu"]
    events = docker_client.events(since=since, until=int(time.time()) + 1, decode=True,
                                  filters={"type": "container", "event": "create",
                                           "label": f"reb.run={look['run']}"})
    assert len(list(events)) == 1  # the tiers' mounts were in place: it was never remade


def test_no_early_start_when_the_report_comes_from_the_host(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    report = pytester.path / "report.json"
    report.write_bytes(docker_client.containers.run(
        demo_image, ["cat", "/opt/scimlopsbench/report.json"], remove=True, network_mode="none"))
    result, look = _run(pytester, demo_image, "--agent-report", str(report))
    result.assert_outcomes(passed=1, deselected=5)
    assert not look["prestarted"] and look["profiles"] == []
