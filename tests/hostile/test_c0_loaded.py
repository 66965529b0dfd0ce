"""Strict C0 counts what Python would load, not a file the image names.

- ``stub-yaml-empty-pyc``: PyYAML removed, a stub-only ``yaml/`` and a zero-byte
  ``yaml.pyc`` beside it.  ``import yaml`` finds the ``.pyc`` and fails; it passed strict C0
  (the ``.pyc`` counted as runtime source).  Now strict fails ``deps`` with ``yaml`` missing;
  compat keeps the official count (pyright resolved the stub: 0 missing).
- ``stub-yaml-foreign-pyc``: the ``.pyc`` is one of Python 3.9 (its magic number).  Same.
- ``early-empty-pyc``: PyYAML intact, but the image's ``PYTHONPATH`` folder comes first and
  holds a zero-byte ``yaml.pyc``: Python loads that one, never the package.  Same.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import run_reb
from support.images import demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize("case", ["stub-yaml-empty-pyc", "stub-yaml-foreign-pyc",
                                  "early-empty-pyc"])
def test_a_module_file_python_cannot_run_leaves_its_name_missing(
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
