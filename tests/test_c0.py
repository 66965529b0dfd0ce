"""C0: target selection, counting, pyright's JSON and binding, and the tier end to end.

Three layers.  Pure functions on small trees and hand-written pyright output;
the tier for real on this machine (``LocalTarget``, the host's node and
pyright, a bare venv as the environment under test), which needs no Docker;
and the tier on the demo images through pytest itself, where the missing-dep
image must show exactly ``yaml`` missing and the environment must be left
byte-for-byte as it was.
"""

from __future__ import annotations

import base64
import gzip
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.repomodules import write_tree as tree

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.pyramid.c0_imports import (
    _question,
    imported_names,
    imports_total,
    probe,
    top_level_imports,
)
from pytest_reb.pyramid.c0_pyright import (
    PINNED_RULES,
    Selection,
    binding_problem,
    import_dirs,
    missing_imports,
    parse_jsonc,
    pyright_config,
    search_paths,
    select_targets,
    strict_missing,
)
from pytest_reb.pyramid.context import Context
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import ReportLoad, load_report
from pytest_reb.spec import OFFICIAL_REPORT_PATH, Repo
from pytest_reb.targets import DockerTarget, LocalTarget, Target, image_file

ROOT = Path(__file__).resolve().parent.parent
DEMO_SOURCE = ROOT / "demo" / "tinynet"
ENV_PYTHON = "/opt/envs/tinynet/bin/python"




def entries(*items: tuple[str, bool, bool, bool]) -> list[dict[str, Any]]:
    """Survey entries: (name, is_dir, has_py, has_init)."""
    return [{"name": n, "dir": d, "py": p, "init": i} for n, d, p, i in items]


# --------------------------------------------------------------------------- counting


def test_top_level_imports_counts_absolute_imports_by_first_component() -> None:
    source = """
        import os, os.path
        import torch.nn as nn
        from yaml import safe_load
        from . import sibling
        from .pkg.mod import thing
        from ..up import other
        def f():
            import cv2.dnn
            from numpy.linalg import norm
    """
    assert top_level_imports(textwrap.dedent(source)) == {"os", "torch", "yaml", "cv2", "numpy"}


def test_a_file_that_does_not_parse_counts_nothing() -> None:
    assert top_level_imports("import os\nprint 'python 2'\n") == set()
    assert top_level_imports("import os\x00") == set()


def test_imported_names_skips_tool_venv_and_output_dirs(tmp_path: Path) -> None:
    tree(tmp_path, {
        "train.py": "import torch\nfrom mypkg import x\n",
        "mypkg/__init__.py": "from .core import y\nimport numpy\n",
        "mypkg/deep/build/gen.py": "import in_a_build_dir\n",  # build/ anywhere is skipped
        "venv/lib/site.py": "import venv_only\n",
        ".venv/x.py": "import dotvenv_only\n",
        "build/lib/x.py": "import build_only\n",
        "dist/x.py": "import dist_only\n",
        "benchmark_scripts/probe.py": "import bench_only\n",
        "benchmark_assets/cache/x.py": "import assets_only\n",
        "build_output/x.py": "import output_only\n",
        "node_modules/x.py": "import node_only\n",
        "notes.txt": "import not_python\n",
        "scripts/venv.py": "import a_file_named_venv_counts\n",
    })
    assert imported_names(tmp_path) == {"torch", "mypkg", "numpy", "a_file_named_venv_counts"}
    assert imports_total(tmp_path) == 4


def test_imports_total_with_a_commit_counts_tracked_files_only(tmp_path: Path) -> None:
    tree(tmp_path, {"a.py": "import tracked\n"})
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "a.py"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "a"], cwd=tmp_path, check=True)
    tree(tmp_path, {"b.py": "import untracked\n"})
    assert imported_names(tmp_path, commit="HEAD") == {"tracked"}
    assert imported_names(tmp_path) == {"tracked", "untracked"}


def test_the_demo_modules_denominator_is_the_official_count() -> None:
    import runpy

    repo = runpy.run_path(str(ROOT / "demo" / "test_demo__tinynet.py"))["repo"]
    assert imports_total(DEMO_SOURCE) == repo.imports_total


# --------------------------------------------------------------------------- targets


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


