"""Containers started ahead (``targets/prestart.py``), on the real engine: taken only by a
start with exactly their arguments, never left behind, and chosen by the run's tiers."""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.targets import LABEL_RUN, DockerTarget, Limits

DEMO_MODULE = Path(__file__).resolve().parent.parent / "demo" / "test_demo__tinynet.py"


def ours(client: Any, run_id: str) -> set[str]:
    """Ids of the containers the engine holds for ``run_id``."""
    listed = client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
    return {c.id for c in listed}


def settled(client: Any, run_id: str, count: int, limit: float = 30.0) -> set[str]:
    """The run's containers once the engine lists ``count`` of them (prestarting is in the
    background)."""
    deadline = time.monotonic() + limit
    while len(found := ours(client, run_id)) != count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@pytest.fixture
def run_id(docker_client: Any) -> Any:
    rid = f"prestart-{secrets.token_hex(4)}"
    yield rid
    for ctr in docker_client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={rid}"}):
        ctr.remove(force=True)


@pytest.mark.container
def test_the_lanes_and_the_twin_take_the_containers_started_ahead(
        demo_image: str, docker_client: Any, run_id: str) -> None:
    target = DockerTarget(demo_image, run_id=run_id, gpus=[], limits=Limits())
    target.prestart(plain=1, background=2)
    try:
        ahead = settled(docker_client, run_id, 3)
        assert len(ahead) == 3
        first, second = target.sibling(), target.sibling(background=True)
        taken = {first.container().id, second.container().id, second.twin().container().id}
        assert taken == ahead  # no container was made for them: they took the three
        assert ours(docker_client, run_id) == ahead
        assert second.container().attrs["HostConfig"]["CpuShares"] > 0
        assert not first.container().attrs["HostConfig"]["CpuShares"]
        res = second.twin().exec(["sh", "-c", "echo ok"], timeout=30)
        assert res.exit_code == 0 and res.stdout.strip() == "ok"
        first.close()
        second.close()
    finally:
        target.close()
    assert settled(docker_client, run_id, 0) == set()


@pytest.mark.container
def test_other_mounts_start_their_own_and_nothing_is_left(
        demo_image: str, docker_client: Any, run_id: str, tmp_path: Path) -> None:
    """A repository's shims or assets change the arguments: the prestarted ones are not
    theirs (another mount set), and the target that started them removes them at close."""
    target = DockerTarget(demo_image, run_id=run_id, gpus=[], limits=Limits())
    target.prestart(plain=1, background=1)
    try:
        ahead = settled(docker_client, run_id, 2)
        (tmp_path / "shim").mkdir()
        (tmp_path / "shim" / "marker").write_text("mounted")
        target.mount(str(tmp_path / "shim"), "/data/project/repo/benchmark_scripts")
        lane = target.sibling()
        ctr = lane.container()
        assert ctr.id not in ahead
        assert lane.exec(["cat", "/data/project/repo/benchmark_scripts/marker"],
                         timeout=30).stdout == "mounted"
        lane.close()  # a copy's close leaves the pool to the target that made it
        assert ours(docker_client, run_id) == ahead
    finally:
        target.close()
    assert settled(docker_client, run_id, 0) == set()


@pytest.mark.container
def test_a_close_while_they_are_made_waits_and_removes_them(
        demo_image: str, docker_client: Any, run_id: str) -> None:
    target = DockerTarget(demo_image, run_id=run_id, gpus=[], limits=Limits())
    since = time.time()
    target.prestart(plain=2, background=2)
    target.close()  # at once: the engine is still making the first batch (one of each kind)
    assert ours(docker_client, run_id) == set()
    events = docker_client.events(since=int(since) - 1, until=int(time.time()) + 1, decode=True,
                                  filters={"type": "container", "event": "create",
                                           "label": f"{LABEL_RUN}={run_id}"})
    assert len(list(events)) <= 2  # the second batch (the twins) was never made
    assert target.container().id  # a later start makes its own; the closed pool gives none
    target.close()
    assert ours(docker_client, run_id) == set()


