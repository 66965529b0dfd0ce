"""The hooks pytest-reb calls, for other plugins and conftests to implement.

Registered by the plugin's ``pytest_addhooks`` (pytest-xdist's ``newhooks``
is the model), so a conftest may implement them whether or not a run uses
pytest-reb; they are called only in runs that do.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome


@pytest.hookspec
def pytest_reb_outcome(outcome: Outcome, config: pytest.Config) -> None:
    """One tier's outcome on one target, as the run records it.

    Called on the process that writes ``outcomes.jsonl`` (the xdist controller
    under ``-n``), once per outcome it receives, right after the outcome is
    appended to the log; an outcome a resumed run already held and that came
    back through its item is passed again.  ``outcome`` is the run's own
    record: read it, do not change it.
    """


@pytest.hookspec(firstresult=True)
def pytest_reb_default_outdir(config: pytest.Config) -> str | os.PathLike[str] | None:
    """Where runs write when ``--reb-outdir`` is not given (None: ``reports/`` in the
    working directory).

    The plugin cannot tell a checkout of pytest-reb from any other project, so
    it asks: the checkout's root ``conftest.py`` answers with its own
    ``reports/``, so a run started from any folder of the checkout lands in one
    place, while in another project the plugin keeps the working directory's.
    """