# --------------------------------------------------------------------------- pyright output


def diag(message: str, rule: str | None, file: str = "/r/a.py", line: int = 0) -> dict[str, Any]:
    d: dict[str, Any] = {"file": file, "severity": "error", "message": message,
                         "range": {"start": {"line": line, "character": 7},
                                   "end": {"line": line, "character": 12}}}
    if rule is not None:
        d["rule"] = rule
    return d


PYRIGHT_JSON: dict[str, Any] = {
    "version": "1.1.414", "time": "1795947639973",
    "generalDiagnostics": [
        diag('Import "torch.nn" could not be resolved', "reportMissingImports", line=3),
        diag('Import "torch" could not be resolved', "reportMissingImports", "/r/b.py"),
        diag('Import "cv2" could not be resolved', "reportMissingImports", "/r/c.py", 9),
        diag('Import ".sibling" could not be resolved', "reportMissingImports"),
        diag('Import "yaml" could not be resolved from source', "reportMissingModuleSource",
             line=5),
        diag('Import "six.moves" could not be resolved from source', "reportMissingModuleSource"),
        diag('"x" is not a known attribute of module "torch"', "reportAttributeAccessIssue"),
        diag("Expected expression", None),
    ],
    "summary": {"filesAnalyzed": 3, "errorCount": 8, "warningCount": 0,
                "informationCount": 0, "timeInSec": 0.5},
}


def test_missing_counts_top_level_names_of_the_missing_import_rule_only() -> None:
    assert missing_imports(PYRIGHT_JSON) == {"cv2": "/r/c.py:10", "torch": "/r/a.py:4"}


def test_strict_adds_stub_only_names_unless_installed() -> None:
    assert list(strict_missing(PYRIGHT_JSON, present=["six"])) == ["cv2", "torch", "yaml"]
    assert list(strict_missing(PYRIGHT_JSON, present=[])) == ["cv2", "six", "torch", "yaml"]


def test_missing_tolerates_odd_json() -> None:
    assert missing_imports({}) == {}
    assert missing_imports({"generalDiagnostics": ["x", {"rule": "reportMissingImports"}]}) == {}


VERBOSE = """\
Loading configuration file at /tmp/reb-c0-ab/binding.json
Setting pythonPath for service "<default>": "/opt/envs/tinynet/bin/python"
Assuming Python version 3.11.2.final.0
Execution environment: file:///opt/envs/tinynet/bin/python
  Extra paths:
    (none)
  Python version: 3.11.2.final.0
  Python platform: Linux
  Search paths:
    /opt/reb/pyright/dist/typeshed-fallback/stdlib
    /data/project/repo
    /tmp/reb-c0-ab/typings
    /opt/reb/pyright/dist/typeshed-fallback/stubs/...
    /usr/lib/python3.11
    /usr/lib/python3.11/lib-dynload
    /opt/envs/tinynet/lib/python3.11/site-packages/
Found 1 source file
"""
SYS_PATH = [["", True], ["/usr/lib/python311.zip", False], ["/usr/lib/python3.11", True],
            ["/usr/lib/python3.11/lib-dynload", True],
            ["/opt/envs/tinynet/lib/python3.11/site-packages", True]]


def test_search_paths_are_read_from_the_verbose_block() -> None:
    paths = search_paths(VERBOSE)
    assert paths[1:3] == ["/data/project/repo", "/tmp/reb-c0-ab/typings"]
    assert paths[-1] == "/opt/envs/tinynet/lib/python3.11/site-packages"
    assert search_paths("no block here\n") == []


def test_bound_when_every_import_dir_of_the_interpreter_is_searched() -> None:
    assert import_dirs(SYS_PATH) == ["/usr/lib/python3.11", "/usr/lib/python3.11/lib-dynload",
                                     "/opt/envs/tinynet/lib/python3.11/site-packages"]
    assert binding_problem(search_paths(VERBOSE), SYS_PATH, VERBOSE) is None


