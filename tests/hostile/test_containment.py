"""The image is never part of the harness, and nothing of a command outlives it.

- ``own-tools``: the image's ``timeout``, ``test`` and ``sleep`` leave traces and lie
  (``timeout`` says every command succeeded), its ``HEALTHCHECK`` kills every process it
  may each second, and ``ENTRYPOINT``, ``CMD``, ``STOPSIGNAL`` and ``USER nobody`` are set.
  C1 sees the real command's exit 3, as root; no trace of the image's tools appears and the
  container is still up seconds later.
- ``fork-hop``: sixteen chains (the image's ``sh``) that fork and exit as fast as they
  can, editing the checkout from 3-4 s on (the command itself ends at once).  All are gone
  when the tier ends (the cgroup is frozen, then killed); the checkout is never written.
  The sweep of before (``docker top`` + SIGKILL, three rounds) left chains in 4 of 6 runs
  (``bench/containment.py``), so on the old code this test fails most runs, not every one.
- ``disk-filler`` (``--reb-disk 200m``): C1 fails ``disk_limit``; the next module passes
  in a fresh container.
- ``terminal-injection``: the run's last line clears the screen and prints a green
  verdict.  The failure message shows it as escaped data, in the terminal, in
  ``outcomes.jsonl`` and in the HTML report.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.hostile import AfterTier, only_keepalive, run_reb
from support.images import module_text
from support.payloads import CANARY_DIR, CHEATING_TOOLS

from pytest_reb.targets import archive_file

pytestmark = pytest.mark.container

AFTER = 'Run(["{python}", "-c", "print(\'AFTER_OK\')"], expect_log=["AFTER_OK"], timeout=60)'
#: Control characters no output may carry raw (ESC, CR, BEL, CSI, bidi override).
RAW_CONTROL = re.compile("[\x1b\r\x07\x9b\u202e]")


def traces(ctr: Any, names: list[str]) -> dict[str, str]:
    """The canary files of ``names`` the image's tools left in ``ctr`` (name -> content)."""
    found = {}
    for name in names:
        data = archive_file(ctr, f"{CANARY_DIR}/{name}", 4096)
        if data is not None:
            found[name] = data.decode(errors="replace")
    return found


def test_the_image_s_tools_health_check_and_user_never_run(
        pytester: pytest.Pytester, docker_client: Any, hostile: Callable[[str], str],
        image_commit: str) -> None:
    image = hostile("own-tools")
    seen: dict[str, Any] = {}

    def check(containers: list[Any]) -> None:
        time.sleep(2.5)  # a health check every second would have run twice
        seen["traces"] = {n: t for c in containers
                          for n, t in traces(c, [*CHEATING_TOOLS, "health"]).items()}
        for ctr in containers:
            ctr.reload()
        seen["running"] = [c.status for c in containers]

    after = AfterTier(docker_client, image, "c1", check)
    code = "import os, sys; print('REAL_RUN uid=%d' % os.getuid()); sys.exit(3)"
    run = run_reb(pytester, image, {"test_tools": module_text(
        "reb/tools", image_commit, cpu=f'Run(["{{python}}", "-c", {code!r}], timeout=60)')},
        "-m", "c1", plugins=(after,))
    c1 = run["c1"]
    # the image's timeout said 0; the command itself exited 3, and ran as root, not nobody
    assert (c1.status, c1.exit_code, c1.category) == ("failed", 3, "runtime"), c1.message
    assert "REAL_RUN uid=0" in c1.stdout_tail
    assert after.called == 1 and seen == {"traces": {}, "running": ["running"]}


def test_fork_hopping_chains_do_not_outlive_the_command(
        pytester: pytest.Pytester, docker_client: Any, hostile: Callable[[str], str],
        image_commit: str) -> None:
    image = hostile("fork-hop")
    canary = "/tmp/reb-hop-canary"
    seen: dict[str, Any] = {}

    def check(containers: list[Any]) -> None:
        time.sleep(4.5)  # past the chains' 3-4 s: a survivor has written by now
        seen["left"] = only_keepalive(containers)
        seen["wrote"] = [archive_file(c, canary, 64) is not None for c in containers]
        seen["checkout"] = [b"edited after the run" in (archive_file(
            c, "/data/project/repo/train.py", 1 << 20) or b"") for c in containers]

    after = AfterTier(docker_client, image, "c1", check)
    run = run_reb(pytester, image, {"test_hop": module_text(
        "reb/hop", image_commit,
        cpu=f'Run(["{{python}}", "hop.py", {canary!r}], expect_log=["HOP_STARTED"], '
            'timeout=60)')}, "-m", "c1", plugins=(after,))
    c1 = run["c1"]
    assert c1.status == "passed", c1.message
    assert c1.evidence["leftover_processes_killed"] >= 16
    assert after.called == 1
    assert (seen["wrote"], seen["checkout"]) == ([False], [False])  # none outlived the command
    assert seen["left"] == []


def test_a_disk_filler_fails_disk_limit_and_the_session_goes_on(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    run = run_reb(pytester, hostile("disk-filler"), {
        "test_fill": module_text("reb/fill", image_commit,
                                 cpu='Run(["{python}", "fill.py"], timeout=120)'),
        "test_z_after": module_text("reb/after", image_commit, cpu=AFTER)},
        "-m", "c1", "--reb-disk", "200m")
    fill = run["reb/fill|c1"]
    assert (fill.status, fill.category) == ("failed", "disk_limit"), fill.message
    assert fill.evidence["disk_limit_hit"] is True
    assert fill.evidence["disk_used_bytes"] > 200 << 20
    assert "--reb-disk" in fill.message and fill.duration < 60
    assert run["reb/after|c1"].status == "passed"  # a fresh container, the layer gone
    run.result.assert_outcomes(passed=1, failed=1)


def test_a_bad_disk_size_is_a_usage_error(pytester: pytest.Pytester,
                                          hostile: Callable[[str], str]) -> None:
    result = pytester.runpytest("--reb-image", hostile("disk-filler"), "--reb-disk", "lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--reb-disk: 'lots' is not a size" in result.stderr.str()


def test_terminal_injection_is_shown_as_data(pytester: pytest.Pytester,
                                             hostile: Callable[[str], str],
                                             image_commit: str) -> None:
    html = pytester.path / "report.html"
    run = run_reb(pytester, hostile("terminal-injection"), {"test_inject": module_text(
        "reb/inject", image_commit, cpu='Run(["{python}", "inject.py"], timeout=60)')},
        "-m", "c1", f"--html={html}")
    c1 = run["c1"]
    assert (c1.status, c1.exit_code) == ("failed", 1)
    # the message ends with the last line (Python's lines end at a CR too), written out
    assert c1.message.endswith(r"\x07\u202edessap\x9b31m"), c1.message
    assert r"\x1b[2J\x1b[H\x1b[1;32mALL TIERS PASSED\x1b[0m" in c1.stderr_tail
    terminal = run.result.stdout.str() + run.result.stderr.str()
    assert r"\u202edessap" in terminal and not RAW_CONTROL.search(terminal)
    assert run.run_dir is not None
    for line in (run.run_dir / "outcomes.jsonl").read_text().splitlines():
        assert not RAW_CONTROL.search(json.dumps(json.loads(line), ensure_ascii=False))
    page = html.read_text()
    assert "ALL TIERS PASSED" in page and not RAW_CONTROL.search(page)
