"""C0's import checker (``probes/c0_checker.js``) against pyright run whole.

The checker visits import statements only; C0 counts what it reports, so it must report what
pyright whole reports for the two rules C0 counts, wherever pyright's reachability,
suppression comments, ``no_type_check``, file-level rule comments and stub resolution decide
a diagnostic.  Both runs use the host's node and pyright (what the targets mount) and a bare
venv, in which ``requests``, ``six`` and ``yaml`` resolve to typeshed's stubs only.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.repomodules import write_tree

from pytest_reb.pyramid.c0_imports import CHECKER, CHECKER_FILE, NODE, PYRIGHT
from pytest_reb.pyramid.c0_pyright import MISSING_RULE, PINNED_RULES, SOURCE_RULE
from pytest_reb.targets import NODE_MOUNT, PYRIGHT_MOUNT, LocalTarget, tool_mounts

CORPUS = {
    "flow.py": """\
import sys
from typing import TYPE_CHECKING, NoReturn
import requests
import six


def die() -> NoReturn:
    raise SystemExit(1)


def die_inferred():
    raise RuntimeError


def after_declared_noreturn():
    die()
    import absent_after_noreturn
    import requests.auth


def after_inferred_noreturn():
    die_inferred()
    import absent_after_inferred
    from six import moves
    from requests import cookies


def after_return():
    return 1
    import absent_after_return
    import requests.hooks


def after_loop():
    while True:
        pass
    import absent_after_loop


if TYPE_CHECKING:
    import absent_type_checking
    import requests.structures
if sys.version_info < (3, 0):
    import absent_old_python
    import requests.compat
if sys.platform == "win32":
    import absent_windows
try:
    import absent_in_try
except ImportError:
    absent_in_try = None


class Holder:
    import absent_in_class
    from requests import exceptions

    def method(self):
        import absent_in_method
        import yaml.composer
        sys.exit(0)
        import absent_after_exit
        import yaml.loader


import absent_ignored  # type: ignore
import absent_pyright_ignored  # pyright: ignore[reportMissingImports]
import requests.sessions  # pyright: ignore[reportMissingModuleSource]
from . import pkg
from .pkg import not_a_module
from .absent_relative import x
import pkg.absent_sub
from pkg import absent_symbol
from yaml import *
sys.exit(0)
import absent_at_end
import six.moves as moved
""",
    "levels.py": """\
# pyright: reportMissingModuleSource=false
import requests
import absent_levels
import os

os._exit(0)
import absent_after_os_exit
""",
    "decorated.py": """\
from typing import no_type_check


@no_type_check
def unchecked():
    import absent_in_no_type_check
    import requests


def asserted(x):
    assert False
    import absent_after_assert_false
    import requests


def nested():
    def inner():
        import yaml.composer
        from yaml import loader
        from requests import adapters, models as m
    return inner