def test_unbound_names_what_pyright_used_instead() -> None:
    other = VERBOSE.replace("/opt/envs/tinynet/lib/python3.11/site-packages/",
                            "/usr/local/lib/python3.11/dist-packages")
    problem = binding_problem(search_paths(other), SYS_PATH, other,
                              own=("/data/project/repo", "/tmp/reb-c0-ab"))
    assert problem is not None
    assert "lack /opt/envs/tinynet/lib/python3.11/site-packages" in problem
    assert "/usr/local/lib/python3.11/dist-packages" in problem
    typeshed_only = "  Search paths:\n    /opt/reb/pyright/dist/typeshed-fallback/stdlib\n"
    problem = binding_problem(search_paths(typeshed_only), SYS_PATH,
                              typeshed_only + "Unable to get Python version from interpreter\n")
    assert problem is not None and "only its bundled typeshed" in problem
    assert "Unable to get Python version" in problem
    assert binding_problem(["/x"], [["", True]], "") is not None  # nothing to show: not bound


# --------------------------------------------------------------------------- the tier, locally


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv with nothing installed: the environment under test for local runs."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def local_ctx(repo: Path, python: str | None, *, compat: bool = False, total: int = 0,
              target: Target | None = None, report: ReportLoad | None = None,
              counts_none: str = "") -> Context:
    local = target or LocalTarget(gpus=[])
    return Context(repo=Repo("t/local", commit="0" * 40, imports_total=total,
                             c0_official_counts_none=counts_none),
                   target_name="local://", connect=lambda: local,
                   read_report=lambda _: report or ReportLoad("none", category="missing_report",
                                                            message="no report at x"),
                   options=RebOptions(python=python, repo_dir=str(repo), compat=compat))


SAMPLE = {
    "train.py": "import os\nimport yaml\nfrom pkg.model import Net\n"
                "import definitely_absent_xyz.sub\n",
    "pkg/__init__.py": "from .model import Net\n",
    "pkg/model.py": "import json\nimport definitely_absent_xyz\n",
    "tests/test_model.py": "import pkg\nfrom six.moves import range\n",
}


def listing(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(root.rglob("*"))}


def test_local_strict_lists_missing_and_stub_only_names(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    before = listing(repo)
    o = probe(local_ctx(repo, bare_python, total=imports_total(repo)))
    assert (o.status, o.category, o.strict, o.compat) == ("failed", "deps", False, True)
    ev = o.evidence
    assert ev["missing"] == ["definitely_absent_xyz", "six", "yaml"]
    assert ev["missing_official"] == ["definitely_absent_xyz"]
    assert ev["missing_count"] == 3 and ev["imports_total"] == 6 and ev["figure"] == "3/6"
    assert ev["bound"] is True and ev["targets"] == ["pkg", "tests", "train.py"]
    assert ev["files_analyzed"] == 4 and ev["pyright_version"]
    assert ev["missing_where"]["yaml"].endswith("train.py:2")
    assert o.message == ("3 of 6 imports unresolved: definitely_absent_xyz, six, yaml; "
                         "pyright analysed 4 files")
    assert listing(repo) == before  # nothing written into the checkout
    # its own scratch folder is gone (others' may exist: tests run in parallel)
    assert o.evidence["scratch"].startswith("/tmp/reb-c0-")
    assert not Path(o.evidence["scratch"]).exists()


def test_the_hint_names_what_the_environment_metadata_says(tmp_path: Path,
                                                           bare_python: str) -> None:
    """The driver asks the interpreter's metadata about the names that may be missing, in
    the analysis's own exec: a name an installed distribution provides is hinted by it."""
    site = next(Path(bare_python).parents[1].glob("lib/python*/site-packages"))
    (site / "yaml_stubs_only-1.0.dist-info").mkdir()
    (site / "yaml_stubs_only-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: yaml-stubs-only\nVersion: 1.0\n")
    (site / "yaml_stubs_only-1.0.dist-info" / "top_level.txt").write_text("yaml\n")
    try:
        repo = tree(tmp_path / "repo", {"train.py": "import yaml\n"})
        o = probe(local_ctx(repo, bare_python, total=1))
    finally:
        shutil.rmtree(site / "yaml_stubs_only-1.0.dist-info")
    assert o.evidence["missing"] == ["yaml"]
    assert "install yaml-stubs-only into" in o.diagnosis[0]["hint"]


def test_local_compat_counts_the_official_way_and_passes(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, bare_python, compat=True, total=6))
    assert (o.status, o.category, o.strict, o.compat) == ("passed", None, False, True)
    assert o.evidence["missing"] == ["definitely_absent_xyz"] and o.evidence["missing_count"] == 1


