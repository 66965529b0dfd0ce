"""Strict C0 counts a name as resolved only when Python's finders would load code for it.

pyright reads neither ``.pyc`` nor extension files, and the stub check used to take any
``yaml.pyc`` beside a stub-only ``yaml/`` for runtime source: a zero-byte one passed strict
C0.  The driver now follows Python's own finders (built-ins, then the import path in order,
in each a package's ``__init__`` before a module, extension suffixes before ``.py`` before
``.pyc``) and asks of the file found first whether it is code for the interpreter: a ``.pyc``
with its magic number and a code object, an ELF object named with one of its extension
suffixes, any ``.py``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest
from support.repomodules import write_tree as tree
from test_c0_stubs import ctx

from pytest_reb.pyramid.c0_imports import probe

#: This interpreter's first extension suffix (``.cpython-311-x86_64-linux-gnu.so``).
EXT = importlib.machinery.EXTENSION_SUFFIXES[0]


def venv_site(tmp_path: Path) -> tuple[str, Path]:
    """A bare venv: its python and its site-packages."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = (venv / "lib").glob("python3*/site-packages")
    return str(venv / "bin" / "python"), site


def compiled(path: Path, source: str = "def safe_load(s):\n    return s\n") -> bytes:
    """The bytes of a real ``.pyc`` of this interpreter for ``source``."""
    src = path.with_suffix(".src.py")
    src.write_text(source)
    out = Path(py_compile.compile(str(src), cfile=str(path.with_suffix(".built.pyc"))))
    src.unlink()
    data = out.read_bytes()
    out.unlink()
    return data


@pytest.mark.parametrize(("case", "beside"), [
    ("zero-byte pyc", {"yaml.pyc": b""}),  # the reported attack
    ("pyc of another interpreter", {"yaml.pyc": b"\x00\x00\r\n" + b"\x00" * 12 + b"\xe3"}),
    ("pyc holding no code object", {"yaml.pyc": importlib.util.MAGIC_NUMBER + b"\x00" * 12
                                    + b"N"}),
    ("extension that is no ELF object", {f"yaml{EXT}": b"not an ELF object at all"}),
])
def test_a_module_file_that_is_not_code_beside_a_stub_only_package_is_missing(
        tmp_path: Path, case: str, beside: dict[str, bytes]) -> None:
    python, site = venv_site(tmp_path)
    tree(site, {"yaml/__init__.pyi": "def safe_load(s: str) -> object: ...\n"})
    for name, data in beside.items():
        (site / name).write_bytes(data)
    repo = tree(tmp_path / "repo", {"train.py": "import yaml\n"})
    o = probe(ctx(repo, python, compat=False))
    assert (o.status, o.category) == ("failed", "deps"), (case, o.message)
    assert o.evidence["missing_strict"] == ["yaml"]


def test_a_real_sourceless_module_beside_stubs_resolves(tmp_path: Path) -> None:
    python, site = venv_site(tmp_path)
    tree(site, {"yaml/__init__.pyi": "def safe_load(s: str) -> object: ...\n"})
    (site / "yaml.pyc").write_bytes(compiled(tmp_path / "yaml.pyc"))
    repo = tree(tmp_path / "repo", {"train.py": "import yaml\n"})
    o = probe(ctx(repo, python, compat=False))
    assert o.evidence["missing_strict"] == [], o.message


def test_a_broken_file_found_first_hides_a_real_package_later_on_the_path(
        tmp_path: Path) -> None:
    """``import shadow`` runs site-packages' zero-byte ``shadow.pyc`` (it fails), never the real
    package of the ``.pth`` folder after it, which pyright resolves; a package whose
    ``__init__`` is a zero-byte ``.pyc`` fails the same way, whatever modules it holds."""
    python, site = venv_site(tmp_path)
    extra = tmp_path / "extra"
    tree(extra, {"shadow/__init__.py": "X = 1\n"})
    (site / "extra.pth").write_text(f"{extra}\n")
    (site / "shadow.pyc").write_bytes(b"")
    tree(site, {"hollow/mod.py": "Y = 2\n"})
    (site / "hollow" / "__init__.pyc").write_bytes(b"")
    repo = tree(tmp_path / "repo", {"train.py": "import shadow\nimport hollow.mod\n"})
    o = probe(ctx(repo, python, compat=False))
    assert o.evidence["missing_strict"] == ["hollow", "shadow"], o.message
    assert "is not code" in o.evidence["missing_where"]["shadow"]
    assert o.evidence["missing_official"] == []  # pyright resolved both
    compat = probe(ctx(repo, python, compat=True))
    assert compat.status == "passed", compat.message
