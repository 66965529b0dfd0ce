"""C0's pyright resolves through a mirror of the interpreter's import folders (the same names,
empty modules; ``c0_driver.js``'s ``mirror``): every import it reports, and every one it does
not, must be what it reports against the real folders.  A differential over the layouts that
decide import resolution (packages, namespace portions, stubs beside and instead of code,
partial stub packages, extensions, links, ``.pth`` folders), run both ways on this machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from support.c0 import local_ctx
from support.repomodules import write_tree as tree

from pytest_reb.pyramid import c0_imports
from pytest_reb.pyramid.c0_imports import imports_total, probe

ELF = b"\x7fELF\x02\x01\x01" + b"\0" * 57  # a header: the driver's finder asks no more
EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".so"

#: The site folder's layout: file -> text (bytes for an extension), "->target" for a link.
SITE: dict[str, Any] = {
    "regular/__init__.py": "VALUE = 1\n",
    "regular/sub.py": "def f() -> int:\n    return 1\n",
    f"regular/native{EXT}": ELF,
    "nspkg/part/mod.py": "X = 1\n",
    "stubonly-stubs/__init__.pyi": "def g() -> int: ...\n",
    "partial-stubs/__init__.pyi": "def h() -> int: ...\n",
    "partial-stubs/py.typed": "partial\n",
    "partial/__init__.py": "def h():\n    return 1\n",
    "partial/extra.py": "E = 1\n",
    "both.py": "B = 1\n",
    "both.pyi": "B: int\n",
    "six.py": "PY3 = True\n",
    f"extonly{EXT}": ELF,
    "deep/a/b/c/d/__init__.py": "",
    "pydir/data.txt": "not python\n",
    "onlypyc/__init__.cpython-311.pyc": b"\0" * 20,
    "typedpkg/__init__.py": "",
    "typedpkg/py.typed": "",
    "dies.py": "def stop():\n    raise SystemExit(1)\n",
    "linked": "->{outside}/linkedpkg",
    "broken": "->{outside}/nothing-here",
    "extra.pth": "{outside}/extra\n",
}
OUTSIDE = {
    "linkedpkg/__init__.py": "L = 1\n",
    "linkedpkg/inner.py": "",
    "extra/extra_mod.py": "M = 1\n",
}
IMPORTS = """\
import regular.sub
import regular.absent
from regular import sub, VALUE, not_defined_here
from regular import native
import nspkg.part.mod
import nspkg.nothere
import stubonly
import partial.extra
import partial.absent
import both
import six
import yaml
import extonly
import deep.a.b.c.d
import deep.a.b.zz
import pydir
import onlypyc
import typedpkg
import linked.inner
import broken
import extra_mod
import definitely_absent
from . import local
import local
import dies
dies.stop()
import after_a_call_that_always_raises
"""


def _venv(root: Path) -> str:
    """A venv of this interpreter with ``SITE`` in its site folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True)
    site = next((root / "venv").glob("lib/python*/site-packages"))
    outside = root / "outside"
    tree(outside, OUTSIDE)
    for rel, body in SITE.items():
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            target.write_bytes(body)
        elif body.startswith("->"):
            os.symlink(body[2:].format(outside=outside), target)
        else:
            target.write_text(body.format(outside=outside))
    return str(root / "venv" / "bin" / "python")


def _seen(o: Any) -> dict[str, Any]:
    keys = ("missing", "missing_official", "missing_strict", "missing_where", "diagnostics",
            "bound", "files_analyzed", "missing_count")
    return {k: o.evidence.get(k) for k in keys} | {"status": o.status, "strict": o.strict,
                                                   "compat": o.compat}


