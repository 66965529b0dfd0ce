"""C5's strict probe in the target's twin, beside the official questions, on real containers.

The two questions each import torch, so C5 asks them side by side; on one
container a command's return ends every process of it, so the strict probe
runs in a container of its own from the same image (``Target.twin``). These
tests hold what that must keep: the probe sees the image and nothing an
earlier command planted in the main container, the official question still
sees what the official validator saw there, and no container outlives
``close``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.tiers import honest_report, tier_context

from pytest_reb.pyramid.c5_observe import observe_python
from pytest_reb.pyramid.context import tier_probe
from pytest_reb.targets import DockerTarget, Limits
from pytest_reb.targets.base import LABEL_RUN

pytestmark = pytest.mark.container

PYTHON = "/opt/envs/tinynet/bin/python"
#: What a hostile entrypoint could leave in its container: a torch that says another version,
#: put first on every interpreter's path by a ``.pth`` file of the environment.
PLANT = ("import pathlib, site, sys\n"
         "pathlib.Path('/tmp/planted/torch').mkdir(parents=True, exist_ok=True)\n"
         "pathlib.Path('/tmp/planted/torch/__init__.py').write_text('__version__ = \"9.9.9\"')\n"
         "pathlib.Path(site.getsitepackages()[0], 'planted.pth').write_text("
         "'import sys; sys.path.insert(0, \"/tmp/planted\")')\n")


@pytest.fixture
def target(demo_image: str) -> Iterator[DockerTarget]:
    t = DockerTarget(demo_image, run_id="tests-c5-twin", gpus=[],
                     limits=Limits(memory="2g", pids=256))
    yield t
    t.close()


def containers(docker_client: Any, run_id: str) -> list[Any]:
    return docker_client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})


def test_the_strict_probe_does_not_see_what_an_earlier_command_planted(
        target: DockerTarget) -> None:
    assert target.exec([PYTHON, "-c", PLANT], timeout=60).exit_code == 0
    obs = observe_python(target, PYTHON, checkout="/data/project/repo",
                         torch_questions=("plain",))
    assert obs.runs and obs.torch_version and not obs.torch_version.startswith("9.9.9")
    # the official validator asked in the agent's container, after the stages: so does compat
    assert obs.official_torch is not None and obs.official_torch.stdout.strip() == "9.9.9"


def test_twins_share_no_container_and_close_removes_both(target: DockerTarget,
                                                         docker_client: Any) -> None:
    observe_python(target, PYTHON, checkout="/data/project/repo", torch_questions=("plain",))
    twin = target.twin()
    assert twin is target.twin()  # made once
    assert target.container().id != twin.container().id
    assert len(containers(docker_client, "tests-c5-twin")) == 2
    target.close()
    assert containers(docker_client, "tests-c5-twin") == []


def test_a_new_mount_gives_a_new_twin(target: DockerTarget, tmp_path: Any) -> None:
    twin = target.twin()
    target.mount(str(tmp_path), "/opt/reb-test-mount")
    assert target.twin() is not twin
    assert "/opt/reb-test-mount" in target.twin().mounted()


def test_a_sibling_starts_from_its_own_disk_figure(target: DockerTarget) -> None:
    """The disk figure a command leaves is its container's; a sibling's first command (a lane
    beside it, keyed "cpu" too) must not anchor its disk bound on it."""
    assert target.exec(["true"], timeout=30).exit_code == 0
    assert "cpu" in target._settled
    sibling = target.sibling()
    assert sibling._settled == {} and "cpu" in target._settled
    sibling.close()


def test_c2_asks_in_the_twin_and_its_answer_is_c5s(target: DockerTarget) -> None:
    """Strict C2's probe runs in the twin, given C5's nonce, so C5 reads its answer instead of
    importing torch once more: what an earlier command planted in the target reaches neither
    strict answer; the official question, asked in the target, still sees it."""
    honest = honest_report(target)
    assert target.exec([PYTHON, "-c", PLANT], timeout=60).exit_code == 0
    ctx = tier_context(target, honest)
    c5 = ctx.once("c5", tier_probe("c5"))
    seen, c2 = c5.evidence["observed"], ctx.outcomes["c2"]
    assert seen["answered_by"] == "c2" and seen["torch_version"] == honest["torch_version"]
    assert c2.evidence["observed"]["torch_version"] == honest["torch_version"]
    assert c5.strict and c5.evidence["strict"]["category"] is None, c5.message
    assert seen["official_torch"]["stdout"].strip() == "9.9.9"


def test_compat_keeps_c2_in_the_target_and_c5_asks_for_itself(target: DockerTarget) -> None:
    honest = honest_report(target)
    assert target.exec([PYTHON, "-c", PLANT], timeout=60).exit_code == 0
    ctx = tier_context(target, honest, compat=True)
    c5 = ctx.once("c5", tier_probe("c5"))
    assert c5.evidence["observed"]["answered_by"] is None  # its own probe, in the twin
    assert c5.evidence["observed"]["torch_version"] == honest["torch_version"]
    # the official order: C2 after the earlier command, in its container: the planted torch
    assert "torch" in ctx.outcomes["c2"].evidence["observed"].get("torch_error", ""), \
        ctx.outcomes["c2"].evidence["observed"]
