"""The real-run builder gives setuptools-scm the version it would have read from git.

VoxCPM's and F5-TTS's rows install the checkout with setuptools-scm as the build
backend; the image has no git program, so the first VoxCPM build failed with
``setuptools-scm was unable to detect version``.  ``build.scm_version`` reads it
on the host (setuptools-scm's default scheme) for ``SETUPTOOLS_SCM_PRETEND_VERSION``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from build import scm_version  # tests/realruns is on the suite's pythonpath


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c",
                           "user.email=t@t", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo: Path, n: int) -> None:
    (repo / "f").write_text(str(n))
    git(repo, "add", "f")
    git(repo, "commit", "-qm", str(n))


def test_on_a_tag_past_a_tag_and_without_tags(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    commit(tmp_path, 0)
    sha = git(tmp_path, "rev-parse", "--short=7", "HEAD")
    assert scm_version(tmp_path) == f"0.0.0+g{sha}"
    git(tmp_path, "tag", "v1.5.0")
    assert scm_version(tmp_path) == "1.5.0"
    commit(tmp_path, 1)
    commit(tmp_path, 2)
    sha = git(tmp_path, "rev-parse", "--short=7", "HEAD")
    assert scm_version(tmp_path) == f"1.5.1.dev2+g{sha}"
