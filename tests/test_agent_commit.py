"""Committing an agent's environment: any size, looked up when the answer is lost, and an
image of its own, not a container of the run.

On the real engine: a 2 GB layer committed by a client whose HTTP timeout (2 s) is far
shorter than the engine's work, as a 60 s timeout is for a 7 GB venv; a commit whose answer
the client gave up on is found by its labels; a user's ``docker run`` of a kept image
survives ``reb gc``.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import docker
import pytest
from support.agentruns import agent

from pytest_reb.loop.agent import commit
from pytest_reb.targets import LABEL_RUN, labels
from pytest_reb.targets.housekeeping import removable, sweep

pytestmark = pytest.mark.container

BIG_MIB = 2048


def test_a_multi_gb_layer_is_committed_whatever_the_clients_timeout(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    impatient = docker.from_env(timeout=2)
    rec = agent(impatient, tinynet_task, tmp_path, agent_images,
                f"sh -c 'head -c {BIG_MIB}M /dev/zero > /root/env.bin; echo wrote'",
                budget=300)
    assert (rec.status, rec.exit_code) == ("finished", 0), rec.error
    image = docker_client.images.get(rec.image)
    assert image.attrs["Size"] > BIG_MIB << 20
    assert rec.commit_s is not None and rec.commit_s > 2  # longer than the client would wait
    assert (tmp_path / "runs" / "matrix.jsonl").read_text().count(rec.image or "") == 1


def test_a_commit_whose_answer_was_lost_is_found_by_its_labels(
        docker_client: Any, tinynet_task: str) -> None:
    ctr = docker_client.containers.run(
        tinynet_task, ["sh", "-c", "head -c 300M /dev/zero > /root/x.bin"], detach=True,
        network_mode="none", labels=labels("tests-commit-lost"))
    tag = commit.image_tag("reb__tinynet", "tests-commit-lost")
    try:
        ctr.wait(timeout=120)
        changes = commit.changes({"run": "tests-commit-lost"}, ctr.labels, None)
        image_id = commit.commit(docker_client, ctr, tag, "tests-commit-lost", changes,
                                 timeout=0.05, lookup_wait=120)
        assert docker_client.images.get(tag).id == image_id
    finally:
        ctr.remove(force=True)
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)


def test_a_commit_the_engine_refuses_is_one_line_and_leaves_no_image(
        docker_client: Any, tinynet_task: str) -> None:
    ctr = docker_client.containers.create(tinynet_task, ["true"], network_mode="none",
                                          labels=labels("tests-commit-refused"))
    try:
        with pytest.raises(commit.CommitError, match="refused the commit"):
            commit.commit(docker_client, ctr, "reb-agent-env:Bad Tag!", "x", [], timeout=30)
        made = [i for i in docker_client.images.list(filters={"dangling": True})
                if i.attrs.get("Container") == ctr.id]
        assert made == []  # the image the engine wrote before refusing its tag is gone
    finally:
        ctr.remove(force=True)


def test_a_users_container_of_a_kept_image_is_nobodys_orphan(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images, "true")
    labels = docker_client.images.get(rec.image).labels
    assert labels["reb.run"] == "" and labels["reb.owner"] == ""
    assert labels["reb.agent.name"] == ""  # the agent container's own label, emptied too
    assert (labels["reb.agent-env.run"], labels["reb.agent-env.agent"]) == (rec.run, "scripted")
    mine = docker_client.containers.run(rec.image, ["sleep", "300"], detach=True,
                                        network_mode="none")  # as a user: plain docker run
    try:
        sweep(only_orphans=True)  # `reb gc`
        # `reb gc --all` would pick it neither (asked, not run: it removes every run's
        # containers, those of any other run on this engine too, the suite's other worker's)
        listed = docker_client.containers.list(all=True, filters={"label": LABEL_RUN})
        assert mine.id in {c.id for c in listed}
        assert mine.id not in {c.id for c in removable(listed)}
        time.sleep(0.5)
        mine.reload()
        assert mine.status == "running"
    finally:
        mine.remove(force=True)



def test_the_commit_keeps_every_label_of_the_task_image_and_empties_the_runs(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """A custom --task-image (the demo's task image plus a ``maintainer`` label): the kept
    image has its ``reb.task.*`` labels and its ``maintainer``; only the run's are empty."""
    task_labels = docker_client.images.get(tinynet_task).labels
    assert {"reb.task.repo", "reb.task.commit", "reb.task.base"} <= set(task_labels)
    base = docker_client.containers.create(tinynet_task, ["true"],
                                           labels=labels("tests-commit-labels"))
    custom = "reb-test-custom-task:labels"
    try:
        docker_client.api.commit(base.id, repository="reb-test-custom-task", tag="labels",
                                 changes=['LABEL maintainer="someone@example.org"',
                                          'LABEL reb.run="" reb.owner=""'])
    finally:
        base.remove(force=True)
    agent_images.append(custom)
    rec = agent(docker_client, custom, tmp_path, agent_images, "true")
    kept = docker_client.images.get(rec.image).labels
    for key, value in task_labels.items():
        if key not in ("reb.run", "reb.owner"):
            assert kept[key] == value, key
    assert kept["maintainer"] == "someone@example.org"
    assert (kept["reb.run"], kept["reb.owner"], kept["reb.agent.name"]) == ("", "", "")
    assert kept["reb.agent-env.run"] == rec.run
    # what the official layout reads back: the agent's start, wall time and tokens
    from pytest_reb.runs.agentfacts import agent_facts

    facts = agent_facts(rec.image)
    assert facts is not None and facts["run"] == rec.run
    assert (facts["started"], facts["wall_s"], facts["exit_code"], facts["tokens"]) == \
        (round(rec.started, 3), rec.wall_s, 0, "unknown")
    assert agent_facts(tinynet_task) is None  # a task image is no agent's commit