lam = lambda: __import__("absent_dynamic")
""",
    "whole_file_ignored.py": "# type: ignore\nimport absent_whole_file\nimport requests\n",
    "pkg/__init__.py": "",
    "pkg/stubbed.pyi": "x: int\n",
    "pkg/use.py": "from . import stubbed\nfrom .stubbed import x\nimport pkg.stubbed\n",
}
CONFIG = {**PINNED_RULES, "include": ["."]}  # what C0 pins, over the corpus


def _tools() -> tuple[str, str]:
    if not {NODE_MOUNT, PYRIGHT_MOUNT} <= tool_mounts().keys():
        pytest.fail("pyright[nodejs] is not installed on the host: C0 cannot run here either")
    host = LocalTarget(gpus=[])  # the host's node and pyright, which the targets mount
    return host.tool(NODE), host.tool(PYRIGHT)


def _counted(out: str) -> list[tuple[str, int, int, str, str]]:
    """The diagnostics of the two counted rules, in a comparable form."""
    data = json.loads(out)
    return sorted((Path(d["file"]).name, d["range"]["start"]["line"],
                   d["range"]["start"]["character"], d["rule"], d["message"])
                  for d in data["generalDiagnostics"] if d.get("rule") in (MISSING_RULE,
                                                                           SOURCE_RULE))


def test_the_import_checker_reports_what_pyright_whole_reports(tmp_path: Path,
                                                               bare_python: str) -> None:
    node, pyright = _tools()
    write_tree(tmp_path, {**CORPUS, "pyrightconfig.json": json.dumps(CONFIG),
                          CHECKER_FILE: CHECKER})
    args = [pyright, "-p", "pyrightconfig.json", "--outputjson", "--level", "error",
            "--pythonpath", bare_python]
    whole = subprocess.run([node, *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
    lean = subprocess.run([node, CHECKER_FILE, *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert lean.stderr.rstrip().endswith("REB_C0_CHECKER imports"), lean.stderr[-2000:]
    assert lean.returncode == whole.returncode
    expected = _counted(whole.stdout)
    assert _counted(lean.stdout) == expected
    # the corpus reaches what decides a diagnostic: kept, dropped, both rules
    names = {d[4].split('"')[1] for d in expected}
    assert {"absent_after_noreturn", "absent_in_try", "absent_in_method", "requests",
            "six.moves", "yaml.composer", "requests.adapters"} <= names
    assert not names & {"absent_ignored", "absent_pyright_ignored", "absent_old_python",
                        "absent_windows", "absent_whole_file", "requests.sessions",
                        "requests.hooks"}
    assert {d[3] for d in expected} == {MISSING_RULE, SOURCE_RULE}


def test_a_bundle_of_another_shape_runs_pyright_whole(tmp_path: Path) -> None:
    node, _ = _tools()
    fake = write_tree(tmp_path / "pyright", {
        "index.js": "const m = require('./pyright-internal.js');\n"
                    "const mod = {exports: {}};\n"
                    "m.modules[1](mod, mod.exports, null);\n"
                    "console.log('ran whole ' + process.argv.slice(2).join(' '));\n",
        "pyright-internal.js": "exports.modules = {1(e) { e.exports = {Checker: class {}}; }};\n",
    })
    write_tree(tmp_path, {CHECKER_FILE: CHECKER})
    res = subprocess.run([node, CHECKER_FILE, str(fake / "index.js"), "-p", "x.json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.stdout == "ran whole -p x.json\n"
    assert res.stderr.strip() == "REB_C0_CHECKER full: the Checker has no check/walk/visit"


#: A stand-in bundle whose ``Checker`` has the methods the patch needs; ``index.js`` checks
#: one file with the instance fields given.
CHECKER_CLASS = """\
class Checker {
  constructor(fields) { Object.assign(this, fields); }
  visit(e) { switch (e.nodeType) { case 1:return this.visitImportFromAs(e);\
case 2:return this.visitModuleName(e); } }
  walk(node) { if (node.boom) throw new Error('boom'); this.visit(node); }
  visitImportFromAs(e) { console.log('visited ' + e.nodeType); return false; }
  visitModuleName(e) { console.log('visited ' + e.nodeType); return false; }
  check() { console.log('checked whole'); }
}
"""


@pytest.mark.parametrize(("fields", "out", "why"), [
    ("{_moduleNode: {d: {statements: [{nodeType: 2}, {nodeType: 7}]}}, "
     "_evaluator: {getType() {}}}", "visited 2\n", "imports"),
    ("{}", "checked whole\n", "full: the Checker has not the fields this expects"),
    ("{_moduleNode: {d: {statements: [{boom: true}]}}, _evaluator: {getType() {}}}",
     "checked whole\n", "full: boom"),
], ids=["lean", "fields-missing", "walk-throws"])
def test_a_file_the_patch_cannot_walk_is_checked_whole(tmp_path: Path, fields: str, out: str,
                                                      why: str) -> None:
    node, _ = _tools()
    fake = write_tree(tmp_path / "pyright", {
        "index.js": "const m = require('./pyright-internal.js');\n"
                    "const mod = {exports: {}};\n"
                    "m.modules[1](mod, mod.exports, null);\n"
                    f"new mod.exports.Checker({fields}).check();\n",
        "pyright-internal.js": "exports.modules = {1(e) { e.exports = {Checker: "
                               + CHECKER_CLASS.replace("\n", " ") + "}; }};\n",
    })
    write_tree(tmp_path, {CHECKER_FILE: CHECKER})
    res = subprocess.run([node, CHECKER_FILE, str(fake / "index.js")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert (res.stdout, res.stderr.strip()) == (out, f"REB_C0_CHECKER {why}")