@pytest.mark.parametrize("compat", [False, True], ids=["strict", "compat"])
def test_the_mirror_resolves_every_import_as_the_real_folders_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compat: bool) -> None:
    python = _venv(tmp_path)
    repo = tree(tmp_path / "repo", {"train.py": IMPORTS, "local.py": "",
                                    "pkg/__init__.py": "from . import mod\nimport nspkg\n",
                                    "pkg/mod.py": "import partial\nimport stubonly.deeper\n"})
    total = imports_total(repo)
    mirrored = probe(local_ctx(repo, python, compat=compat, total=total))
    monkeypatch.setattr(c0_imports, "MIRROR_ENTRIES", 0)
    real = probe(local_ctx(repo, python, compat=compat, total=total))
    assert mirrored.evidence["mirror"]["folders"] >= 3  # the stdlib's, the site's, the .pth's
    assert mirrored.evidence["mirror"]["over_budget"] is False
    assert real.evidence["mirror"]["folders"] == 0
    assert _seen(mirrored) == _seen(real)
    # each kind decided as pyright decides it (strict adds the stub-only and source-less)
    official = ["after_a_call_that_always_raises", "broken", "deep", "definitely_absent",
                "nspkg", "partial", "regular", "stubonly"]
    assert real.evidence["missing"] == (official if compat else sorted([*official, "yaml"]))


def test_past_its_entry_budget_pyright_reads_the_real_folders(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = _venv(tmp_path)
    repo = tree(tmp_path / "repo", {"train.py": "import regular.sub\nimport absent_one\n"})
    monkeypatch.setattr(c0_imports, "MIRROR_ENTRIES", 5)
    o = probe(local_ctx(repo, python, total=2))
    assert o.evidence["mirror"]["over_budget"] is True
    assert o.evidence["bound"] is True and o.evidence["missing"] == ["absent_one"]


def test_no_library_type_makes_an_import_unreachable_either_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pyright reports nothing in code it finds unreachable, and the mirror hides the library's
    types: a call its ``py.typed`` library declares ``NoReturn`` would make the code after it
    unreachable where pyright judged reachability by calls.  Under C0's pinned rules it does
    not, with the real folders or the mirror: the import after the call counts both ways."""
    python = _venv(tmp_path)
    site = next((tmp_path / "venv").glob("lib/python*/site-packages"))
    (site / "typedpkg" / "__init__.py").write_text(
        "from typing import NoReturn\ndef stop() -> NoReturn:\n    raise SystemExit(1)\n")
    repo = tree(tmp_path / "repo", {"train.py": "import typedpkg\ntypedpkg.stop()\n"
                                                "import after_stop\n"})
    mirrored = probe(local_ctx(repo, python, total=2))
    monkeypatch.setattr(c0_imports, "MIRROR_ENTRIES", 0)
    real = probe(local_ctx(repo, python, total=2))
    assert mirrored.evidence["missing"] == real.evidence["missing"] == ["after_stop"]


def test_a_driver_killed_at_its_deadline_leaves_no_scratch_nor_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On ``local://`` the scratch folder and the mirror are this machine's ``/tmp`` and
    ``/dev/shm``: a driver the host kills never runs its own clean-up, so the host does.
    Here "pyright" is a script that never ends, so both exist when the host's deadline
    comes."""
    python = _venv(tmp_path)
    repo = tree(tmp_path / "repo", {"train.py": "import regular.sub\n"})
    (tmp_path / "hangs.js").write_text("setTimeout(() => {}, 120000);\n")
    driver = c0_imports._driver

    def hurried(ctx: Any, mode: str, spec: dict[str, Any], timeout: float) -> Any:
        if mode != "analyse":
            return driver(ctx, mode, spec, timeout)
        return driver(ctx, mode, {**spec, "pyright": str(tmp_path / "hangs.js")}, 5.0)

    monkeypatch.setattr(c0_imports, "_driver", hurried)
    o = probe(local_ctx(repo, python, total=1))
    scratch = o.evidence["scratch"]
    assert o.category == "timeout", o.message
    left = [p for p in (scratch, f"{scratch}-m", f"/dev/shm/{Path(scratch).name}-m")
            if os.path.lexists(p)]
    assert left == []
