"""What C0 tells pyright and reads back: the targets, the config, and pyright's output.

Pure functions over text the C0 driver brings out of the target (the
checkout's top level, pyright's JSON and ``--verbose`` output), so each rule
of the official counting and of the strict binding check can be tested on
its own; ``c0_imports`` runs the driver and puts the pieces together.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Directories never analysed nor counted (the official exclusion set).
EXCLUDE_DIRS = frozenset({
    ".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv", "build", "dist",
    "node_modules", "build_output", "benchmark_assets", "benchmark_scripts",
})
MISSING_RULE = "reportMissingImports"
#: Resolved only to a stub (pyright bundles typeshed's third-party stubs): no source installed.
SOURCE_RULE = "reportMissingModuleSource"
#: The official extraction: the name up to the first dot or quote.
IMPORT_NAME = re.compile(r'Import "([^."]+)')
#: Rules every C0 run uses, whatever the repository's config says.
PINNED_RULES: dict[str, Any] = {
    "typeCheckingMode": "off",  # only imports count; "off" keeps the output small
    MISSING_RULE: "error",  # "off" would demote it to a warning
    SOURCE_RULE: "error",  # a warning by default, which --level error would drop
    "pythonPlatform": "Linux",
    "venv": "",  # a repository's venvPath/venv would override --pythonpath
}


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Selection:
    """What pyright analyses, chosen from the checkout's top level the official way.

    ``config_file`` is the repository's own config (extended, never edited);
    ``settings`` are its pyright keys as far as they could be read (``{}``
    when unreadable, so we add include and root rather than analyse nothing).
    """

    kind: str  # pyrightconfig.json | pyproject.toml | src | packages
    targets: list[str]
    config_file: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    auto_src: bool = False  # pyright would add src/ to the import roots by itself


def parse_jsonc(text: str) -> dict[str, Any] | None:
    """A pyright config: JSON with comments and trailing commas, or None."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    try:
        data = json.loads(re.sub(r",(\s*[}\]])", r"\1", "".join(out)))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _pyproject_settings(tables: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(tables)
    except tomllib.TOMLDecodeError:
        return {}
    settings = data.get("tool", {}).get("pyright", {})
    return settings if isinstance(settings, dict) else {}


def _project(config_file: str, settings: dict[str, Any], auto_src: bool) -> Selection:
    include = settings.get("include")
    targets = [str(t) for t in include] if isinstance(include, list) else ["."]
    return Selection(config_file, targets, config_file, settings, auto_src)


def select_targets(checkout: Mapping[str, Any]) -> Selection | None:
    """The official target heuristic over the driver's survey of the checkout's top level.

    ``pyrightconfig.json`` -> that project; else a ``[tool.pyright]`` table in
    ``pyproject.toml`` -> that project; else ``src`` (+ ``tests``); else the
    top-level directories holding ``.py`` files and the top-level ``.py``
    files.  None when there is nothing to analyse.
    """
    entries = {e["name"]: e for e in checkout.get("entries", [])}
    src = entries.get("src")
    auto_src = bool(src and src.get("dir") and not src.get("init"))
    cfg = checkout.get("pyrightconfig")
    if cfg is not None:
        settings = {} if cfg.get("truncated") else parse_jsonc(cfg.get("text", "")) or {}
        return _project("pyrightconfig.json", settings, auto_src)
    tables = checkout.get("pyproject_pyright")
    if tables and re.search(r"^\s*\[tool\.pyright\]\s*$", tables, re.MULTILINE):
        return _project("pyproject.toml", _pyproject_settings(tables), auto_src)
    if src and src.get("dir"):
        tests = entries.get("tests")
        return Selection("src", ["src", *(["tests"] if tests and tests.get("dir") else [])],
                         auto_src=auto_src)
    targets = [name for name, e in entries.items()
               if not name.startswith(".") and name not in EXCLUDE_DIRS
               and ((e.get("dir") and (e.get("py") or e.get("init")))
                    or (not e.get("dir") and name.endswith(".py")))]
    return Selection("packages", sorted(targets), auto_src=auto_src) if targets else None


def pyright_config(sel: Selection, checkout: str, scratch: str, python_version: str | None,
                   include: list[str] | None = None) -> dict[str, Any]:
    """The config C0 runs with, written to ``scratch``: the repository's, plus our pins.

    Paths are relative to ``scratch`` (pyright ignores absolute ``include``
    entries).  The execution root is the checkout, as when pyright runs from
    the repository root; ``include`` replaces the analysed files (the binding
    check analyses one empty file with otherwise the same config).  The
    Python version is the interpreter's.
    """
    def rel(p: str) -> str:
        return posixpath.relpath(posixpath.normpath(posixpath.join(checkout, p)), scratch)

    cfg: dict[str, Any] = {}
    if sel.config_file:
        cfg["extends"] = rel(sel.config_file)
    if include is not None:
        cfg["include"] = include
    elif "include" not in sel.settings:
        cfg["include"] = [rel(t) for t in sel.targets]
    if "executionEnvironments" not in sel.settings:
        env: dict[str, Any] = {"root": rel(".")}
        if (sel.auto_src and "extraPaths" not in sel.settings
                and sel.settings.get("autoSearchPaths", True) is not False):
            env["extraPaths"] = [rel("src")]
        cfg["executionEnvironments"] = [env]
    if python_version:  # else pyright asks the interpreter
        cfg["pythonVersion"] = python_version
    return {**cfg, **PINNED_RULES}


# --------------------------------------------------------------------------- reading pyright


def missing_imports(data: Mapping[str, Any], rule: str = MISSING_RULE) -> dict[str, str]:
    """Top-level name -> where it was first seen (``file:line``), from pyright JSON.

    With the default rule this is the official count: only
    ``reportMissingImports``, and ``import torch.nn`` and ``import torch``
    are one name.
    """
    found: dict[str, str] = {}
    for diag in data.get("generalDiagnostics") or []:
        if not isinstance(diag, dict) or diag.get("rule") != rule:
            continue
        m = IMPORT_NAME.search(str(diag.get("message", "")))
        if m and m.group(1) not in found:
            line = ((diag.get("range") or {}).get("start") or {}).get("line")
            where = str(diag.get("file") or "?")
            found[m.group(1)] = f"{where}:{line + 1}" if isinstance(line, int) else where
    return dict(sorted(found.items()))


def strict_missing(data: Mapping[str, Any], present: Iterable[str]) -> dict[str, str]:
    """The official missing names plus those pyright resolved only to a bundled stub.

    ``import yaml`` without PyYAML installed is not a ``reportMissingImports``
    error, because typeshed ships stubs for it: pyright says "could not be
    resolved from source" instead, and the official count never sees it.  A
    stub-only name counts unless its top level exists on the interpreter's
    path (``present``): ``six.moves`` is stub-only by nature while ``six`` is
    installed.
    """
    found = missing_imports(data)
    have = set(present)
    for name, where in missing_imports(data, SOURCE_RULE).items():
        if name not in have:
            found.setdefault(name, where)
    return dict(sorted(found.items()))


def search_paths(verbose: str) -> list[str]:
    """The directories of every "Search paths:" block of pyright's ``--verbose`` output."""
    paths: list[str] = []
    indent: int | None = None
    for line in verbose.splitlines():
        if line.strip() == "Search paths:":
            indent = len(line) - len(line.lstrip())
            continue
        if indent is not None:
            if line.strip() and len(line) - len(line.lstrip()) > indent:
                paths.append(posixpath.normpath(line.strip()))
                continue
            indent = None
    return list(dict.fromkeys(paths))


def import_dirs(sys_path: list[list[Any]]) -> list[str]:
    """The existing directories of an interpreter's ``sys.path`` (``[path, isdir]`` pairs)."""
    return [posixpath.normpath(item[0]) for item in sys_path
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
            and item[0] not in ("", "/") and item[1] is True]


def binding_problem(search: list[str], sys_path: list[list[Any]], verbose: str,
                    own: Iterable[str] = ()) -> str | None:
    """Why pyright was not resolving through the interpreter, or None when it was.

    Bound means: every existing directory on the interpreter's ``sys.path``
    (what it imports from at run time) is one of pyright's search paths.
    ``own`` are directories of the run itself (checkout, scratch), left out
    of the account of what pyright used instead.
    """
    expected = import_dirs(sys_path)
    if not expected:
        return "the interpreter reported no import directories, so the binding cannot be shown"
    absent = [p for p in expected if p not in search]
    if not absent:
        return None
    mine = tuple(posixpath.normpath(d) for d in own)
    used = [p for p in search if "typeshed-fallback" not in p and p not in expected
            and not any(p == d or p.startswith(d + "/") for d in mine)]
    said = " (pyright: Unable to get Python version from interpreter)" if (
        "Unable to get Python version" in verbose) else ""
    return (f"its search paths lack {', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''}"
            f"; it resolved through {', '.join(used) if used else 'only its bundled typeshed'}"
            f" instead{said}")
