"""C0's pyright analyses the folders a module declares where its official bundle chose them itself.

ml-mdm's official pyright stage takes the pyproject roots of its mono-repo
(``find . -maxdepth 2 -name pyproject.toml``: ``ml-mdm`` and
``ml-mdm-matryoshka``), a heuristic of that bundle's own.  The common official
heuristic (``select_targets``) finds no ``src/``, no config and no Python file
at the top level there, and C0 failed ``entrypoint_not_found`` on the honest
batch-E image while the official stage analysed 42 files.  ``Repo.c0_targets``
names the bundle's choice; ``choose_targets`` takes it before the heuristic.
"""

from __future__ import annotations

from support.repomodules import module

from pytest_reb.pyramid.c0_pyright import choose_targets, select_targets

#: ml-mdm's top level as the C0 driver surveys it: folders without Python files of their own.
MONO_REPO = {"entries": [
    {"name": "ml-mdm", "dir": True, "py": False, "init": False},
    {"name": "ml-mdm-matryoshka", "dir": True, "py": False, "init": False},
    {"name": "docs", "dir": True, "py": False, "init": False},
    {"name": "README.md", "dir": False},
]}


def test_the_common_heuristic_finds_nothing_in_the_mono_repo() -> None:
    assert select_targets(MONO_REPO) is None


def test_declared_targets_are_analysed() -> None:
    sel = choose_targets(("ml-mdm", "ml-mdm-matryoshka"), MONO_REPO)
    assert sel is not None
    assert (sel.kind, sel.targets, sel.config_file) == (
        "declared", ["ml-mdm", "ml-mdm-matryoshka"], None)


def test_without_a_declaration_the_common_heuristic_decides() -> None:
    checkout = {"entries": [{"name": "src", "dir": True, "py": True, "init": False}]}
    assert choose_targets((), checkout) == select_targets(checkout)


def test_ml_mdm_declares_its_bundles_pyproject_roots() -> None:
    assert module("test_apple__ml_mdm").repo.c0_targets == ("ml-mdm", "ml-mdm-matryoshka")
