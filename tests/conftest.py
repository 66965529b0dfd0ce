"""Shared fixtures of pytest-reb's own tests: the real Docker engine and the images it builds.

Container tests use real images the suite builds (``pytest_reb.loop.demo``),
never a mocked client.  They are marked ``container``; without a Docker
daemon they skip with the reason, and ``.ci/run`` fails if none of them ran.
At the end of the session no container with our labels may exist: the
controller checks, removes any, and fails the run.  Nor may the host have
changed: the controller compares its interfaces, Docker networks, images
other than the suite's and mounts with what they were at the start
(``tests/support/hoststate.py``), and fails the run listing each difference.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker  # noqa: F401  before any in-process pytester run: see below
import hypothesis  # noqa: F401  see below
import pytest
from support import hoststate
from support.images import ensure

import pytest_reb

# An in-process pytester run that is first to import docker (the plugin's
# unconfigure does) drops it from sys.modules when it ends, and every Docker
# client made later in that process fails ("You can only merge into CookieJar"):
# the container tests of that xdist worker would all skip.  The same holds for
# the modules the plugin imports only once a run uses it (it stays inactive in
# this suite's own process): made anew in each in-process run, their classes
# would differ from the ones the test modules imported; and each run imported
# them all again (250 modules, 0.3 s a run, the plugin's and those it and the
# autoloaded plugins import: pydantic, hypothesis).  So all of them, here, once.


def _import_the_plugins_modules() -> None:
    for found in pkgutil.walk_packages(pytest_reb.__path__, "pytest_reb."):
        importlib.import_module(found.name)


_import_the_plugins_modules()
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
# The checkout whose demo/ and repos/ the demo builder and ``reb task`` read when no path is
# given (docs/options.md): this one, also from the temporary folders pytester runs in.
os.environ.setdefault("REB_SOURCE", str(ROOT))
_LEFT_BEHIND = pytest.StashKey[list[str]]()
_HOST_BEFORE = pytest.StashKey[hoststate.HostState]()
_HOST_CHANGES = pytest.StashKey[list[str]]()


def _docker_client() -> Any:
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return client


@pytest.fixture(scope="session")
def docker_client() -> Any:
    """A Docker client on a daemon that answers, or a skip that says why."""
    client = _docker_client()
    if isinstance(client, str):
        pytest.skip(f"no Docker daemon: {client}")
    return client


@pytest.fixture(scope="session")
def demo_image(docker_client: Any) -> str:
    """The agent-built image of the demo repository (good environment)."""
    from pytest_reb.loop.demo.images import ensure_demo_image

    return ensure_demo_image(docker_client, "good")


@pytest.fixture
def agent_images(docker_client: Any) -> Iterator[list[str]]:
    """Images the test's agent runs committed; removed afterwards."""
    made: list[str] = []
    yield made
    for image in made:
        with contextlib.suppress(Exception):
            docker_client.images.remove(image, force=True)


@pytest.fixture(scope="session")
def missing_dep_image(docker_client: Any) -> str:
    """The demo image without PyYAML: one missing dependency."""
    from pytest_reb.loop.demo.images import ensure_demo_image

    return ensure_demo_image(docker_client, "missing-dep")


@pytest.fixture(scope="session")
def tinynet_task(docker_client: Any) -> str:
    """The task image of the demo repository: the bare starting point of an agent run."""
    from pytest_reb.loop.task import ensure_task_image, select

    return ensure_task_image(docker_client, select(["reb/tinynet"])[0])


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv with nothing installed: the environment under test for local runs."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


@pytest.fixture(scope="session")
def demo_commit() -> str:
    from pytest_reb.loop.demo.checkout import demo_commit as commit

    return commit()


#: The suite's own host cache folder (``XDG_CACHE_HOME`` of every run it starts).
_SUITE_CACHE = "REB_SUITE_CACHE"


