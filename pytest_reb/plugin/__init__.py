"""The pytest side of pytest-reb: the only modules that import pytest."""

from __future__ import annotations

#: The module pytest loads as the plugin (the ``pytest11`` entry point ``reb``).
HOOKS = "pytest_reb.plugin.hooks"


def load_args() -> list[str]:
    """``-p pytest_reb.plugin.hooks`` for a pytest started from a checkout where pytest-reb is
    not installed (no entry point), and nothing where it is: pytest loads an installed plugin
    by itself, and naming it again with ``-p`` registers it twice (an error)."""
    from importlib.metadata import entry_points

    installed = any(ep.value == HOOKS for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", HOOKS]