def test_a_bundle_that_counts_nothing_gives_compat_its_zero_and_strict_the_names(
        tmp_path: Path, bare_python: str) -> None:
    """Four official bundles' name regex matches no pyright message (docs/real-runs.md):
    their official count is 0 on any environment, so compat's is too; strict is unchanged."""
    repo = tree(tmp_path / "repo", SAMPLE)
    why = "its regex matches no pyright message"
    o = probe(local_ctx(repo, bare_python, compat=True, total=6, counts_none=why))
    assert (o.status, o.compat) == ("passed", True)
    assert o.evidence["missing_count"] == 0 and o.evidence["missing_official"] == []
    assert o.evidence["missing_by_the_rule"] == ["definitely_absent_xyz"]
    assert o.evidence["official_counts_none"] == why
    o = probe(local_ctx(repo, bare_python, total=6, counts_none=why))
    assert o.evidence["missing"] == ["definitely_absent_xyz", "six", "yaml"] and not o.strict


def test_an_installed_package_is_not_missing(tmp_path: Path, bare_python: str) -> None:
    """The host's own interpreter has PyYAML and six: only the absent name remains."""
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, sys.executable, total=6))
    assert o.evidence["missing"] == ["definitely_absent_xyz"]


def test_zero_missing_passes_both_verdicts(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {"src/lib/__init__.py": "import json\nfrom lib import x\n",
                                    "src/lib/x.py": "", "tests/t.py": "import lib\n"})
    o = probe(local_ctx(repo, bare_python, total=2))
    assert (o.status, o.strict, o.compat) == ("passed", True, True), o.message
    assert o.evidence["targets"] == ["src", "tests"] and o.evidence["missing_count"] == 0
    assert o.message.startswith("0 of 2 imports unresolved; pyright ")


def test_the_repository_config_cannot_hide_missing_imports(tmp_path: Path,
                                                           bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {
        "pyrightconfig.json": '{"include": ["lib"], "reportMissingImports": "none",\n'
                              ' "typeCheckingMode": "strict", "venvPath": ".", "venv": "fake",}',
        "lib/a.py": "import absent_one\n", "other/b.py": "import absent_two\n",
        "fake/lib/python3.11/site-packages/absent_one/__init__.py": "",
    })
    o = probe(local_ctx(repo, bare_python, total=2))
    assert o.evidence["selection"] == "pyrightconfig.json" and o.evidence["targets"] == ["lib"]
    assert o.evidence["missing"] == ["absent_one"] and o.evidence["bound"] is True


def test_a_pyproject_pyright_table_chooses_targets_only(tmp_path: Path, bare_python: str) -> None:
    repo = tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = 'x'\n\n[tool.pyright]\ninclude = ['src']\n"
                          "reportMissingImports = 'none'\n",
        "src/pk/__init__.py": "import gone_a\n", "other/x.py": "import gone_b\n",
    })
    o = probe(local_ctx(repo, bare_python, total=2))
    assert o.evidence["selection"] == "pyproject.toml" and o.evidence["targets"] == ["src"]
    assert "extends" not in o.evidence["config"]
    assert o.evidence["missing"] == ["gone_a"]


def test_hundreds_of_missing_names_survive_the_output_limit(tmp_path: Path,
                                                            bare_python: str) -> None:
    """More than fits in 64 KiB as diagnostics: the driver sends names only, and all arrive."""
    names = [f"missing_module_with_a_long_name_{i:04d}" for i in range(400)]
    repo = tree(tmp_path / "repo", {
        f"package_with_a_long_name_{j}/module_with_a_long_name.py":
            "".join(f"import {n}.sub.deeper\n" for n in names[j::4]) for j in range(4)})
    o = probe(local_ctx(repo, bare_python, total=400))
    assert o.evidence["diagnostics"].get("compact") is True
    assert "truncated" not in o.evidence["diagnostics"]
    assert o.evidence["missing_count"] == 400 and o.evidence["missing"] == sorted(names)


