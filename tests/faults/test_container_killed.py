"""A container killed mid-tier (by the test, from the engine): that tier fails ``infra``.

The rest continue: the next tier of the same target gets a fresh container
and its own verdict (C2 under an interpreter without torch: ``deps``), and the
next module runs as if nothing happened.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from support.faults import AFTER, HANG
from support.images import module_text

from pytest_reb.targets import LABEL_OWNER, owner_label

pytestmark = pytest.mark.container


def kill_when_hanging(client: Any, image: str, done: threading.Event,
                      killed: list[str]) -> None:
    """Kill this process's containers of ``image`` whenever ``sleep 300`` runs in one (the
    tier is run once more in a fresh container after the first loss: both are killed)."""
    deadline = time.monotonic() + 120
    while not done.is_set() and time.monotonic() < deadline:
        try:  # the SDK inspects each container it lists: one removed meanwhile is a 404
            listed = client.containers.list(filters={"label": [
                f"{LABEL_OWNER}={owner_label()}", f"reb.target={image}"]})
        except Exception:
            listed = []
        for ctr in listed:
            try:
                rows = ctr.top(ps_args="-o pid,args").get("Processes") or []
            except Exception:
                continue
            if ctr.name not in killed and any("sleep 300" in row[-1] for row in rows):
                ctr.kill()
                killed.append(ctr.name)
        time.sleep(0.05)


def test_container_killed_mid_tier(pytester: pytest.Pytester, docker_client: Any,
                                   demo_image: str, image_commit: str) -> None:
    pytester.makepyfile(test_a_hang=module_text("reb/hang", image_commit, cpu=HANG),
                        test_b_after=module_text("reb/after", image_commit, cpu=AFTER))
    done, killed = threading.Event(), []
    killer = threading.Thread(target=kill_when_hanging,
                              args=(docker_client, demo_image, done, killed), daemon=True)
    killer.start()
    try:
        result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", demo_image,
                                    "--reb-python", "/usr/bin/python3", "-m", "c1 or c2",
                                    "--reb-outdir", str(pytester.path / "reports"),
                                    "-p", "no:cacheprovider")
    finally:
        done.set()
        killer.join(10)
    from pytest_reb.outcome import OutcomeLog

    [log] = (pytester.path / "reports").glob("*/outcomes.jsonl")
    got = {(o.repo, o.tier): o for o in OutcomeLog(log)}
    assert killed, "the tier never hung"
    hang = got["reb/hang", "c1"]
    assert (hang.status, hang.category) == ("failed", "infra"), hang.message
    assert len(killed) == 2, killed  # lost, run again in a fresh container, lost again
    assert "stopped during the command" in hang.message and killed[1] in hang.message
    assert killed[0] in hang.evidence["rerun"]
    assert hang.duration < 60
    # the rest continue: a fresh container for the same target, then the next module
    assert (got["reb/hang", "c2"].status, got["reb/hang", "c2"].category) == ("failed", "deps")
    assert got["reb/after", "c1"].status == "passed"
    assert (got["reb/after", "c2"].category) == "deps"
    result.assert_outcomes(passed=1, failed=3)
