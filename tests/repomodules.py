"""The ``repos/`` modules as the shim and asset tests load them: by path, once each.

Shared by the test files of shims and prepared assets (``from repomodules import
module``; rootdir-relative imports work because pytest puts ``tests/`` on sys.path).
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

REPOS = Path(__file__).resolve().parents[1] / "repos"


@cache
def module(stem: str) -> ModuleType:
    """``repos/<stem>.py`` imported under a private name (it is also a pytest module)."""
    spec = importlib.util.spec_from_file_location(f"_reb_repos_under_test.{stem}",
                                                  REPOS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