def test_a_relative_interpreter_is_not_bound(tmp_path: Path) -> None:
    """``python3`` runs from PATH, but pyright cannot use it: a failure, never a silent pass."""
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, "python3", total=6))
    assert (o.status, o.category, o.strict) == ("failed", "pyright_wrong_interpreter", False)
    assert "only its bundled typeshed" in o.message and o.evidence["bound"] is False
    assert o.evidence["missing_count"] is None  # a count from no environment is no count
    compat = probe(local_ctx(repo, "python3", total=6, compat=True))
    assert (compat.status, compat.evidence["missing_count"]) == ("passed", 1)


def test_an_interpreter_that_does_not_exist(tmp_path: Path) -> None:
    repo = tree(tmp_path / "repo", SAMPLE)
    o = probe(local_ctx(repo, "/nonexistent/bin/python", total=6))
    assert (o.status, o.category, o.strict, o.compat) == (
        "failed", "entrypoint_not_found", False, False)
    assert o.evidence["missing_count"] is None and "/nonexistent/bin/python" in o.message
    compat = probe(local_ctx(repo, "/nonexistent/bin/python", total=6, compat=True))
    assert compat.status == "failed"
    assert compat.evidence["missing_count"] == 0
    assert compat.evidence["counted_as"] == "official: failed run = 0 missing"


def test_no_report_and_no_override_is_missing_report(tmp_path: Path) -> None:
    o = probe(local_ctx(tmp_path, None))
    assert (o.status, o.category) == ("failed", "missing_report")
    assert o.message == "no report at x" and o.evidence["missing_count"] is None


def test_no_checkout_and_an_empty_checkout(tmp_path: Path, bare_python: str) -> None:
    o = probe(local_ctx(tmp_path / "absent", bare_python))
    assert (o.category, o.strict) == ("entrypoint_not_found", False)
    assert "no checkout at" in o.message
    o = probe(local_ctx(tree(tmp_path / "empty", {"README.md": "x"}), bare_python))
    assert o.category == "entrypoint_not_found" and "nothing for pyright" in o.message


def test_an_interpreter_that_lies_about_itself_is_not_bound(tmp_path: Path) -> None:
    """Nonsense in place of sys.path and version: a failure with a reason, not a crash."""
    liar = tmp_path / "python"
    liar.write_text("#!/bin/sh\necho 'REB_C0_PY {\"version\": 3, \"path\": "
                    "[1, \"/usr\", [\"/tmp\", \"yes\"], [\"/\", true, 3]]}'\n")
    liar.chmod(0o755)
    o = probe(local_ctx(tree(tmp_path / "repo", SAMPLE), str(liar)))
    assert (o.status, o.category) == ("failed", "pyright_wrong_interpreter")
    assert "no import directories" in o.message
    assert "pythonVersion" not in o.evidence["config"]


def test_an_interpreter_that_hangs_is_a_timeout(tmp_path: Path) -> None:
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nsleep 30\n")
    hang.chmod(0o755)
    ctx = local_ctx(tree(tmp_path / "repo", SAMPLE), str(hang))
    ctx.target.timeout_scale = 0.02  # 2.4 s for the interpreter
    o = probe(ctx)
    assert (o.status, o.category) == ("failed", "timeout") and "did not answer" in o.message


# --------------------------------------------------------------------------- containers


MODULE = """
from pytest_reb import Repo, Run

repo = Repo("reb/tinynet", commit="{commit}", imports_total={total},
            cpu=Run(["{{python}}", "train.py", "--device", "cpu", "--steps", "2",
                     "--out", "{{out}}"], timeout=120))
"""


def run_c0(pytester: pytest.Pytester, image: str, commit: str, *args: str) -> tuple[
        pytest.RunResult, Outcome]:
    """``pytest --reb-image IMAGE -m c0`` on a one-repository module; the C0 outcome logged."""
    pytester.makepyfile(test_tinynet=MODULE.format(commit=commit,
                                                   total=imports_total(DEMO_SOURCE)))
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"), "-m", "c0",
                                "-p", "no:cacheprovider", *args)
    logs = list((pytester.path / "reports").glob("*/outcomes.jsonl"))
    assert len(logs) == 1, result.stdout.str()
    outcomes = {o.tier: o for o in OutcomeLog(logs[0])}
    assert set(outcomes) == {"c0"}, outcomes
    return result, outcomes["c0"]


