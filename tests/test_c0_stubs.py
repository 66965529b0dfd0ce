"""C0 and stub-only packages: a name with ``.pyi`` files and no runtime source is missing.

pyright resolves ``import yaml`` against a ``site-packages/yaml/`` that holds only
``__init__.pyi`` without any diagnostic, so neither the official count nor a rule
on pyright's output sees it; the environment cannot import ``yaml.safe_load``.  The
driver looks for stub entries (PEP 561: ``n.pyi``, ``n-stubs/`` partial or not, a
package of ``.pyi`` only) with runtime source nowhere.  Strict counts them; compat keeps
the official count, which counts only ``reportMissingImports``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.repomodules import write_tree as tree

from pytest_reb.pyramid.c0_imports import probe
from pytest_reb.pyramid.context import Context
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import ReportLoad
from pytest_reb.spec import Repo
from pytest_reb.targets import LocalTarget

SOURCES = {"train.py": "import os\nimport yaml, tomlkit as t\nfrom ruamel.yaml import YAML\n"
                       "import real_pkg\nimport ns_pkg.mod\n"}


@pytest.fixture
def stubbed_python(tmp_path: Path) -> str:
    """A venv whose site-packages holds stubs only for three names, runtime code for two."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = (venv / "lib").glob("python3*/site-packages")
    tree(site, {
        "yaml/__init__.pyi": "def safe_load(s: str) -> object: ...\n",  # the example
        "tomlkit-stubs/__init__.pyi": "x: int\n",
        "tomlkit-stubs/py.typed": "partial\n",
        "ruamel/yaml/__init__.pyi": "class YAML: ...\n",  # a namespace of stubs only
        "ruamel/py.typed": "",
        "real_pkg/__init__.py": "",
        "real_pkg/__init__.pyi": "",  # inline stubs beside runtime code: present
        "ns_pkg/mod.py": "",  # a namespace package with a runtime module: present
        "ns_pkg/mod.pyi": "",
    })
    return str(venv / "bin" / "python")


def ctx(repo: Path, python: str, *, compat: bool) -> Context:
    local = LocalTarget(gpus=[])
    return Context(repo=Repo("t/stubs", commit="0" * 40, imports_total=6),
                   target_name="local://", connect=lambda: local,
                   read_report=lambda _: ReportLoad("none", category="missing_report",
                                                  message="no report"),
                   options=RebOptions(python=python, repo_dir=str(repo), compat=compat))


def test_stub_only_packages_are_missing_in_strict(tmp_path: Path, stubbed_python: str) -> None:
    repo = tree(tmp_path / "repo", SOURCES)
    o = probe(ctx(repo, stubbed_python, compat=False))
    assert (o.status, o.category, o.strict) == ("failed", "deps", False), o.message
    assert o.evidence["missing_strict"] == ["ruamel", "tomlkit", "yaml"]
    assert o.evidence["missing_where"]["yaml"].startswith("stubs only")
    assert o.evidence["missing_official"] == []  # pyright reported none of them


def test_compat_keeps_the_official_count(tmp_path: Path, stubbed_python: str) -> None:
    repo = tree(tmp_path / "repo", SOURCES)
    o = probe(ctx(repo, stubbed_python, compat=True))
    assert (o.status, o.compat) == ("passed", True), o.message
    assert o.evidence["missing"] == [] and o.evidence["missing_count"] == 0


def test_a_stub_only_package_nobody_imports_is_not_counted(tmp_path: Path,
                                                           stubbed_python: str) -> None:
    repo = tree(tmp_path / "repo", {"train.py": "import os\nimport real_pkg\n",
                                    "notes.py": '"""import yaml in a docstring is no import"""\n'})
    o = probe(ctx(repo, stubbed_python, compat=False))
    assert o.evidence["missing_strict"] == [], o.message
