"""C0 static imports: which of the repository's imports the environment cannot resolve.

The official probe pip-installed pyright *into the environment under test*
(changing what it measures, and needing the network), and 43 of its 44
bundles never told pyright which interpreter to resolve against, so pyright
asked whatever ``python3`` was on PATH.  Here nothing is installed: node and
pyright's bundled JS are mounted read-only into the target and pyright runs
there with ``--pythonpath <the report's interpreter>`` and a pinned rule set
(``reportMissingImports`` an error whatever the repository's config says,
platform Linux, the interpreter's Python version), from a config written to a
scratch directory under ``/tmp`` that ``extends`` the repository's own.
Nothing is written into the checkout or the environment.

pyright silently ignores a ``--pythonpath`` it cannot run and falls back to
its bundled typeshed, which would make every third-party import "missing" or,
worse, resolve them against another environment.  So strict C0 also proves
the binding: a second, ``--verbose`` pyright run with the same config prints
its search paths, and every directory on the interpreter's own ``sys.path``
must be among them.

Targets and counting follow the official probe: ``pyrightconfig.json``, else
a ``[tool.pyright]`` table, else ``src/`` (and ``tests/``), else the top-level
directories holding Python files plus the top-level ``.py`` files (the
bundles differ on those scripts; research repositories keep their
entrypoints there and the denominator counts them, so we analyse them).
*Missing* is the set of distinct top-level names in ``reportMissingImports``
diagnostics; the figure is its size over the repository's ``imports_total``.

All in-target work goes through one small node driver (``probes/c0_driver.js``),
run by the mounted node rather than by any tool of the image.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
import secrets
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb import diagnose
from pytest_reb.context import Context
from pytest_reb.outcome import Outcome
from pytest_reb.target import NODE_MOUNT, PROBES_DIR, PYRIGHT_MOUNT, ExecResult

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
TIMEOUT = 600.0
SURVEY_TIMEOUT = 120.0
BINDING_TIMEOUT = 120.0
SLACK = 30.0
MARKER = "REB_C0"
NODE = f"{NODE_MOUNT}/bin/node"
PYRIGHT = f"{PYRIGHT_MOUNT}/index.js"
#: What the interpreter says about itself; run without -I so sys.path is what pyright sees.
SYS_PATH_SNIPPET = (
    "import json, os, sys; print('REB_C0_PY ' + json.dumps({'executable': sys.executable, "
    "'prefix': sys.prefix, 'version': list(sys.version_info[:3]), "
    "'path': [[p, os.path.isdir(p)] for p in sys.path]}))"
)

#: The in-target driver (``probes/c0_driver.js``), run as ``node -e DRIVER <mode> <spec-json>``:
#: passed as text, so it needs no mount and the outcome's command names it ``<c0 driver>``.
DRIVER = (PROBES_DIR / "c0_driver.js").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- counting


def top_level_imports(source: str) -> set[str]:
    """Top-level names of the absolute imports in one Python source (``import a.b`` -> ``a``).

    Relative imports are left out; a file that does not parse counts nothing,
    as in the official baseline.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".", 1)[0] for alias in node.names if alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".", 1)[0])
    names.discard("")
    return names


def _python_files(root: Path, commit: str | None) -> Iterable[Path]:
    if commit is None:
        rel = (p.relative_to(root) for p in root.rglob("*.py") if p.is_file())
    else:
        out = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit], cwd=root,
                             capture_output=True, text=True, check=True).stdout
        rel = (Path(line) for line in out.splitlines() if line.endswith(".py"))
    for path in rel:
        if not EXCLUDE_DIRS.intersection(path.parts[:-1]):
            yield root / path


