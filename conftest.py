"""Root conftest: what a checkout of pytest-reb adds to the installed plugin, and nothing else.

Every pytest run that collects anything in this checkout loads this file
(pytest loads the conftests of the arguments' folders and their parents up to
the folder of ``pyproject.toml``, from whatever working directory), so it is
where the checkout's own facts live:

* the plugin, from this tree, when no installed copy registered it: a plain
  checkout runs ``pytest repos`` and ``pytest demo`` like an installed one, and
  an installed one is never registered twice (pytest refuses a plugin module
  registered under two names);
* the folders that hold no tests (shims and setup scripts run inside targets,
  the real-run scripts, test data) are never collected, even with the working
  directory inside one of them: their files would be imported by pytest's
  collection (``--doctest-modules``, a ``test_*.py`` fixture) on the host;
* a run's default ``reports/`` is this checkout's own, whichever folder of it
  pytest is started from; with no checkout (the plugin installed in another
  project) the plugin keeps ``reports/`` in the working directory.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
#: The name the ``pytest11`` entry point registers the plugin under (pyproject.toml).
PLUGIN_NAME = "reb"
#: Folders of the checkout that hold no tests, whatever their files are called.
NOT_TESTS = tuple(ROOT / part for part in ("repos/shims", "tests/realruns", "tests/data"))

# pytest's default import mode puts this folder on sys.path before importing this file;
# ``--import-mode=importlib`` does not, and a checkout that is not installed needs it.
if importlib.util.find_spec("pytest_reb") is None:
    sys.path.insert(0, str(ROOT))


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the plugin unless it already is (entry point, ``-p``) or ``-p no:reb`` said no.

    Done here, not with ``pytest_plugins``: this is the first hook a conftest gets,
    called while it is registered and before the command line is parsed, so the
    plugin's own options and hooks are added as an installed one's would be.
    """
    if pluginmanager.is_blocked(PLUGIN_NAME):
        return
    plugin = importlib.import_module("pytest_reb.plugin.hooks")
    if not pluginmanager.is_registered(plugin):
        pluginmanager.register(plugin, PLUGIN_NAME)


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Skip the non-test folders and everything below them.

    ``collect_ignore`` would not do: it names paths, not trees, so a run started
    inside one of these folders would still collect what lies below it.
    """
    path = collection_path.resolve()
    return True if any(path.is_relative_to(part) for part in NOT_TESTS) else None


@pytest.hookimpl(optionalhook=True)  # no such hook when ``-p no:reb`` left the plugin out
def pytest_reb_default_outdir() -> Path:
    """The checkout's ``reports/``, written relative to the working directory when it is
    inside it (so ``pytest demo`` from the top still prints ``reports/<run>``)."""
    reports = ROOT / "reports"
    cwd = Path.cwd()
    return Path(os.path.relpath(reports, cwd)) if reports.is_relative_to(cwd) else reports
