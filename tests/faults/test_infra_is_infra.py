"""Infra is infra (issue 14, item 8): a lost container is never taken for the image's doing.

- the container removed from the engine in the middle of the integrity check:
  the check raises ``InfraError`` instead of reporting every tracked file
  "deleted"; a run examines the checkout once more in a fresh container, and
  strict C1 passes instead of failing ``integrity``;
- a C2 that died of ``infra`` twice (it is run again in a fresh container
  after the first loss): C5 says the CUDA claim is unjudged, never a silent pass.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.hostile import demo_target, run_reb
from support.images import demo_module

from pytest_reb.evidence import integrity
from pytest_reb.targets import DockerTarget, InfraError

pytestmark = pytest.mark.container

REPO = "/data/project/repo"


def _losing(monkeypatch: pytest.MonkeyPatch, times: int) -> list[str]:
    """Make the integrity check lose its container ``times`` times, right in its middle."""
    lost: list[str] = []
    compare = integrity._Check._compare

    def lose_then_compare(self: Any, *args: Any) -> None:
        if len(lost) < times:
            import docker

            pid = self.view.root.split("/")[2]
            for ctr in docker.from_env().containers.list(all=True):
                if str(ctr.attrs["State"]["Pid"]) == pid:
                    ctr.remove(force=True, v=True)  # it is paused: remove works, kill does not
                    lost.append(ctr.name)
        compare(self, *args)

    monkeypatch.setattr(integrity._Check, "_compare", lose_then_compare)
    return lost


@pytest.fixture
def target(demo_image: str) -> Iterator[DockerTarget]:
    yield from demo_target(demo_image, "tests-infra")


def test_a_container_lost_mid_check_is_infra_not_every_file_deleted(
        target: DockerTarget, image_commit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lost = _losing(monkeypatch, 1)
    with pytest.raises(InfraError, match="lost during the host-side read"):
        integrity.examine(target, REPO, image_commit)
    assert lost
    target.close()  # what a run does after a loss (``Context.checkout_verdict``)
    assert integrity.examine(target, REPO, image_commit).findings == []  # a fresh container


def test_a_run_examines_again_in_a_fresh_container(pytester: pytest.Pytester, demo_image: str,
                                                   image_commit: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # the check before the run must really look (not read the suite's kept one), to be lost
    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path / "cache"))
    lost = _losing(monkeypatch, 1)
    run = run_reb(pytester, demo_image, {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert len(lost) == 1
    assert (c1.status, c1.findings) == ("passed", []), c1.message
    assert c1.integrity is not None and c1.integrity["status"] == "intact"


def test_c5_says_a_claim_is_unjudged_when_c2_died_of_infra(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the module the run will import (an earlier in-process run may have left a stale one
    # on the package, which ``from pytest_reb.pyramid import c2_cuda`` would patch instead)
    c2_cuda = importlib.import_module("pytest_reb.pyramid.c2_cuda")
    calls: list[int] = []

    def lost(ctx: Any) -> Any:
        calls.append(1)
        raise InfraError("container reb-x stopped during the command (test)")

    monkeypatch.setattr(c2_cuda, "probe", lost)
    run = run_reb(pytester, hostile("cuda-spoof"), {"test_demo__tinynet":
                                                    demo_module(image_commit)}, "-m", "c2 or c5")
    c2, c5 = run["c2"], run["c5"]
    assert (c2.category, len(calls)) == ("infra", 2)  # run once more, lost again
    assert "rerun" in c2.evidence
    assert (c5.status, c5.category, c5.strict) == ("failed", "unjudged", False), c5.message
    assert "cuda_available" in c5.message and "C2 died of infra" in c5.message
