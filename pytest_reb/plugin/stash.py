"""What the plugin keeps on pytest's config, under keys that both the hooks and the fixtures
read: here, so that neither imports the other (the fixtures module is registered by the
plugin, and must not import it back)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    pass

#: The run's state in this process; present only while pytest-reb is active.
SESSION_KEY = pytest.StashKey["RebSession"]()