@pytest.mark.container
def test_missing_dep_image_lists_exactly_yaml(pytester: pytest.Pytester, missing_dep_image: str,
                                              demo_commit: str) -> None:
    result, o = run_c0(pytester, missing_dep_image, demo_commit)
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict, o.compat) == ("deps", False, True)
    assert o.evidence["missing"] == ["yaml"] and o.evidence["missing_count"] == 1
    assert o.message == (f"1 of {imports_total(DEMO_SOURCE)} imports unresolved: yaml; "
                         "pyright analysed 5 of 5 tracked Python files")
    assert o.evidence["bound"] is True and o.evidence["python"] == ENV_PYTHON
    assert "/opt/envs/tinynet/lib/python3.11/site-packages" in o.evidence["search_paths"]
    assert o.evidence["targets"] == ["tinynet", "train.py"]
    # PyYAML has stubs in pyright's typeshed: the official count never sees it missing.
    assert o.evidence["missing_official"] == []
    result.stdout.fnmatch_lines(["*C0 deps: 1 of * imports unresolved: yaml*"])


@pytest.mark.container
def test_missing_dep_image_in_compat_mode_counts_like_the_official(
        pytester: pytest.Pytester, missing_dep_image: str, demo_commit: str) -> None:
    result, o = run_c0(pytester, missing_dep_image, demo_commit, "--reb-compat")
    result.assert_outcomes(passed=1)
    assert (o.status, o.strict, o.compat) == ("passed", False, True)
    assert o.evidence["missing"] == [] and o.evidence["missing_strict"] == ["yaml"]


@pytest.mark.container
def test_good_image_has_nothing_missing(pytester: pytest.Pytester, demo_image: str,
                                        demo_commit: str) -> None:
    result, o = run_c0(pytester, demo_image, demo_commit)
    result.assert_outcomes(passed=1)
    assert (o.status, o.strict, o.compat) == ("passed", True, True)
    assert o.evidence["missing"] == [] and o.evidence["missing_count"] == 0
    assert o.evidence["files_analyzed"] == 5 and o.evidence["bound"] is True


@pytest.fixture
def wrong_report(docker_client: Any, demo_image: str, tmp_path: Path) -> Path:
    """The image's own report, naming an interpreter that does not exist."""
    raw = image_file(docker_client, demo_image, OFFICIAL_REPORT_PATH)
    assert raw is not None
    report = json.loads(raw)
    report["python_path"] = "/opt/envs/gone/bin/python"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(report))
    return path


@pytest.mark.container
def test_a_report_naming_a_wrong_interpreter_never_passes(
        pytester: pytest.Pytester, demo_image: str, demo_commit: str, wrong_report: Path) -> None:
    result, o = run_c0(pytester, demo_image, demo_commit, "--agent-report", str(wrong_report))
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict, o.compat) == ("entrypoint_not_found", False, False)
    assert "/opt/envs/gone/bin/python" in o.message and o.evidence["missing_count"] is None


@pytest.mark.container
def test_an_interpreter_pyright_cannot_use_is_caught(pytester: pytest.Pytester, demo_image: str,
                                                     demo_commit: str) -> None:
    """``--reb-python python3``: runs from PATH, but pyright silently ignores it."""
    result, o = run_c0(pytester, demo_image, demo_commit, "--reb-python", "python3")
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict) == ("pyright_wrong_interpreter", False)
    assert "only its bundled typeshed" in o.message


#: (path, size, sha256) of every file, (path, "dir"), (path, "->target") under the roots,
#: digested in the target (the listing of torch alone is megabytes); per-root digests say where.
LISTING = r"""
import hashlib, json, os, sys
out = {}
for root in sys.argv[1:]:
    rows = []
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            p = os.path.join(base, name)
            if os.path.islink(p):
                rows.append(f"{p}\t->{os.readlink(p)}")
            elif os.path.isdir(p):
                rows.append(f"{p}\tdir")
            else:
                with open(p, "rb") as fh:
                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
                rows.append(f"{p}\t{os.path.getsize(p)}\t{digest}")
    out[root] = [len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()]
print(json.dumps(out))
"""


@pytest.fixture
def env_target(missing_dep_image: str) -> Iterator[DockerTarget]:
    target = DockerTarget(missing_dep_image, run_id="tests-c0", gpus=[])
    yield target
    target.close()


