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
from support.hostile import run_reb
from support.images import demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize("case", ["stub-only-yaml", "stubs-package-yaml"])
def test_a_stub_only_package_is_missing_in_strict_only(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str) -> None:
    image = hostile(case)
    strict = run_reb(pytester, image, {"test_demo": demo_module(image_commit)}, "-m", "c0")
    c0 = strict["c0"]
    assert (c0.status, c0.category, c0.strict) == ("failed", "deps", False), c0.message
    assert c0.evidence["missing"] == ["yaml"] and c0.evidence["missing_official"] == []
    compat = run_reb(pytester, image, {"test_demo": demo_module(image_commit)}, "-m", "c0",
                     "--reb-compat")
    assert (compat["c0"].status, compat["c0"].evidence["missing_count"]) == ("passed", 0)