def run_c1(pytester: pytest.Pytester, module: str, image: str, client: Any,
           command: str) -> None:
    """``module`` with ``-m c1`` alone (no lanes: the serial target takes the plain container):
    its stage ran (``command`` is in its argv) in the container the run made first, and
    nothing of the run is left.  The run's containers are told by its label (other tests'
    containers come and go on the same engine meanwhile)."""
    pytester.makepyfile(test_demo__tinynet=module)
    since = time.time()
    result = pytester.runpytest_subprocess("--reb-image", image, "-m", "c1", "-p",
                                           "no:cacheprovider", "--reb-outdir",
                                           str(pytester.path / "out"))
    result.assert_outcomes(passed=1, deselected=5)
    [run_dir] = (pytester.path / "out").iterdir()
    events = list(client.events(
        since=int(since) - 1, until=int(time.time()) + 1, decode=True,
        filters={"type": "container", "event": ["create", "exec_create"],
                 "label": f"{LABEL_RUN}={run_dir.name}"}))
    created = [e["id"] for e in events if e["Action"] == "create"]
    ran = {e["id"] for e in events if command in e["Action"]}
    assert ran == {created[0]}, [(e["id"][:8], e["Action"][:80]) for e in events]
    assert ours(client, run_dir.name) == set()


@pytest.mark.container
def test_a_pyramid_run_leaves_no_prestarted_container(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    run_c1(pytester, DEMO_MODULE.read_text(), demo_image, docker_client, "train.py")


SHIM_RUN = """import os, runpy, sys
sys.path.insert(0, os.getcwd())
sys.argv = ["train.py", "--steps", "2", "--out", sys.argv[1], "--device", "cpu"]
runpy.run_path("train.py", run_name="__main__")
"""


@pytest.mark.container
def test_a_repository_that_mounts_its_shims_takes_its_containers_too(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    """The containers are started once collection knows the pair, with its mounts: a stage
    that runs from its shim folder runs in the container made first, and sees the folder."""
    shims = pytester.path / "shims"
    shims.mkdir()
    (shims / "run.py").write_text(SHIM_RUN)
    source = DEMO_MODULE.read_text().replace(
        'cpu=Run(["{python}", *TRAIN, "--device", "cpu"],',
        f'cpu=Run(["{{python}}", "{{shims}}/run.py", "{{out}}/ckpt"], shim_dir={str(shims)!r},')
    assert "{shims}/run.py" in source
    run_c1(pytester, source, demo_image, docker_client, "run.py")


@pytest.mark.container
def test_a_view_that_cannot_be_made_starts_nothing_ahead(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    """Collection's containers-ahead step mounts the asset view too; where the cache cannot hold
    it (a file where its ``views`` folder should be) it starts nothing and the run goes on to
    the tier, which meets the same error as before; nothing is left."""
    source = DEMO_MODULE.read_text().replace(
        "from pytest_reb import Repo, Run, torchrun",
        "from pytest_reb import Asset, Repo, Run, torchrun").replace(
        '    imports_total=8,',
        '    imports_total=8,\n    assets=[Asset("cfg", "config", "repo", path="train.py", '
        'dest="cfg/")],')
    pytester.makepyfile(test_demo__tinynet=source)
    (pytester.path / "cache").mkdir()
    (pytester.path / "cache" / "views").write_text("not a folder")
    result = pytester.runpytest_subprocess(
        "--reb-image", demo_image, "-m", "c1", "-p", "no:cacheprovider",
        "--reb-assets", str(pytester.path / "cache"), "--reb-outdir", str(pytester.path / "out"))
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "NotADirectoryError" in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    run_id = re.search(r"^reb: run (\S+)", out, re.MULTILINE)
    assert run_id and ours(docker_client, run_id.group(1)) == set()

