"""``rules/loaded.py``: strict's decision on the files a stage loaded, row by row.

Rows are ``provenance.facts`` rows as the hostile images produce them (layer 0 is the
container's writable layer, 1.. the image's from the top).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_reb.rules.loaded import problem, refusals

SITE = "/opt/env/lib/python3.11/site-packages"
INSTALLED = {"where": "site", "listed": True, "dist": "pyyaml-6.0.4.dist-info",
             "hash": "h", "record_layer": 3, "agree": [3], "disagree": [], "unhashed": False}


def row(path: str, **facts: Any) -> dict[str, Any]:
    return {"path": path, "layer": 3, **facts}


CASES = [  # (row, words of the refusal, or None: passes)
    (row("/r/train.py", where="checkout", rel="train.py", tracked=True), None),
    (row("/r/configs/tiny.yaml", where="checkout", rel="configs/tiny.yaml", tracked=True),
     "configs/tiny.yaml, a tracked file that is not the pinned"),
    (row("/r/train.py", where="checkout", rel="train.py", tracked=True, layer=0),
     "train.py, a tracked file the container wrote"),
    (row("/r/torch.py", where="checkout", rel="torch.py", tracked=False),
     "torch.py, an untracked module of the checkout"),
    (row("/r/run_me.py", where="checkout", rel="run_me.py", tracked=False), None),  # named
    (row(f"{SITE}/yaml/__init__.py", **INSTALLED), None),
    (row(f"{SITE}/yaml/__init__.py", **{**INSTALLED, "agree": [], "disagree": [3]}),
     "does not match pyyaml-6.0.4.dist-info's RECORD"),
    (row(f"{SITE}/yaml/__init__.py", layer=1,
         **{**INSTALLED, "record_layer": 1, "agree": [1], "disagree": [3]}),
     "an earlier layer's RECORD (layer 3 from the top) does not"),
    (row(f"{SITE}/yaml/__init__.py", layer=3, **{**INSTALLED, "record_layer": 1,
                                                 "agree": [1]}),
     "a RECORD later than its files is no proof"),
    (row(f"{SITE}/yaml/__init__.py", layer=1, **{**INSTALLED, "agree": [3]}), None),  # touched
    (row(f"{SITE}/yaml/reader.pyc", where="site", listed=False),
     "which no installed distribution's RECORD lists"),
    (row(f"{SITE}/yaml/__init__.py", layer=0, in_image=True, this_stage=True, **INSTALLED),
     "a file of the image that the container changed"),
    (row("/tmp/torchinductor_root/ab/cab.py", where="elsewhere", layer=None, in_image=False,
         this_stage=True), None),
    (row("/root/.cache/x.py", where="elsewhere", layer=0, in_image=False, this_stage=False),
     "a module written in the container outside a checked stage"),
    (row("/opt/evil/config/__init__.py", where="elsewhere"),
     "a module outside the checkout, the distributions and the standard library"),
    (row("/usr/lib/python3.11/json/__init__.py", where="stdlib", os_layer=3), None),
    (row("/usr/lib/python3.11/json/__init__.py", where="stdlib", os_layer=3, layer=1),
     "a standard-library file that a layer above the interpreter's wrote"),
]


@pytest.mark.parametrize(("facts", "words"), CASES)
def test_each_kind_of_loaded_file(facts: dict[str, Any], words: str | None) -> None:
    record = {"channel": "fanotify", "opened": 1, "incomplete": None, "files": [facts]}
    got = refusals(record, edited=["configs/tiny.yaml"], named=["run_me.py"])
    if words is None:
        assert got == []
    else:
        [line] = got
        assert words in line and facts.get("rel", facts["path"]) in line


def test_no_channel_and_an_incomplete_record() -> None:
    assert problem(None) is None  # local://, ssh://, records made before the channel
    incomplete = {"incomplete": "the kernel's queue of open events overflowed", "files": []}
    assert "not known in full" in (problem(incomplete) or "")


def test_the_message_names_a_few_files_and_counts_the_rest() -> None:
    files = [row(f"/r/m{i}.py", where="checkout", rel=f"m{i}.py", tracked=False)
             for i in range(7)]
    said = problem({"incomplete": None, "files": files}) or ""
    assert said.startswith("the run loaded m0.py, an untracked module") and "(+3 more)" in said
