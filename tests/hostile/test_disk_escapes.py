"""The disk limit holds wherever the container writes, and no run leaves a volume behind.

- ``volume-filler`` (three image ``VOLUME``\\s): 2 GiB written into one under ``--reb-disk
  512m`` fails ``disk_limit`` (it passed: an anonymous volume is outside the layer walk).
- ``volume-checkout``: the checkout itself is a ``VOLUME``; the run fills it.  Same verdict.
- ``unlinked-writer``: 3 GiB written into an unlinked file held open, under ``--reb-disk 1g``,
  fails ``disk_limit`` (it passed: no name left to walk).
- ``fallocate-mapped``: 3 GiB allocated at once, mapped, the descriptor closed and the file
  unlinked: only a mapping holds it.  Same verdict.

- ``disk-pacer``: 200,000 empty files stretch every walk of the layer; after a walk (seen by a
  folder's atime) it holds 3 GiB for 10 s, twice, under ``--reb-disk 1g``: it passed with 1,000,000
  files.  Now the filesystems' used bytes give it away within a tick and the exact look is
  taken frozen: ``disk_limit``, stopped inside its first hold (no ``HELD`` line).
- ``disk-pacer-volume``: the files and the hold in an image ``VOLUME``.  Same verdict.

Every run ends with the engine's volumes as they were before it: containers, the image
peeks and the sweep remove their anonymous volumes (``v=True``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from support.bounds import DATA_VOLUME
from support.hostile import run_reb
from support.images import module_text

from pytest_reb.loop.demo.images import REPO_DIR

pytestmark = pytest.mark.container

AFTER = 'Run(["{python}", "-c", "print(\'AFTER_OK\')"], expect_log=["AFTER_OK"], timeout=60)'


def volumes(client: Any) -> set[str]:
    """Volumes no container uses (a running container of a test beside this one is left out)."""
    return {v.name for v in client.volumes.list(filters={"dangling": True})}


def left_since(client: Any, before: set[str]) -> set[str]:
    """Dangling volumes new since ``before`` that stay: a test beside this one removes its
    container first and its volumes a moment later, a leak stays for good."""
    new = volumes(client) - before
    if new:
        time.sleep(3)
        new &= volumes(client)
    return new


@pytest.mark.parametrize(("case", "argv", "limit"), [
    ("volume-filler", f'["{{python}}", "fill_volume.py", "{DATA_VOLUME}", "2048"]', "512m"),
    ("volume-checkout", f'["{{python}}", "fill_volume.py", "{REPO_DIR}", "2048"]', "512m"),
    ("unlinked-writer", '["{python}", "unlinked.py", "3072"]', "1g"),
    ("fallocate-mapped", '["{python}", "reserve.py", "3072"]', "1g"),
])
def test_disk_use_the_layer_walk_misses_fails_disk_limit(
        pytester: pytest.Pytester, docker_client: Any, hostile: Callable[[str], str],
        image_commit: str, case: str, argv: str, limit: str) -> None:
    image = hostile(case)
    before = volumes(docker_client)
    run = run_reb(pytester, image, {
        "test_fill": module_text("reb/fill", image_commit, cpu=f"Run({argv}, timeout=120)"),
        "test_z_after": module_text("reb/after", image_commit, cpu=AFTER)},
        "-m", "c1", "--reb-disk", limit)
    fill = run["reb/fill|c1"]
    assert (fill.status, fill.category) == ("failed", "disk_limit"), fill.message
    assert fill.evidence["disk_used_bytes"] > int(limit[:-1]) << (20 if limit[-1] == "m" else 30)
    assert "--reb-disk" in fill.message and fill.duration < 60
    assert run["reb/after|c1"].status == "passed"  # a fresh container, layer and volumes gone
    run.result.assert_outcomes(passed=1, failed=1)
    assert left_since(docker_client, before) == set()


@pytest.mark.parametrize(("case", "folder"), [
    ("disk-pacer", "/var/tmp"), ("disk-pacer-volume", DATA_VOLUME)])
def test_a_pacer_of_the_disk_looks_is_stopped_inside_its_first_hold(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str, folder: str) -> None:
    argv = f'["{{python}}", "pace.py", "200000", "3072", "10", "2", "{folder}"]'
    run = run_reb(pytester, hostile(case), {"test_pace": module_text(
        "reb/pace", image_commit, cpu=f"Run({argv}, timeout=300)")},
        "-m", "c1", "--reb-disk", "1g")
    c1 = run["c1"]
    assert (c1.status, c1.category) == ("failed", "disk_limit"), c1.message
    assert c1.evidence["disk_used_bytes"] > 1 << 30
    # the limit held within its margin: the first 3 GiB hold was cut short, none completed
    assert "FILES_MADE 200000" in c1.stdout_tail and "HELD" not in c1.stdout_tail


def test_an_honest_run_in_an_image_with_volumes_leaves_none(
        pytester: pytest.Pytester, docker_client: Any, hostile: Callable[[str], str],
        image_commit: str) -> None:
    before = volumes(docker_client)
    small = f'["{{python}}", "fill_volume.py", "{DATA_VOLUME}", "64", "0"]'
    run = run_reb(pytester, hostile("volume-filler"), {"test_small": module_text(
        "reb/small", image_commit,
        cpu=f'Run({small}, expect_log=["VOLUME_FILLED"], timeout=120)')},
        "-m", "c1", "--reb-disk", "512m")
    c1 = run["c1"]
    assert c1.status == "passed", c1.message  # 64 MiB in a volume is well under the limit
    assert left_since(docker_client, before) == set()
