"""The host's git of the integrity check: ``REB_GIT`` names it (a harness image's own, in a pod
whose image has none), else ``git`` on the ``PATH``."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pytest_reb.evidence import gitstore

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the host's git")


def test_the_object_reader_runs_the_git_reb_git_names(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    sha = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "a.txt"], check=True,
                         capture_output=True, text=True).stdout.strip()
    log = tmp_path / "ran"
    wrapper = tmp_path / "bin" / "our-git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("REB_GIT", str(wrapper))
    assert gitstore.git_program() == str(wrapper)
    with gitstore.Objects(repo / ".git", time.monotonic() + 60) as objects:
        assert objects.read(sha, 1 << 10) == ("blob", b"hello\n")
    assert "cat-file --batch" in log.read_text()  # ours, not the one on the PATH
    monkeypatch.delenv("REB_GIT")
    assert gitstore.git_program() == "git"
