"""The suite's check that it leaves the host as it found it (``tests/support/hoststate.py``).

``tests/conftest.py`` fails the run on any line ``changes`` gives; these tests pin what a line
says, and that what any user's engine makes and removes on its own is not read at all (or a run
beside other users of the same engine would fail for their work).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from support.hoststate import AGENT_RUN, SUITE_IMAGES, HostState, changes, snapshot


def state(interfaces: set[str], mounts: list[str], images: dict[str, str]) -> HostState:
    """A host as ``snapshot`` reads one, with one Docker network."""
    return HostState(interfaces=interfaces, mounts=Counter(mounts),
                     networks={"bridge (351aabdd3876, bridge)"}, images=images,
                     volumes={"kept"})


def test_each_change_is_one_line() -> None:
    before = state({"lo", "eth0", "docker0 (bridge)"}, ["/", "/proc", "/proc"],
                   {"python:3.11": "1a2b", "mine:latest": "3c4d"})
    after = state({"lo", "eth0", "dummy0"}, ["/", "/proc", "/tmp/x"],
                  {"python:3.11": "5e6f", "other:1": "7a8b"})
    after.networks = set()
    after.volumes = {"kept", "0f3a" * 16}  # an anonymous volume a removal left behind
    assert changes(before, after) == [
        "interface docker0 (bridge) is gone",
        "interface dummy0 is new",
        "mount point /proc is gone",  # one of two stacked mounts
        "mount point /tmp/x is new",
        "Docker network bridge (351aabdd3876, bridge) is gone",
        f"Docker volume {'0f3a' * 16} is new",
        "image mine:latest: is gone",
        "image other:1: is new",
        "image python:3.11: was 1a2b, now 5e6f",
    ]
    assert changes(before, before) == []


def test_without_an_engine_only_interfaces_and_mounts_are_compared() -> None:
    before = state({"lo"}, ["/"], {"python:3.11": "1a2b"})
    after = HostState(interfaces={"lo"}, mounts=Counter(["/"]), networks=None, images=None)
    assert changes(before, after) == []


@pytest.mark.container
def test_what_the_engine_makes_for_anyone_is_not_read(docker_client: Any) -> None:
    """No veth, no mount under the engine's roots, no image of the suite's own repositories;
    the host's own interfaces and mounts are there."""
    from pytest_reb.loop.images import ensure_base_image

    base = ensure_base_image(docker_client)
    now = snapshot(docker_client)
    assert "lo" in now.interfaces and "/" in now.mounts
    assert not [name for name in now.interfaces if name.startswith("veth")]
    data_root = docker_client.info()["DockerRootDir"]
    assert not [p for p in now.mounts if p.startswith((data_root + "/", "/run/docker/"))]
    assert base.startswith(SUITE_IMAGES) and now.images is not None
    assert not [tag for tag in now.images if tag.startswith(SUITE_IMAGES)]
    assert now.networks is not None and any(n.startswith("none ") for n in now.networks)


@pytest.mark.container
def test_an_agent_runs_image_left_untagged_is_reported(docker_client: Any) -> None:
    """An agent run's committed image whose tag went while a container still used it stays
    as ``<none>``: no rebuild makes one, so a new one is a change; a rebuilt recipe's own
    ``<none>`` is not read."""
    import io
    import uuid

    from pytest_reb.loop.images import ensure_base_image

    base = ensure_base_image(docker_client)
    run = f"tests-untagged-{uuid.uuid4().hex[:8]}"
    before = snapshot(docker_client)
    made = []
    try:
        for label in (f'LABEL {AGENT_RUN}="{run}"', "LABEL reb.recipe=rebuilt"):
            image, _ = docker_client.images.build(  # no tag: dangling once built
                fileobj=io.BytesIO(f"FROM {base}\n{label}\n".encode()), rm=True)
            made.append(image.id)
        after = snapshot(docker_client)
    finally:
        for image_id in made:
            docker_client.images.remove(image_id, force=True)
    short = made[0].removeprefix("sha256:")[:12]
    # other tests' work may change the host meanwhile: only the untagged images are read
    untagged = [line for line in changes(before, after) if line.startswith("image <none>")]
    assert untagged == [f"image <none> of agent run {run}: is new"]
    assert after.images is not None and after.images[f"<none> of agent run {run}"] == short
