"""The real runs' official-bundle reader keeps the pyright counts wherever a bundle writes them.

Some official bundles (Kokoro-FastAPI's, comic-translate's) put
``missing_packages_count`` and ``total_imported_packages_count`` at the top
level of ``build_output/pyright/results.json``, others under ``metrics``; M5
reads both places (official-harness.md, section 6).  ``official.stage_verdict``
read only ``metrics``, so those rows lost the official C0 count.
"""

from __future__ import annotations

from official import stage_verdict  # tests/realruns is on the suite's pythonpath

COUNTS = {"missing_packages_count": 10, "total_imported_packages_count": 75}


def test_top_level_counts_are_kept() -> None:
    kept = stage_verdict({"status": "success", "exit_code": 0, **COUNTS})
    assert {k: kept[k] for k in COUNTS} == COUNTS


def test_counts_under_metrics_are_kept() -> None:
    kept = stage_verdict({"status": "success", "metrics": dict(COUNTS)})
    assert {k: kept[k] for k in COUNTS} == COUNTS


def test_top_level_wins_over_metrics() -> None:
    """M5 reads the top-level field first."""
    kept = stage_verdict({"status": "success", **COUNTS,
                          "metrics": {"missing_packages_count": 99}})
    assert kept["missing_packages_count"] == 10


def test_a_stage_without_counts_gets_none_invented() -> None:
    kept = stage_verdict({"status": "failure", "failure_category": "invalid_json"})
    assert not set(COUNTS) & set(kept)