def imported_names(root: str | Path, *, commit: str | None = None) -> set[str]:
    """The distinct top-level names a repository imports, counted the official way.

    An AST walk over every ``*.py`` file under ``root`` (or, with ``commit``,
    only the files git tracks at that commit, as the official baseline did),
    skipping ``EXCLUDE_DIRS`` (VCS, caches, venvs, build/dist, benchmark
    output).  Absolute imports only; stdlib and the repository's own modules
    count too, so the total is the official C0 denominator.
    """
    base = Path(root)
    names: set[str] = set()
    for path in _python_files(base, commit):
        try:
            names |= top_level_imports(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return names


def imports_total(root: str | Path, *, commit: str | None = None) -> int:
    """The C0 denominator of a repository: ``Repo(imports_total=...)`` for your own module.

        python -c "from pytest_reb.tiers.c0_imports import imports_total; print(imports_total('.'))"

    See ``imported_names`` for what counts; pass ``commit="HEAD"`` to count
    only tracked files, as the official baseline did.
    """
    return len(imported_names(root, commit=commit))


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


def _last_json(text: str, marker: str) -> dict[str, Any] | None:
    found = None
    for line in text.splitlines():
        if line.startswith(marker + " "):
            try:
                data = json.loads(line[len(marker) + 1:])
            except ValueError:
                continue
            if isinstance(data, dict):
                found = data
    return found


# --------------------------------------------------------------------------- the probe


def _driver(ctx: Context, mode: str, spec: dict[str, Any], seconds: float) -> tuple[
        ExecResult, dict[str, Any] | None]:
    """Run the driver for ``seconds`` of the stage (scaled) plus an unscaled ``SLACK``: the
    deadlines the driver keeps itself (``spec``'s ``*_ms``, scaled too) fire first."""
    res = ctx.target.exec([ctx.target.tool(NODE), "-e", DRIVER, mode, json.dumps(spec)],
                          timeout=ctx.target.scaled(seconds) + SLACK,
                          env={"PYTHONDONTWRITEBYTECODE": "1"}, profile="cpu", scaled=False)
    return res, _last_json(res.stdout, MARKER)


def _ran(res: ExecResult) -> dict[str, Any]:
    """Outcome fields of a driver run (the driver's source is elided from the command)."""
    return {"command": [res.argv[0], "-e", "<c0 driver>", *res.argv[3:4]],
            "exit_code": res.exit_code, "timed_out": res.timed_out,
            "duration": round(res.duration, 3), "stderr_tail": res.stderr[-4000:]}


def _fail(ctx: Context, category: str, message: str, evidence: dict[str, Any],
          res: ExecResult | None = None) -> Outcome:
    """A run that produced no count: the official zero in compat, no figure in strict."""
    evidence.update(missing=[], imports_total=ctx.repo.imports_total)
    if ctx.compat:
        evidence.update(missing_count=0, counted_as="official: failed run = 0 missing")
    else:
        evidence.update(missing_count=None)
    o = ctx.outcome("c0", category=category, message=message, strict=False, compat=False,
                    evidence=evidence, **(_ran(res) if res is not None else {}))
    return ctx.verdict(o)


def probe(ctx: Context) -> Outcome:
    """Run pyright bound to the report's interpreter (CPU profile); count what is missing."""
    evidence: dict[str, Any] = {"python": ctx.python, "targets": [], "files_analyzed": None,
                                "pyright_version": None, "search_paths": []}
    if ctx.python is None:
        return _fail(ctx, "missing_report", ctx.report.message, evidence)
    scaled = ctx.target.scaled
    res, survey = _driver(ctx, "survey", {
        "checkout": ctx.checkout, "python": ctx.python, "snippet": SYS_PATH_SNIPPET,
        "pyright": ctx.target.tool(PYRIGHT), "timeout_ms": int(scaled(SURVEY_TIMEOUT) * 1000),
    }, SURVEY_TIMEOUT)
    if survey is None or "driver_error" in survey:
        return _fail(ctx, "timeout" if res.timed_out else "infra",
                     f"the C0 driver did not run under the mounted node ({NODE}): exit "
                     f"{res.exit_code}, {(res.stderr or str(survey)).strip()[-300:]}",
                     evidence, res)
    if not survey.get("pyright_exists"):
        return _fail(ctx, "infra", f"pyright is not mounted at {PYRIGHT}: install "
                     "pytest-reb with pyright[nodejs] on the host", evidence, res)
    py = survey["python"]
    info = _last_json(py.get("stdout", ""), "REB_C0_PY")
    if info is None:
        if py.get("timed_out"):
            return _fail(ctx, "timeout", f"{ctx.python} did not answer within "
                         f"{scaled(SURVEY_TIMEOUT):g}s", evidence, res)
        why = py.get("error") or f"exit {py.get('rc')}"
        return _fail(ctx, "entrypoint_not_found", f"the interpreter {ctx.python} does not run "
                     f"({why}) {py.get('stderr', '').strip()[-300:]}".rstrip(), evidence, res)
    evidence["interpreter"] = {k: info.get(k) for k in ("executable", "prefix", "version")}
    checkout = survey["checkout"]
    if not checkout.get("exists"):
        return _fail(ctx, "entrypoint_not_found", f"no checkout at {ctx.checkout} "
                     f"({checkout.get('error')})", evidence, res)
    sel = select_targets(checkout)
    if sel is None:
        return _fail(ctx, "entrypoint_not_found", f"nothing for pyright in {ctx.checkout}: no "
                     "pyrightconfig.json, no [tool.pyright], no src/, no Python files at the "
                     "top level", evidence, res)
    evidence.update(selection=sel.kind, targets=sel.targets)
    return _analyse(ctx, sel, info, evidence)


def _analyse(ctx: Context, sel: Selection, info: dict[str, Any],
             evidence: dict[str, Any]) -> Outcome:
    scaled = ctx.target.scaled
    python = str(ctx.python)
    version = info.get("version")
    version = (f"{version[0]}.{version[1]}" if isinstance(version, list) and len(version) >= 2
               and all(type(v) is int for v in version[:2]) else None)
    scratch = f"/tmp/reb-c0-{secrets.token_hex(6)}"
    config = pyright_config(sel, ctx.checkout, scratch, version)
    common = ["--pythonpath", python, "--pythonplatform", "Linux",
              *(["--pythonversion", version] if version else [])]
    main_args = ["-p", "pyrightconfig.json", "--outputjson", "--level", "error", *common]
    res, out = _driver(ctx, "analyse", {
        "scratch": scratch, "pyright": ctx.target.tool(PYRIGHT),
        "files": {"pyrightconfig.json": json.dumps(config, indent=1), "binding.py": "",
                  "binding.json": json.dumps(pyright_config(
                      sel, ctx.checkout, scratch, version, include=["binding.py"]), indent=1)},
        "main_args": main_args, "binding_args": ["-p", "binding.json", "--verbose", *common],
        "main_timeout_ms": int(scaled(TIMEOUT) * 1000),
        "binding_timeout_ms": int(scaled(BINDING_TIMEOUT) * 1000),
        "rules": [MISSING_RULE, SOURCE_RULE], "source_rule": SOURCE_RULE,
        "import_pattern": IMPORT_NAME.pattern, "sys_path": import_dirs(info.get("path") or []),
    }, max(TIMEOUT, BINDING_TIMEOUT))
    evidence.update(config=config, pyright_command=["pyright", *main_args], scratch=scratch)
    if out is None or "driver_error" in out:
        return _fail(ctx, "timeout" if res.timed_out else "infra",
                     f"the C0 driver failed: exit {res.exit_code}, "
                     f"{(res.stderr or str(out)).strip()[-300:]}", evidence, res)
    binding, main = out["binding"], out["main"]
    verbose = binding.get("stdout", "")
    search = search_paths(verbose)
    data = main.get("json")
    evidence.update(search_paths=search, pyright_exit_code=main.get("rc"))
    if data is None:
        if main.get("timed_out"):
            return _fail(ctx, "timeout", f"pyright ran past {scaled(TIMEOUT):g}s", evidence, res)
        error = f", {main['error']}" if main.get("error") else ""
        text = (main.get("stderr") or main.get("stdout") or "").strip()[-300:]
        return _fail(ctx, "pyright_failed", f"pyright printed no JSON (exit {main.get('rc')}"
                     f"{error}): {text}", evidence, res)
    problem = binding_problem(search, info.get("path") or [], verbose,
                              own=(ctx.checkout, scratch)) if search else (
        f"its --verbose run printed no search paths (exit {binding.get('rc')}"
        f"{', timed out' if binding.get('timed_out') else ''}): "
        f"{(binding.get('stderr') or verbose).strip()[-300:]}")
    official = missing_imports(data)
    strict = strict_missing(data, data.get("source_present") or [])
    missing = official if ctx.compat else strict
    total = ctx.repo.imports_total
    analysed = (data.get("summary") or {}).get("filesAnalyzed")
    evidence.update(pyright_version=data.get("version"), files_analyzed=analysed,
                    diagnostics=data.get("reduced"), bound=problem is None,
                    missing=sorted(missing), missing_count=len(missing), imports_total=total,
                    figure=f"{len(missing)}/{total}", missing_where=strict,
                    missing_official=sorted(official), missing_strict=sorted(strict))
    o = ctx.outcome("c0", **_ran(res), compat=True, evidence=evidence,
                    strict=problem is None and not strict and bool(analysed))
    o.exit_code = main.get("rc")
    if problem is not None:
        o.category = "pyright_wrong_interpreter"
        o.message = f"pyright was not bound to {python}: {problem}"
        if not ctx.compat:  # names from another environment are no count of this one
            evidence.update(missing_count=None, figure=None,
                            counted_as="not counted: pyright was not bound to the interpreter")
    elif missing:
        o.category = "deps"
        o.message = f"{len(missing)} of {total} imports unresolved: {', '.join(missing)}"
    elif not analysed:
        o.category = "pyright_failed"
        o.message = f"pyright analysed no files (targets {sel.targets})"
    else:
        o.message = (f"0 of {total} imports unresolved; pyright {data.get('version')} analysed "
                     f"{analysed} files bound to {python}")
    o = ctx.verdict(o)
    if o.status == "failed" and missing and problem is None:
        o.diagnosis = diagnose.missing_packages(sorted(missing), missing, python)
    return o
