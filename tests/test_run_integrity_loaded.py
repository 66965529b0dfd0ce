"""``pyramid/run_integrity``: which checkout files a run names as what it runs (the module's
choice: an untracked script it names is not an untracked module the run picked up)."""

from __future__ import annotations

from pytest_reb import Run
from pytest_reb.pyramid.run_integrity import _named

REPO = "/data/project/repo"


def test_the_scripts_a_run_names() -> None:
    run = Run(["{python}", "workers.py", "--steps", "2", "{repo}/tools/launch.py",
               f"{REPO}/other.py", "/usr/bin/env", "-c", "configs/x.yaml"],
              entrypoint="./train.py", timeout=60)
    named = set(_named(run, REPO))
    assert {"workers.py", "tools/launch.py", "other.py", "train.py", "configs/x.yaml"} <= named
    assert not any(n.startswith(("/", "-", "{")) for n in named)
