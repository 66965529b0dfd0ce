"""``targets.local.exited``: a command's end seen through a pidfd, with ``Popen.wait``'s
contract (its exit code; ``TimeoutExpired`` while it runs, the process left as it was)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_reb.targets.local import exited


def test_the_exit_code_of_a_process_that_ends() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(7)"])
    assert exited(proc, 60) == 7
    assert proc.returncode == 7


def test_a_process_still_running_at_the_timeout_is_left_running() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            exited(proc, 0.2)
        assert proc.poll() is None
    finally:
        proc.kill()
    assert exited(proc, 60) == -9


def test_a_process_reaped_already_answers_its_code() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert exited(proc, 1) == 0
