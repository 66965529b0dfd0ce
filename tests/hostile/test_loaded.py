"""What a run loaded is what was checked: the kernel's report of every file the stage's
processes opened, each placed by the engine's layers (``rules/loaded.py``).

Every case makes the demo's C1 exit 0 with the success marker (or train on an edited
config), so the official rule passes it; strict must fail it ``integrity``, naming the
file (``loaded_cases.EXPECT``): installed files edited, resealed in their ``RECORD``,
swapped or made sourceless; untracked packages as bytecode, through a symlink, shadowing
an installed or the tracked module; tracked configs edited; edits undone at exit.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import run_reb
from support.images import demo_module
from support.loaded_cases import EXPECT

pytestmark = pytest.mark.container


@pytest.mark.parametrize("case", sorted(EXPECT))
def test_what_the_run_loaded_is_what_was_checked(pytester: pytest.Pytester,
                                                  hostile: Callable[[str], str],
                                                  image_commit: str, case: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert c1.strict is False, c1.message
    loaded = c1.evidence["loaded"]
    assert loaded["channel"] == "fanotify" and loaded["incomplete"] is None
    assert any(EXPECT[case] in line for line in loaded["refused"]), loaded["refused"]
    if c1.compat:  # the official pass: strict says why (the witness may say it first)
        assert c1.category in ("integrity", "entrypoint_not_run"), c1.message


def test_the_honest_demo_loads_only_checked_files(pytester: pytest.Pytester, demo_image: str,
                                                  image_commit: str) -> None:
    run = run_reb(pytester, demo_image, {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict, c1.compat) == ("passed", True, True), c1.message
    loaded = c1.evidence["loaded"]
    assert loaded["refused"] == [] and loaded["checked"] > 100, loaded
