"""Ctrl-C ends a run as interrupted even when pytest cannot show its traceback: CPython 3.11's
AST converter keeps its recursion depth interpreter-wide, and pytest's ``ast.parse`` of the
traceback's source beside a thread converting an AST raised ``SystemError`` in the terminal's
report (a full run's interrupted demo ended with exit 1).  Through pluggy, as pytest calls it."""

from __future__ import annotations

import pluggy
import pytest
from _pytest import hookspec

from pytest_reb.plugin.report_hooks import ReportHooks


class Terminal:
    """Stands where pytest's terminal reporter is: it fails as it failed in the run."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self, excinfo: object) -> None:
        raise self.error


def called_with(error: BaseException) -> None:
    pm = pluggy.PluginManager("pytest")
    pm.add_hookspecs(hookspec)
    pm.register(Terminal(error))
    pm.register(ReportHooks.__new__(ReportHooks))
    pm.hook.pytest_keyboard_interrupt(excinfo=None)


def test_the_ast_depth_mismatch_in_the_interrupt_report_is_swallowed() -> None:
    called_with(SystemError("AST constructor recursion depth mismatch (before=78, after=26)"))


def test_any_other_error_of_the_interrupt_report_still_surfaces() -> None:
    with pytest.raises(SystemError, match="something else"):
        called_with(SystemError("something else"))
    with pytest.raises(ValueError):
        called_with(ValueError("mismatch"))
