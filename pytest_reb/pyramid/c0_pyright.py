"""What C0 tells pyright and reads back: the targets, the config, and pyright's output.

Pure functions over text the C0 driver brings out of the target (the
checkout's top level, pyright's JSON and ``--verbose`` output), so each rule
of the official counting and of the strict binding check can be tested on
its own; ``c0_imports`` runs the driver and puts the pieces together.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
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
    # what could hide a file or resolve a missing import is ours, never the checkout's
    "ignore": [],
    "exclude": [f"**/{d}" for d in sorted(EXCLUDE_DIRS)],
    "extraPaths": [],
    "stubPath": "reb-no-stubs",  # relative to the scratch directory, which has none
}


# --------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class Selection:
    """What pyright analyses, chosen from the checkout's top level the official way.

    ``config_file`` is the repository's own config; ``settings`` are its
    pyright keys as far as they could be read (``{}`` when unreadable).  Only
    its ``include`` (which files the official heuristic analyses) and its
    ``extraPaths`` (where they name a tracked directory) are used; nothing of
    it is extended, so no setting of it can hide a file.
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


def choose_targets(declared: Sequence[str], checkout: Mapping[str, Any]) -> Selection | None:
    """The module's declared targets (``Repo.c0_targets``: its official bundle's own choice),
    else the common official heuristic over the checkout's top level."""
    if declared:
        return Selection("declared", [str(t) for t in declared])
    return select_targets(checkout)


def tree_checkout(tree: Mapping[str, tuple[str, str]], survey: Mapping[str, Any],
                  untrusted: Iterable[str]) -> dict[str, Any]:
    """The survey's account of the checkout's top level, made from the pinned tree instead.

    What the official heuristic picks must not depend on what the image left
    on disk: a deleted package would leave the targets, an untracked
    ``pyrightconfig.json`` would choose them.  The configs' text is the
    survey's (read from disk) only where the file is tracked and not edited
    (``untrusted``), so it is the pinned commit's.
    """
    entries: dict[str, dict[str, Any]] = {}
    for path in tree:
        top, _, rest = path.partition("/")
        entry = entries.setdefault(top, {"name": top, "dir": bool(rest)})
        if rest and "/" not in rest:
            entry["init"] = entry.get("init", False) or rest == "__init__.py"
            entry["py"] = entry.get("py", False) or rest.endswith(".py")
    bad = set(untrusted)
    out: dict[str, Any] = {"exists": True, "entries": [entries[n] for n in sorted(entries)]}
    for name, key in (("pyrightconfig.json", "pyrightconfig"),
                      ("pyproject.toml", "pyproject_pyright")):
        if name in tree and name not in bad:
            out[key] = survey.get(key)
    return out


def tracked_sources(tree: Mapping[str, tuple[str, str]], sel: Selection) -> list[str]:
    """The tracked Python files under the selection's targets: what pyright must analyse."""
    return [path for path, (mode, _) in tree.items()
            if path.endswith(".py") and mode in ("100644", "100755")
            and not EXCLUDE_DIRS.intersection(path.split("/")[:-1])
            and any(_under(path, t) for t in sel.targets)]


def _under(path: str, target: str) -> bool:
    t = posixpath.normpath(target)
    if t == ".":
        return True
    if any(c in t for c in "*?["):
        return fnmatch.fnmatchcase(path, t) or fnmatch.fnmatchcase(path, t + "/*")
    return path == t or path.startswith(t + "/")


