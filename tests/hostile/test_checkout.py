"""A target whose checkout is not the module's pinned commit is caught before anything is judged.

- the 44-row matrix: every module of ``repos/`` forced onto the demo image (its
  checkout is tinynet): every row refused at collection (``misconfigured``), one
  line each naming both commits, nothing passed, nothing started;
- a module forced onto a checkout pinned by another module: the refusal names it;
- a checkout at another commit of the same repository, without and with
  ``--reb-allow-commit-mismatch`` (a fork, judged against its own commit);
- a leaf script with a missing import deleted from the checkout: C0 fails
  strict ``integrity`` naming the deletion (it passed "0 of 9" before);
- an untracked ``pyrightconfig.json`` whose ``ignore`` hides the missing import;
- integrity switched off (issue 14): the pinned commit's object deleted, or
  ``.git`` a ``gitdir:`` file to nowhere, and ``train.py`` made to exit early:
  strict C1 fails ``integrity_unverifiable`` (it passed before).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.checkouts import Checkout, checkout_image
from support.hostile import run_reb
from support.images import demo_module, module_text

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[2]
LEAF = "tools/export_onnx.py"


def _add_leaf(repo: Path) -> None:
    (repo / "tools").mkdir()
    (repo / LEAF).write_text('"""Export the model (a leaf: nothing imports it)."""\n'
                             "import onnx_absent_exporter\n")


@pytest.fixture(scope="module")
def fork(docker_client: Any, demo_image: str) -> Checkout:
    """The demo repository one commit later (a leaf script added), checked out intact."""
    return checkout_image(docker_client, demo_image, "later-commit", _add_leaf)


@pytest.fixture(scope="module")
def pruned(docker_client: Any, demo_image: str) -> Checkout:
    """That later commit, with the leaf script (and its missing import) deleted by the agent."""
    return checkout_image(docker_client, demo_image, "leaf-deleted", _add_leaf,
                          after=lambda repo: (repo / LEAF).unlink())


def test_the_44_row_matrix_of_the_demo_image_is_refused_row_by_row(
        pytester: pytest.Pytester, demo_image: str, image_commit: str) -> None:
    found = (re.search(r'Repo\(\s*"([^"]+)"', p.read_text())
             for p in (ROOT / "repos").glob("test_*.py"))
    names = sorted(m.group(1) for m in found if m)
    assert len(names) == 44
    matrix = pytester.path / "runs.toml"
    matrix.write_text("".join(f'[[target]]\nrepo = "{n}"\nimage = "{demo_image}"\n\n'
                              for n in names))
    result = pytester.runpytest(str(ROOT / "repos"), "--rootdir", str(ROOT),
                                "--reb-matrix", str(matrix), "-p", "no:cacheprovider",
                                "--reb-outdir", str(pytester.path / "reports"))
    [run_dir] = (pytester.path / "reports").glob("*/")
    outcomes = [json.loads(line) for line in (run_dir / "outcomes.jsonl").open()]
    assert {o["repo"] for o in outcomes} == set(names)
    assert not [o for o in outcomes if o["status"] == "passed"]
    assert {o["category"] for o in outcomes} == {"misconfigured"}
    assert {o["integrity"]["status"] for o in outcomes} == {"misconfigured"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["integrity"] == {"misconfigured": 44}
    assert all(t["integrity"]["head"] == image_commit for t in summary["targets"])
    section = result.outlines[result.outlines.index(next(
        line for line in result.outlines if "reb integrity" in line)) + 1:]
    lines = [line for line in section if re.match(r"\S+/\S+ @ \S+: refused: checkout", line)]
    assert len(lines) == 44 and all(image_commit in line for line in lines)
    auto = next(line for line in lines if line.startswith("Auto1111SDK/Auto1111SDK @"))
    assert "not Auto1111SDK/Auto1111SDK's pinned" in auto and "no collected module" in auto
    print("\n".join(lines[:3]))
    assert not [line for line in result.outlines if "PASS" in line and "C0" in line]


def test_a_module_forced_onto_another_modules_checkout_is_refused_naming_it(
        pytester: pytest.Pytester, fork: Checkout) -> None:
    run = run_reb(pytester, fork.image, {
        "test_reb__tinynet": module_text("reb/tinynet", fork.base_commit),
        "test_reb__tinynet_fork": module_text("reb/tinynet-fork", fork.head)},
        "--reb-repo", "reb/tinynet", "-m", "c0")
    c0 = run["reb/tinynet|c0"]
    assert (c0.status, c0.category) == ("failed", "misconfigured")
    assert "it is the pinned commit of module reb/tinynet-fork" in c0.message
    assert fork.head in c0.message and fork.base_commit in c0.message
    assert "reb/tinynet-fork|c0" not in run.outcomes  # --reb-repo chose the other module


def test_another_commit_of_the_same_repository(pytester: pytest.Pytester,
                                               fork: Checkout) -> None:
    run = run_reb(pytester, fork.image, {"test_demo__tinynet": demo_module(fork.base_commit)},
                  "-m", "c0 or c1")
    for tier in ("c0", "c1"):
        o = run[tier]
        assert (o.status, o.category) == ("failed", "misconfigured"), o.message
        assert o.integrity is not None and o.integrity["head"] == fork.head
    run.result.stdout.fnmatch_lines([f"*refused: checkout is at commit {fork.head}, not "
                                     f"reb/tinynet's pinned {fork.base_commit}*"])


def test_a_fork_verified_on_purpose_carries_the_mismatch(pytester: pytest.Pytester,
                                                         fork: Checkout) -> None:
    run = run_reb(pytester, fork.image, {"test_demo__tinynet": demo_module(fork.base_commit)},
                  "-m", "c0 or c1", "--reb-allow-commit-mismatch")
    for tier in ("c0", "c1"):
        o = run[tier]
        assert o.integrity is not None and o.integrity["allowed_mismatch"] is True
        assert (o.integrity["status"], o.integrity["reference"]) == ("other_commit", fork.head)
    assert run["c1"].status == "passed", run["c1"].message
    # the fork's own tree is what C0 analysed: its leaf script too, with its missing import
    c0 = run["c0"]
    assert (c0.status, c0.category) == ("failed", "deps"), c0.message
    assert c0.evidence["missing"] == ["onnx_absent_exporter"]
    assert c0.evidence["analysed_of_tracked"] == "6/6"
    run.result.stdout.fnmatch_lines([f"*checkout is at commit {fork.head}, not the pinned "
                                     f"{fork.base_commit}: allowed by --reb-allow-commit-*"])


def test_a_deleted_leaf_script_with_a_missing_import_fails_strict_c0(
        pytester: pytest.Pytester, pruned: Checkout) -> None:
    module = module_text("reb/tinynet", pruned.head).replace("imports_total=8", "imports_total=9")
    run = run_reb(pytester, pruned.image, {"test_reb__tinynet": module}, "-m", "c0")
    c0 = run["c0"]
    assert (c0.status, c0.category) == ("failed", "integrity"), c0.message
    assert f"deleted {LEAF}" in c0.message
    assert "pyright analysed 5 of 6 tracked Python files" in c0.message
    assert c0.integrity is not None and c0.integrity["status"] == "edited"


def test_an_untracked_pyright_config_cannot_hide_a_missing_import(
        pytester: pytest.Pytester, docker_client: Any, missing_dep_image: str) -> None:
    hidden = checkout_image(
        docker_client, missing_dep_image, "pyright-ignore",
        lambda repo: (repo / "NOTES.md").write_text("notes\n"),
        after=lambda repo: (repo / "pyrightconfig.json").write_text(
            '{"ignore": ["tinynet/config.py"], "include": ["train.py"]}\n'))
    run = run_reb(pytester, hidden.image, {"test_reb__tinynet": module_text(
        "reb/tinynet", hidden.head)}, "-m", "c0")
    c0 = run["c0"]
    assert (c0.status, c0.category) == ("failed", "integrity"), c0.message
    assert "untracked pyrightconfig.json" in c0.message
    assert c0.evidence["missing"] == ["yaml"]
    assert c0.evidence["config"]["ignore"] == []


@pytest.mark.parametrize("case", ["commit-object-deleted", "gitdir-elsewhere"])
def test_integrity_cannot_be_switched_off(pytester: pytest.Pytester, case: str,
                                          hostile: Callable[[str], str],
                                          image_commit: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.category) == ("failed", "integrity_unverifiable"), c1.message
    assert c1.integrity is not None and c1.integrity["status"] == "unverifiable"
    assert c1.command is None  # judged before anything of the image ran
