"""Tiny repositories for pytester runs on ``local://`` (a helper of the tests, not collected).

``git_checkout`` commits a few files into a new git repository, as an agent's
checkout would be; ``mini_project`` lays down the one most report tests run:
a checkout whose ``main.py`` is given, and the module ``me/mini`` that runs it
as C1 and C3 (C4 not applicable), here with this interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

#: A fixed identity and date, and no user configuration, for the test commits: the same
#: files give the same commit every run (an image built from a checkout is reused by it).
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "PATH": "/usr/bin:/bin"}


def git_checkout(root: Path, files: Mapping[str, str]) -> str:
    """A git checkout at ``root`` with ``files`` in one commit; returns the commit."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return commit_all(root)


def commit_all(root: Path) -> str:
    """Make the folder ``root`` a git checkout of all it holds, in one commit; its commit."""
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=root, check=True, env=GIT_ENV)
    return head(root)


def head(root: Path) -> str:
    """The commit the checkout at ``root`` is at."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, env=GIT_ENV,
                          capture_output=True, text=True).stdout.strip()


def mini_project(pytester: pytest.Pytester, main_py: str) -> list[str]:
    """``me/mini`` and its checkout in the pytester folder; returns the arguments of its run."""
    commit = git_checkout(pytester.path / "checkout", {"main.py": main_py})
    pytester.makepyfile(test_mini=(
        "from pytest_reb import Repo, Run\n"
        f"repo = Repo('me/mini', commit='{commit}', imports_total=1,\n"
        "            cpu=Run(['{python}', 'main.py'], timeout=60),\n"
        "            single_gpu=Run(['{python}', 'main.py']), multi_gpu=None)\n"))
    return ["-m", "c1 or c3 or c4", "--rootdir", str(pytester.path), "--reb-host", "local://",
            "--reb-python", sys.executable, "--reb-repo-dir", str(pytester.path / "checkout"),
            "--reb-outdir", str(pytester.path / "reports"), "--reb-gpus", "",
            "-p", "no:cacheprovider", "-p", "no:benchmark"]
