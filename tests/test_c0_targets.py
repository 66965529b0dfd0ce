"""C0's choice of what pyright analyses (the official heuristic, a repository's own config),
and the config pyright is given for it: the repository's settings cannot hide a file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from support.c0 import local_ctx
from support.repomodules import write_tree as tree

from pytest_reb.pyramid.c0_pyright import (
    PINNED_RULES,
    Selection,
    parse_jsonc,
    pyright_config,
    select_targets,
)


def entries(*items: tuple[str, bool, bool, bool]) -> list[dict[str, Any]]:
    """Survey entries: (name, is_dir, has_py, has_init)."""
    return [{"name": n, "dir": d, "py": p, "init": i} for n, d, p, i in items]


def test_pyrightconfig_wins_and_its_include_is_the_target() -> None:
    cfg = '{\n // comment, "include": ["no"]\n "include": ["lib", "tools"], /* x */\n}\n'
    sel = select_targets({"entries": entries(("src", True, True, False), ("lib", True, True, True)),
                          "pyrightconfig": {"text": cfg},
                          "pyproject_pyright": "[tool.pyright]\ninclude = ['other']\n"})
    assert sel == Selection("pyrightconfig.json", ["lib", "tools"], "pyrightconfig.json",
                            {"include": ["lib", "tools"]}, auto_src=True)


def test_pyproject_with_a_pyright_table_is_next() -> None:
    tables = "[tool.pyright]\nextraPaths = ['vendor']\n[tool.pyright.defineConstant]\nX = true\n"
    sel = select_targets({"entries": entries(("src", True, True, True)),
                          "pyproject_pyright": tables})
    assert sel is not None
    assert (sel.kind, sel.targets, sel.config_file) == ("pyproject.toml", ["."], "pyproject.toml")
    assert sel.settings == {"extraPaths": ["vendor"], "defineConstant": {"X": True}}
    assert not sel.auto_src  # src/ is a package itself: pyright does not add it as a root


def test_a_subtable_alone_is_not_a_pyright_project() -> None:
    sel = select_targets({"entries": entries(("pkg", True, True, True)),
                          "pyproject_pyright": "[tool.pyright.x]\na = 1\n"})
    assert sel is not None and sel.kind == "packages"


def test_src_layout_takes_src_and_tests() -> None:
    sel = select_targets({"entries": entries(
        ("src", True, False, False), ("tests", True, True, False), ("scripts", True, True, False),
        ("setup.py", False, False, False))})
    assert sel == Selection("src", ["src", "tests"], auto_src=True)


def test_package_dirs_and_top_level_scripts_without_excluded_dirs() -> None:
    sel = select_targets({"entries": entries(
        ("train.py", False, False, False), ("README.md", False, False, False),
        ("model", True, True, True), ("scripts", True, True, False),
        ("configs", True, False, False), ("venv", True, True, False), ("build", True, True, True),
        ("benchmark_scripts", True, True, False), (".hidden", True, True, True),
        ("nspkg", True, False, True))})
    assert sel == Selection("packages", ["model", "nspkg", "scripts", "train.py"])


def test_nothing_to_analyse() -> None:
    assert select_targets({"entries": entries(("README.md", False, False, False),
                                              ("data", True, False, False))}) is None
    assert select_targets({"entries": []}) is None


def test_an_unreadable_config_still_selects_it_but_assumes_no_keys() -> None:
    sel = select_targets({"entries": [], "pyrightconfig": {"text": "{ not json"}})
    assert sel is not None and sel.settings == {} and sel.targets == ["."]
    sel = select_targets({"entries": [], "pyrightconfig": {"text": "{}", "truncated": True}})
    assert sel is not None and sel.settings == {}


def test_parse_jsonc_keeps_comment_markers_inside_strings() -> None:
    text = '{"a": "http://x/*y*/", // c\n "b": [1, 2,], /* "c": 3 */ "d": "\\"//"}'
    assert parse_jsonc(text) == {"a": "http://x/*y*/", "b": [1, 2], "d": '"//'}
    assert parse_jsonc("[1]") is None


def test_survey_of_real_trees_through_the_driver(tmp_path: Path) -> None:
    """The in-target driver sees trees the way the selection expects (host node)."""
    from pytest_reb.pyramid import c0_imports

    repo = tree(tmp_path / "repo", {
        "src/pkg/__init__.py": "", "tests/test_x.py": "", "README.md": "",
        "pyproject.toml": "[project]\nname='x'\n\n[tool.pyright]\ninclude = ['src']\n"
                          "[tool.pyright.defineConstant]\nDEBUG = true\n\n[tool.ruff]\nx = 1\n",
    })
    ctx = local_ctx(repo, sys.executable)
    _, survey = c0_imports._driver(ctx, "survey", {
        "checkout": str(repo), "python": sys.executable, "snippet": c0_imports.SYS_PATH_SNIPPET,
        "pyright": ctx.target.tool(c0_imports.PYRIGHT), "timeout_ms": 60000}, 90)
    assert survey is not None and survey["pyright_exists"]
    names = {e["name"]: e for e in survey["checkout"]["entries"]}
    assert names["src"] == {"name": "src", "dir": True, "init": False, "py": False}
    assert names["tests"]["py"] and not names["README.md"]["dir"]
    assert "[tool.ruff]" not in survey["checkout"]["pyproject_pyright"]
    sel = select_targets(survey["checkout"])
    assert sel is not None and sel.kind == "pyproject.toml" and sel.targets == ["src"]


# --------------------------------------------------------------------------- config


def test_config_paths_are_relative_to_the_scratch_dir_and_rules_are_pinned() -> None:
    sel = Selection("packages", ["pkg", "train.py"], auto_src=True)
    cfg = pyright_config(sel, "/data/project/repo", "/tmp/reb-c0-ab", "3.11")
    assert cfg["include"] == ["../../data/project/repo/pkg", "../../data/project/repo/train.py"]
    assert cfg["executionEnvironments"] == [{"root": "../../data/project/repo",
                                             "extraPaths": ["../../data/project/repo/src"]}]
    assert "extends" not in cfg
    assert cfg["reportMissingImports"] == "error" and cfg["pythonPlatform"] == "Linux"
    assert cfg["venv"] == "" and cfg["pythonVersion"] == "3.11"


def test_a_repository_config_is_not_extended_nor_can_it_hide_a_file() -> None:
    """Only its include (the official targets) and extraPaths naming tracked dirs are used."""
    sel = Selection("pyrightconfig.json", ["lib"], "pyrightconfig.json",
                    {"include": ["lib"], "executionEnvironments": [{"root": "lib"}],
                     "ignore": ["lib"], "exclude": ["lib"], "stubPath": "fake",
                     "extraPaths": ["vendor", "/etc", "../x"],
                     "reportMissingImports": "none", "venv": "other"}, auto_src=True)
    cfg = pyright_config(sel, "/work/repo", "/tmp/reb-c0-ab", "3.10", tracked_dirs={"vendor"})
    assert "extends" not in cfg and cfg["include"] == ["../../work/repo/lib"]
    assert cfg["executionEnvironments"] == [{"root": "../../work/repo",
                                             "extraPaths": ["../../work/repo/vendor"]}]
    assert {k: cfg[k] for k in PINNED_RULES} == PINNED_RULES
    assert cfg["ignore"] == [] and "**/lib" not in cfg["exclude"] and cfg["extraPaths"] == []
    files = pyright_config(sel, "/work/repo", "/tmp/reb-c0-ab", "3.10", files=["lib/a.py"])
    assert files["include"] == ["../../work/repo/lib/a.py"]
    probe_cfg = pyright_config(sel, "/work/repo", "/tmp/reb-c0-ab", "3.10", include=["b.py"])
    assert probe_cfg["include"] == ["b.py"]
