"""Helpers of the fault tests: pytest-reb runs in a child process that a test can interrupt."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_reb.targets import LABEL_OWNER

HANG = 'Run(["sleep", "300"], timeout=120)'
AFTER = 'Run(["{python}", "-c", "print(\'AFTER_OK\')"], expect_log=["AFTER_OK"], timeout=60)'


def _default_sigint() -> None:
    """Ctrl-C must reach the child as it reaches a user's pytest.

    An xdist worker ignores SIGINT, a child inherits the ignoring, and a Python
    started that way never turns SIGINT into KeyboardInterrupt: restore it.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Spawned:
    """``python -m pytest`` on ``folder`` in a child process, its output collected as it comes.

    Its containers carry ``reb.owner=<host>:<its pid>``, which is how a test
    finds them, and the suite's ``reb.suite`` label through ``REB_LABELS``.
    """

    def __init__(self, folder: Path, args: Sequence[str], env: dict[str, str] | None = None):
        self.folder = folder
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "--rootdir", str(folder), "-p", "no:cacheprovider",
             "-rA", *args], cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env={**os.environ, **(env or {})}, preexec_fn=_default_sigint)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.owner = f"{os.uname().nodename}:{self.proc.pid}"

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def containers(self, client: Any, *, all: bool = True) -> list[Any]:
        return client.containers.list(all=all, filters={"label": f"{LABEL_OWNER}={self.owner}"})

    def wait_for(self, condition: Callable[[], bool], timeout: float = 240) -> None:
        """Until ``condition()`` holds; fails if the run ends or the time passes first."""
        deadline = time.monotonic() + timeout
        while not condition():
            if self.proc.poll() is not None:
                raise AssertionError(f"the run ended (exit {self.proc.returncode}) before the "
                                     f"moment came:\n{self.output[-3000:]}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"the moment did not come in {timeout:.0f}s:\n"
                                     f"{self.output[-3000:]}")
            time.sleep(0.05)

    def signal(self, signum: int = signal.SIGINT) -> None:
        self.proc.send_signal(signum)

    def finish(self, timeout: float = 600) -> int:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(10)
        return rc


def logged(outdir: Path) -> list[dict[str, Any]]:
    """Every line of the run's outcomes.jsonl, each required to be whole JSON."""
    lines: list[dict[str, Any]] = []
    for log in outdir.glob("*/outcomes.jsonl"):
        text = log.read_text()
        assert not text or text.endswith("\n"), f"{log} ends in a torn line"
        lines += [json.loads(line) for line in text.splitlines()]
    return lines


def process_in(client: Any, run: Spawned, needle: str) -> Callable[[], bool]:
    """A condition: some container of ``run`` has a process whose command line holds ``needle``."""

    def found() -> bool:
        for ctr in run.containers(client, all=False):
            try:
                rows = ctr.top(ps_args="-o pid,args").get("Processes") or []
            except Exception:
                continue
            if any(needle in row[-1] for row in rows):
                return True
        return False

    return found