def pytest_configure(config: pytest.Config) -> None:
    """Label every container this suite makes (workers and pytester runs inherit it)."""
    if not hasattr(config, "workerinput") and "REB_SUITE" not in os.environ:
        os.environ["REB_SUITE"] = uuid.uuid4().hex[:12]
        os.environ["REB_LABELS"] = f"reb.suite={os.environ['REB_SUITE']}"
        # One host cache for the whole suite (workers and pytester runs, whose HOME is their
        # own folder, inherit it): the witness is built once and what an image alone decides
        # is read once per image, as on a user's machine, instead of once per pytester run.
        # The image builders' locks stay where they were; the folder goes at the end.
        from pytest_reb.loop import images

        os.environ.setdefault("REB_CACHE", str(images.CACHE_DIR))
        os.environ[_SUITE_CACHE] = os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(
            prefix="reb-suite-cache-")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The container tests first, each group in its own order (a stable sort).

    Under ``--dist worksteal`` (``tests/run.sh``) each worker starts with a contiguous half
    of the queue: one holds the container tests and builds the images they share while the
    other runs the short tests, and the short tests, last, fill the end of the run.
    """
    items.sort(key=lambda item: item.get_closest_marker("container") is None)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test (on the xdist controller, before its workers start): the host's state."""
    if hasattr(session.config, "workerinput"):
        return
    client = _docker_client()
    session.config.stash[_HOST_BEFORE] = hoststate.snapshot(
        None if isinstance(client, str) else client)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After the whole suite (on the xdist controller), none of its containers may remain,
    and the host must be as it was at the start.

    Only this suite's containers (label ``reb.suite``) are looked at, so a run
    beside another one on the same engine never touches the other's; the host's
    changes are only reported, since what the suite did cannot be told apart
    from what it undid (``tests/support/hoststate.py`` says what is left out and why).
    """
    if hasattr(session.config, "workerinput"):
        return
    if os.environ.get(_SUITE_CACHE):
        shutil.rmtree(os.environ[_SUITE_CACHE], ignore_errors=True)
    client = _docker_client()
    before = session.config.stash.get(_HOST_BEFORE, None)
    if before is not None:
        changed = hoststate.changes(before, hoststate.snapshot(
            None if isinstance(client, str) else client))
        if changed:
            session.config.stash[_HOST_CHANGES] = changed
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if isinstance(client, str):
        return
    suite = os.environ.get("REB_SUITE", "")
    left = client.containers.list(all=True, filters={"label": f"reb.suite={suite}"})
    if not left:
        return
    names = [f"{c.name} ({c.labels.get('reb.run')})" for c in left]
    for c in left:
        c.remove(force=True, v=True)
    session.config.stash[_LEFT_BEHIND] = names
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """One line CI greps: how many container tests ran and how many of them passed."""
    ran = passed = 0
    for key in ("passed", "failed", "error"):
        for rep in terminalreporter.stats.get(key, []):
            if getattr(rep, "when", "call") == "call" and "container" in rep.keywords:
                ran += 1
                passed += key == "passed"
    if os.environ.get("REB_CONTAINER_COUNT_FILE"):
        Path(os.environ["REB_CONTAINER_COUNT_FILE"]).write_text(f"{ran} {passed}\n")
    left = config.stash.get(_LEFT_BEHIND, [])
    if left:
        terminalreporter.write_line(f"FAILED: containers left behind by the suite: {left}",
                                    red=True)
    changed = config.stash.get(_HOST_CHANGES, [])
    if changed:
        terminalreporter.write_line(f"FAILED: the suite changed the host ({len(changed)}):",
                                    red=True)
        for line in changed:
            terminalreporter.write_line(f"  {line}", red=True)
    terminalreporter.write_line(f"container tests: {ran} ran, {passed} passed")

@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An http.server on 127.0.0.1 serving a folder: (base url, folder)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def hostile(docker_client: Any, demo_image: str) -> Callable[[str], str]:
    """``hostile(case)``: the tag of that hostile image, built on first use."""
    made: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in made:
            made[name] = ensure(docker_client, demo_image, name)
        return made[name]

    return get


@pytest.fixture(scope="session")
def image_commit(docker_client: Any, demo_image: str) -> str:
    """The commit the demo image's checkout is at (what a module must pin)."""
    return str(docker_client.images.get(demo_image).labels["reb.demo.commit"])
