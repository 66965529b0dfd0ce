"""Root conftest: running from a checkout loads the plugin from this tree.

An installed pytest-reb registers itself through its ``pytest11`` entry
point; this file makes a plain checkout behave the same without installing.
"""

import importlib.util

if importlib.util.find_spec("pytest_reb.plugin") is not None:
    import pytest_reb  # noqa: F401  (the entry point, or this tree on sys.path, provides it)
