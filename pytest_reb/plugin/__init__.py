"""The pytest side of pytest-reb: the only modules that import pytest."""