def pyright_config(sel: Selection, checkout: str, scratch: str, python_version: str | None,
                   include: list[str] | None = None, files: list[str] | None = None,
                   tracked_dirs: Iterable[str] = ()) -> dict[str, Any]:
    """The config C0 runs with, written to ``scratch``: ours, every setting that can hide a
    file pinned (``PINNED_RULES``).

    Paths are relative to ``scratch`` (pyright ignores absolute ``include``
    entries).  The execution root is the checkout, as when pyright runs from
    the repository root.  What is analysed is ``files`` (the pinned tree's
    Python files) when known, else the selection's targets; ``include``
    replaces both (the binding check includes only the scratch folder, which
    holds no Python file, with otherwise the same config: pyright prints the
    search paths of every execution environment as it loads the config, and
    then has nothing to parse or check).  The repository config's ``extraPaths`` count only
    where they name one of ``tracked_dirs``.  The Python version is the
    interpreter's.
    """
    def rel(p: str) -> str:
        return posixpath.relpath(posixpath.normpath(posixpath.join(checkout, p)), scratch)

    if include is None:
        include = [rel(f) for f in files] if files is not None else [
            rel(t) for t in sel.targets]
    tracked = set(tracked_dirs)
    extra = sel.settings.get("extraPaths")
    paths = [rel(p) for p in extra if isinstance(p, str) and
             posixpath.normpath(p) in tracked] if isinstance(extra, list) else []
    if sel.auto_src and not paths and sel.settings.get("autoSearchPaths", True) is not False:
        paths = [rel("src")]
    env: dict[str, Any] = {"root": rel("."), **({"extraPaths": paths} if paths else {})}
    cfg: dict[str, Any] = {"include": include, "executionEnvironments": [env]}
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


def strict_missing(data: Mapping[str, Any], present: Iterable[str],
                   stub_only: Iterable[str] = (),
                   not_code: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The official missing names plus those that resolve to stubs only.

    ``import yaml`` without PyYAML installed is not a ``reportMissingImports``
    error, because typeshed ships stubs for it: pyright says "could not be
    resolved from source" instead, and the official count never sees it.  A
    stub-only name counts unless its top level has runtime source on the
    interpreter's path (``present``): ``six.moves`` is stub-only by nature
    while ``six`` is installed.  Worse, a package of the environment holding
    only ``.pyi`` files (``site-packages/yaml/__init__.pyi``) resolves with no
    diagnostic at all; the driver finds those (``stub_only``: names an
    analysed file imports that have a stub entry on the path and runtime
    source nowhere, the rules of PEP 561 and pyright), and they count too.
    "Runtime source" is what Python's own finders would load, in their order,
    and only when it is code for the interpreter: a zero-byte ``yaml.pyc``
    beside a stub-only ``yaml/`` is what ``import yaml`` finds, and it cannot
    run.  Such a file first on the path hides any later package too
    (``not_code``: name -> the file), and counts.
    Strict only: the official count is ``reportMissingImports`` alone.
    """
    found = missing_imports(data)
    have = set(present)
    for name, where in missing_imports(data, SOURCE_RULE).items():
        if name not in have:
            found.setdefault(name, where)
    for name in stub_only:
        found.setdefault(str(name), "stubs only: no runtime source on the import path")
    for name, file in (not_code or {}).items():
        found.setdefault(str(name), f"Python would load {str(file)[:200]}, which is not code "
                                    "for this interpreter")
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


# --------------------------------------------------------------------------- the driver's answers


def finder_facts(info: dict[str, Any]) -> dict[str, Any]:
    """What the driver's finder needs of the interpreter, where it said it in the right shape
    (else the driver's defaults: ``.so``, any magic, no built-ins)."""
    magic, ext, builtins = info.get("magic"), info.get("ext_suffixes"), info.get("builtins")
    strings = lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)  # noqa: E731
    return {"magic": magic if isinstance(magic, str) and len(magic) == 8 else None,
            "ext_suffixes": ext if strings(ext) else None,
            "builtins": builtins if strings(builtins) else None}


#: Import name -> distributions for the names in argv, from the interpreter's installed
#: metadata (the names keep the answer small; the driver passes those that may be missing).
DISTRIBUTIONS = ("import importlib.metadata as m, json, sys; "
                 "d = getattr(m, 'packages_distributions', dict)(); "
                 "print(json.dumps({n: d[n] for n in sys.argv[1:] if n in d}))")


def installed_distributions(out: dict[str, Any]) -> dict[str, list[str]]:
    """What the environment's own metadata says provides each import name that may be
    missing (empty when it cannot say): a distribution installed under another name than its
    import wins over a guess in the hint.  The driver asked, in the analysis's own exec."""
    res = out.get("distributions") or {}
    try:
        data = json.loads(str(res.get("stdout")).strip().splitlines()[-1]) if res.get(
            "rc") == 0 else {}
    except (ValueError, IndexError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: [str(d) for d in v] for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list)}
