"""C0's count of a repository's imports: the names its Python files import, the denominator."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from support.c0 import DEMO_SOURCE
from support.repomodules import write_tree as tree

from pytest_reb.pyramid.c0_imports import imported_names, imports_total, top_level_imports

ROOT = Path(__file__).resolve().parent.parent


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
