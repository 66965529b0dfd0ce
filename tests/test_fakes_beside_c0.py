"""The known-fakes scan beside C0 where a target runs two commands side by side (``local://``:
a session each), and in turn after C0 where it cannot (a container, ssh): the same findings
either way, and a run on hosts alone never loads the engine's client.

C0's analysis runs no code of the repository, and every tier's outcome waits for the scan,
so on the host itself the scan runs in a thread of its own while pyright works; on
``local://`` it had been a third of a pyramid's own time (``bench/overhead.py --local``).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.c0 import local_ctx
from support.minirepo import git_checkout, mini_project

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context, tier_probe
from pytest_reb.targets import LocalTarget


class InTurn(LocalTarget):
    """The host, as a target whose commands may not overlap (what a container is)."""

    side_by_side_commands = False


def venv_with_hook(root: Path) -> str:
    """A bare venv whose site folder holds a startup hook no distribution owns."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "zz_unowned_hook.pth").write_text("import os\n")
    return str(venv / "bin" / "python")


def c0_with_scan(root: Path, python: str, target: LocalTarget) -> tuple[Context, Outcome,
                                                                       list[str]]:
    """C0 on ``target`` (a checkout judged against its own commit), and the names of the
    threads the known-fakes scan ran in."""
    repo = root / "repo"
    git_checkout(repo, {"main.py": "import os\n"})
    ctx = local_ctx(repo, python, total=1, target=target)
    ctx.options = replace(ctx.options, allow_mismatch=True)
    scanned_in: list[str] = []
    scan = ctx.scan_fakes

    def recorded() -> list[dict[str, Any]]:
        scanned_in.append(threading.current_thread().name)
        return scan()

    ctx.scan_fakes = recorded  # type: ignore[method-assign]
    return ctx, ctx.once("c0", tier_probe("c0")), scanned_in


def kept(outcome: Outcome) -> list[tuple[Any, ...]]:
    return sorted((f["kind"], f["path"], f["could_produce"], f.get("owner"), f.get("sha256"))
                  for f in outcome.findings)


def test_the_scan_runs_beside_c0_on_the_host_and_finds_the_same(tmp_path: Path) -> None:
    python = venv_with_hook(tmp_path)
    beside, c0_beside, threads_beside = c0_with_scan(tmp_path / "a", python,
                                                     LocalTarget(gpus=[]))
    in_turn, c0_in_turn, threads_in_turn = c0_with_scan(tmp_path / "b", python, InTurn(gpus=[]))
    assert threads_beside == ["reb-fakes-scan"] and beside.fakes_ahead is not None
    assert threads_in_turn == [threading.current_thread().name]
    assert in_turn.fakes_ahead is None
    assert c0_beside.status == c0_in_turn.status == "passed", c0_beside.message
    assert any(f[1].endswith("zz_unowned_hook.pth") and f[0] == "startup_hook"
               for f in kept(c0_beside))
    assert kept(c0_beside) == kept(c0_in_turn)
    # a later tier reads the scan made beside C0, not a second one
    assert beside.fakes_ahead is not None and beside.known_fakes == beside.fakes_ahead.result()
    assert threads_beside == ["reb-fakes-scan"]


def test_a_run_on_hosts_alone_never_loads_the_engines_client(pytester: pytest.Pytester
                                                              ) -> None:
    """The end of a run sweeps the containers it made; a run on ``local://`` made none, and
    the sweep's ``import docker`` and listing were the plugin's largest cost after C0."""
    args = mini_project(pytester, "print('hello')\n")
    pytester.makeconftest(
        "import sys\nimport pytest\n\n"
        "@pytest.hookimpl(trylast=True)\n"
        "def pytest_unconfigure(config):\n"
        "    print('ENGINE CLIENT LOADED:', 'docker' in sys.modules)\n")
    result = pytester.runpytest_subprocess(*args, "-m", "c1", "-s")
    result.assert_outcomes(passed=1, deselected=5)
    result.stdout.fnmatch_lines(["*ENGINE CLIENT LOADED: False*"])
