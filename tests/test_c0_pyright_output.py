"""C0 reads pyright's JSON and verbose output: the missing names, and whether pyright used
the environment's interpreter (bound) or something else.
"""

from __future__ import annotations

from typing import Any

from pytest_reb.pyramid.c0_pyright import (
    binding_problem,
    import_dirs,
    missing_imports,
    search_paths,
    strict_missing,
)


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
