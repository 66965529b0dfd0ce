"""How C0 is decided (``rules/c0.decide``), over evidence records.

The recorded real runs (``tests/data/realruns``) kept each C0 outcome's counts;
rebuilt as the ``StaticEvidence`` their stage gathered, they must give the same
verdicts, category and message in both modes.  Hand-made rows add the strict
rules the real runs never met: an unbound pyright, an edited tree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.rules.c0 import StaticEvidence, decide, no_count
from pytest_reb.rules.decision import Mode

DATA = Path(__file__).parent / "data" / "realruns"
#: What a C0 message says of the analysis: files analysed, of how many tracked ones.
ANALYSED = re.compile(r"analysed (\d+|None)(?: of (\d+) tracked Python files| files)")
PASSED = re.compile(r"pyright (\S+) analysed .* bound to (\S+)$")
TARGETS = re.compile(r"\(targets \[(.*)\]\)$")


def rows() -> list[tuple[str, Mode, dict[str, Any]]]:
    out: list[tuple[str, Mode, dict[str, Any]]] = []
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        for mode in ("strict", "compat"):
            out += [(f"{path.stem}-{mode}", mode, o) for o in data[mode] if o["tier"] == "c0"]
    return out


def as_evidence(o: dict[str, Any]) -> StaticEvidence:
    """The record the stage gathered, rebuilt from the outcome's counts and message."""
    ev, message = o["evidence"], o["message"]
    analysed, tracked = ANALYSED.search(message).groups()  # type: ignore[union-attr]
    passed = PASSED.search(message)
    targets = TARGETS.search(message)
    return StaticEvidence(
        python=passed.group(2) if passed else "python", unbound=None, tree_problems=(),
        official=dict.fromkeys(ev["missing_official"], "x"),
        strict_missing=dict.fromkeys(ev["missing_strict"], "x"), total=ev["imports_total"],
        analysed=None if analysed == "None" else int(analysed),
        tracked=None if tracked is None else int(tracked),
        short=tracked is not None and analysed != tracked,
        pyright_version=passed.group(1) if passed else None,
        targets=[t.strip("'") for t in targets.group(1).split(", ")] if targets else [])


ROWS = rows()


@pytest.mark.parametrize(("mode", "o"), [(m, o) for _, m, o in ROWS], ids=[i for i, _, _ in ROWS])
def test_recorded_runs_decide_as_recorded(mode: Mode, o: dict[str, Any]) -> None:
    got = decide(as_evidence(o), mode)
    assert (got.strict, got.compat, got.category) == (o["strict"], o["compat"], o["category"])
    assert ("passed" if got.passed else "failed") == o["status"]
    # known fakes found in the target are added to a failure afterwards, for every tier
    assert got.message == o["message"].split("; known fakes in the target")[0]


def test_there_are_rows_of_each_verdict() -> None:
    assert {(o["status"], o["category"]) for _, _, o in ROWS} >= {
        ("passed", None), ("failed", "deps"), ("failed", "pyright_failed")}


CLEAN = StaticEvidence(python="/env/bin/python", unbound=None, tree_problems=(), official={},
                       strict_missing={}, total=10, analysed=4, tracked=4, short=False,
                       pyright_version="1.1.414", targets=["."])


@pytest.mark.parametrize(("changes", "strict_category", "compat_passes"), [
    ({}, None, True),
    ({"unbound": "its search paths miss /env/lib"}, "pyright_wrong_interpreter", True),
    ({"tree_problems": ("modified a.py",)}, "integrity", True),
    ({"strict_missing": {"torch": "stub only"}}, "deps", True),
    ({"analysed": 0}, "pyright_failed", True),
    ({"short": True}, "pyright_failed", True),
], ids=["clean", "unbound", "edited-tree", "stub-only", "nothing-analysed", "short"])
def test_strict_rules_in_their_order(changes: dict[str, Any], strict_category: str | None,
                                     compat_passes: bool) -> None:
    ev = StaticEvidence(**{**CLEAN.__dict__, **changes})
    strict = decide(ev, "strict")
    assert strict.passed is (strict_category is None)
    assert strict.category == strict_category
    assert decide(ev, "compat").passed is compat_passes


def test_the_binding_is_blamed_before_the_tree_and_the_names() -> None:
    ev = StaticEvidence(**{**CLEAN.__dict__, "unbound": "no search paths",
                           "tree_problems": ("modified a.py",), "strict_missing": {"x": "y"}})
    assert decide(ev, "strict").category == "pyright_wrong_interpreter"


def test_a_run_without_a_count_fails_both() -> None:
    got = no_count("timeout", "pyright ran past 600s", "compat")
    assert (got.strict, got.compat, got.passed, got.category) == (False, False, False, "timeout")