def env_listing(target: DockerTarget, roots: list[str]) -> dict[str, list[Any]]:
    res = target.exec([ENV_PYTHON, "-I", "-S", "-B", "-c", LISTING, *roots], timeout=300)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _c0_of(target: DockerTarget, **kw: Any) -> Outcome:
    raw = target.read_file(OFFICIAL_REPORT_PATH)
    ctx = Context(repo=Repo("reb/tinynet", commit="0" * 40, imports_total=8),
                  target_name="missing-dep", connect=lambda: target,
                  read_report=lambda _: load_report(raw, source=OFFICIAL_REPORT_PATH), **kw)
    return probe(ctx)


@pytest.mark.container
def test_a_second_c0_of_the_image_reads_the_answer_kept_for_it(
        env_target: DockerTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's complete answers are kept by image id: the same verdict, no command run;
    an answer that is not complete (an interpreter that does not run) is never kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first, second = _c0_of(env_target), _c0_of(env_target)
    assert "cached" not in first.evidence and second.evidence["cached"] is True
    for o in (first, second):
        assert (o.status, o.category, o.strict, o.compat) == ("failed", "deps", False, True)
        assert o.evidence["missing"] == ["yaml"] and o.evidence["bound"] is True, o.message
    assert first.message == second.message
    # each run names its own scratch directory, in the search paths the kept answer gives
    assert first.evidence["scratch"] != second.evidence["scratch"]
    assert f"{second.evidence['scratch']}/reb-no-stubs" in second.evidence["search_paths"]
    assert second.duration == 0.0
    for _ in range(2):
        gone = _c0_of(env_target, options=RebOptions(python="/opt/envs/gone/bin/python"))
        assert gone.category == "entrypoint_not_found" and "cached" not in gone.evidence


def test_a_kept_answer_is_keyed_by_the_question_not_by_the_run() -> None:
    spec = {"scratch": "/tmp/reb-c0-aaaa", "python": "/p", "main_timeout_ms": 1,
            "files": {"c.json": {"gz": base64.b64encode(gzip.compress(
                b'{"root": "/tmp/reb-c0-aaaa"}')).decode()}, "b.py": ""}}
    other_run = {**spec, "scratch": "/tmp/reb-c0-bbbb", "main_timeout_ms": 9,
                 "files": {"c.json": '{"root": "/tmp/reb-c0-bbbb"}', "b.py": ""}}
    assert _question("analyse", spec) == _question("analyse", other_run)
    assert _question("analyse", spec) != _question("analyse", {**spec, "python": "/q"})
    assert _question("analyse", spec) != _question("survey", spec)


@pytest.mark.container
def test_c0_leaves_the_environment_byte_for_byte_unchanged(
        env_target: DockerTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing (path, size, sha256) of the interpreter's prefix, import dirs and the checkout,
    before and after C0 in the same container; then a planted change shows the listing sees it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # C0 runs, nothing kept is read
    info = env_target.exec([ENV_PYTHON, "-B", "-c", "import json, sys; print(json.dumps("
                            "[sys.prefix] + [p for p in sys.path if p.startswith('/')]))"],
                           timeout=60)
    roots = sorted(set(json.loads(info.stdout)) | {"/data/project/repo"})
    assert "/opt/envs/tinynet/lib/python3.11/site-packages" in roots
    assert "/usr/lib/python3.11/lib-dynload" in roots
    before = env_listing(env_target, roots)
    o = _c0_of(env_target)
    assert o.evidence["missing"] == ["yaml"], o.message
    assert "cached" not in o.evidence
    assert o.evidence["python"] == ENV_PYTHON  # from the image's report
    after = env_listing(env_target, roots)
    assert after == before
    left = env_target.exec(["sh", "-c", "ls -d /tmp/reb-c0-* 2>/dev/null || true"], timeout=30)
    assert left.stdout.strip() == ""
    # The control: one empty file planted in a (small) listed root changes its listing.
    small = "/usr/lib/python3.11/lib-dynload"
    assert env_target.exec(["touch", f"{small}/planted.pth"], timeout=30).exit_code == 0
    assert env_listing(env_target, [small])[small] != before[small]
