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
from support.hostile import yaml_missing_in_strict_only
from support.images import demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize("case", ["stub-yaml-empty-pyc", "stub-yaml-foreign-pyc",
                                  "early-empty-pyc"])
def test_a_module_file_python_cannot_run_leaves_its_name_missing(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str) -> None:
    yaml_missing_in_strict_only(pytester, hostile(case), demo_module(image_commit))
