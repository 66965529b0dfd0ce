"""Hostile entrypoints: what a repository's own code may do to the machinery that runs it.

- ``daemon``: forks a detached, TERM-ignoring daemon with a cleared environment and exits 0.
  C1 passes; the daemon is killed at the end of the tier: nothing with its token survives.
- ``fork-bomb`` (``--reb-pids 128``): C1 fails ``pids_limit``, the bomb stopped by the
  limit and killed; the session goes on.
- ``memory-hog`` (``--reb-memory 256m``): C1 fails ``oom``; the session goes on.
- ``loud-output``: prints 1 GiB, then its marker.  C1 passes; 64 KiB of it is kept and the
  count is exact.
- ``forged-results``: writes "success" files wherever it can, prints a forged probe line,
  exits 1.  C1 fails ``runtime``; nothing forged reaches the host: outcomes are the host's.

Each image holds its entrypoint as an untracked file of the demo checkout,
run by a repository module the test writes; a second module in the same
session (``test_z_after``) shows the session goes on.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from support.hostile import AfterTier, host_processes_with, only_keepalive, run_reb
from support.images import module_text

pytestmark = pytest.mark.container

AFTER = 'Run(["{python}", "-c", "print(\'AFTER_OK\')"], expect_log=["AFTER_OK"], timeout=60)'


def entry(script: str, *args: str, timeout: int = 60, expect: str | None = None) -> str:
    argv = ["{python}", script, *args]
    return f"Run({argv!r}, timeout={timeout}, expect_log={[expect] if expect else []!r})"


def test_daemon_is_killed_at_the_end_of_the_tier(pytester: pytest.Pytester, docker_client: Any,
                                                 hostile: Callable[[str], str],
                                                 image_commit: str) -> None:
    token = f"reb-daemon-canary-{uuid.uuid4().hex[:12]}"
    image = hostile("daemon")
    seen: dict[str, Any] = {}

    def check(containers: list[Any]) -> None:
        seen["containers"] = len(containers)
        seen["left"] = only_keepalive(containers)
        seen["host"] = host_processes_with(token)

    after = AfterTier(docker_client, image, "c1", check)
    run = run_reb(pytester, image, {"test_daemon": module_text(
        "reb/daemon", image_commit, cpu=entry("serve.py", token, expect="DAEMON_STARTED"))},
        "-m", "c1", plugins=(after,))
    c1 = run["c1"]
    assert (c1.status, c1.exit_code) == ("passed", 0), c1.message
    assert c1.evidence["leftover_processes_killed"] >= 1  # the daemon was there, and went
    assert after.called == 1 and seen == {"containers": 1, "left": [], "host": []}
    assert host_processes_with(token) == []


def test_fork_bomb_is_stopped_by_the_pids_limit(pytester: pytest.Pytester, docker_client: Any,
                                                hostile: Callable[[str], str],
                                                image_commit: str) -> None:
    image = hostile("fork-bomb")
    seen: dict[str, Any] = {}
    after = AfterTier(docker_client, image, "c1",
                      lambda containers: seen.update(left=only_keepalive(containers)))
    run = run_reb(pytester, image, {
        "test_bomb": module_text("reb/bomb", image_commit, cpu=entry("bomb.py", timeout=8)),
        "test_z_after": module_text("reb/after", image_commit, cpu=AFTER)},
        "-m", "c1", "--reb-pids", "128", plugins=(after,))
    bomb = run["reb/bomb|c1"]
    assert (bomb.status, bomb.category) == ("failed", "pids_limit"), bomb.message
    assert bomb.evidence["pids_limit_hit"] is True
    assert (bomb.evidence.get("leftover_processes_killed", 0) > 0
            or bomb.evidence.get("killed_by_host"))
    assert seen == {"left": []}
    assert run["reb/after|c1"].status == "passed"  # the session goes on
    run.result.assert_outcomes(passed=1, failed=1)


def test_memory_hog_is_oom(pytester: pytest.Pytester, hostile: Callable[[str], str],
                           image_commit: str) -> None:
    run = run_reb(pytester, hostile("memory-hog"), {
        "test_hog": module_text("reb/hog", image_commit, cpu=entry("hog.py")),
        "test_z_after": module_text("reb/after", image_commit, cpu=AFTER)},
        "-m", "c1", "--reb-memory", "256m")
    hog = run["reb/hog|c1"]
    assert (hog.status, hog.category) == ("failed", "oom"), hog.message
    assert hog.evidence["oom_killed"] is True and hog.exit_code == 137
    assert run["reb/after|c1"].status == "passed"
    run.result.assert_outcomes(passed=1, failed=1)


def test_a_gigabyte_of_output_stays_bounded(pytester: pytest.Pytester,
                                            hostile: Callable[[str], str],
                                            image_commit: str) -> None:
    run = run_reb(pytester, hostile("loud-output"), {"test_loud": module_text(
        "reb/loud", image_commit, cpu=entry("loud.py", timeout=300, expect="LOUD_OK"))},
        "-m", "c1")
    c1 = run["c1"]
    assert c1.status == "passed", c1.message  # the marker after the gigabyte was seen
    assert c1.evidence["stdout_bytes"] == (1 << 30) + len("LOUD_OK\n")
    assert len(c1.stdout_tail) < 70_000 and c1.stdout_tail.endswith("LOUD_OK")
    assert run.run_dir is not None
    assert (run.run_dir / "outcomes.jsonl").stat().st_size < 300_000


def test_forged_result_files_are_ignored(pytester: pytest.Pytester,
                                         hostile: Callable[[str], str],
                                         image_commit: str) -> None:
    before = set(pytester.path.rglob("*"))
    run = run_reb(pytester, hostile("forged-results"), {"test_forge": module_text(
        "reb/forge", image_commit, cpu=entry("forge.py", "whatever", "{out}"))},
        "-m", "c1")
    c1 = run["c1"]
    forged = [ln for ln in c1.stdout_tail.splitlines() if ln.startswith("FORGED")]
    assert forged and int(forged[0].split("written=")[1].split()[0]) >= 5  # it could write
    assert "refused=0" not in forged[0]  # and was refused where the host's files are
    assert (c1.status, c1.category, c1.exit_code) == ("failed", "runtime", 1)
    assert run.run_dir is not None
    lines = (run.run_dir / "outcomes.jsonl").read_text().splitlines()
    assert [(json.loads(ln)["repo"], json.loads(ln)["status"]) for ln in lines] == [
        ("reb/forge", "failed")]
    new = {p.relative_to(pytester.path).as_posix() for p in set(pytester.path.rglob("*")) - before
           if p.is_file()}
    # pytester's HOME is its folder: pytest-reb's own cache of image readings is ours
    ours = ("reports/", "test_", ".cache/pytest-reb/")
    assert {n for n in new if not n.startswith(ours)} == set()
    assert {n.rsplit("/", 1)[-1] for n in new if n.startswith("reports/")} == {
        "outcomes.jsonl", "summary.json"}
