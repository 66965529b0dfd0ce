"""The harness image carries pytest-reb's own metadata, however the package was installed.

A checkout's editable install is found as its ``pytest_reb.egg-info`` (which names the file
``PKG-INFO``, not ``METADATA``); copying an empty METADATA left a distribution without a name in
the harness, and pytest-metadata's ``pytest_configure`` then stopped every Job's run.
"""

from __future__ import annotations

from pytest_reb.loop.cluster import harness


def test_the_copied_metadata_names_the_distribution() -> None:
    files = dict(harness._package_files())
    [meta] = [v for k, v in files.items() if k.endswith(".dist-info/METADATA")]
    assert b"Name: pytest-reb" in meta or b"Name: pytest_reb" in meta
    [entry] = [v for k, v in files.items() if k.endswith(".dist-info/entry_points.txt")]
    assert b"pytest_reb.plugin.hooks" in entry
