"""C0 counts a stub-only package as missing: pyright resolves it, Python cannot run it.

- ``stub-only-yaml``: PyYAML removed, ``site-packages/yaml/__init__.pyi`` in its place.
  pyright resolves ``import yaml`` with no diagnostic at all (it passed C0); strict C0
  fails ``deps`` with ``yaml`` missing, compat keeps the official count (0 missing: the
  official harness counts what pyright reports).
- ``stubs-package-yaml``: a ``yaml-stubs`` package marked ``partial`` and a ``yaml/``
  folder of ``.pyi`` only: the same verdicts.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import yaml_missing_in_strict_only
from support.images import demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize("case", ["stub-only-yaml", "stubs-package-yaml"])
def test_a_stub_only_package_is_missing_in_strict_only(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str) -> None:
    yaml_missing_in_strict_only(pytester, hostile(case), demo_module(image_commit))
