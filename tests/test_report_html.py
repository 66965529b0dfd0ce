"""pytest-html: run metadata, the four columns, per-item evidence, the pyramid chart.

Runs go through pytest itself on ``local://`` (no Docker): the entrypoint
prints HTML, so the tests also see that what a target prints is escaped.
The report's data is read back from the JSON pytest-html embeds in the page.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any

import pytest
from support.minirepo import mini_project

# Loaded here, once: pytester's in-process runs drop the modules a run imported,
# and numpy's extension cannot be loaded twice in one process.
import pytest_reb.report.chart  # noqa: F401

HOSTILE = "<script>alert('x')</script>"


@pytest.fixture
def mini(pytester: pytest.Pytester) -> list[str]:
    """A repository module and its checkout; returns the run's arguments."""
    return mini_project(pytester, f"print({HOSTILE!r})\nprint('hello from main')\n")


def report_data(page: str) -> dict[str, Any]:
    blob = re.search(r'data-jsonblob="([^"]*)"', page)
    assert blob, "no data blob in the page"
    return json.loads(html.unescape(blob.group(1)))  # type: ignore[no-any-return]


def rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Test id -> its call row (the first entry pytest-html keeps per test)."""
    return {nodeid.split("::")[-1]: entries[0] for nodeid, entries in data["tests"].items()}


def check_report(page: str) -> dict[str, dict[str, Any]]:
    """What every report must hold; returns the rows for more checks."""
    for key, title in (("reb_repo", "Repository"), ("reb_target", "Target"),
                       ("reb_tier", "Tier"), ("reb_category", "Failure category")):
        assert f'<th class="sortable" data-column-type="{key}">{title}</th>' in page
    data = report_data(page)
    env = data["environment"]
    assert env["reb mode"] == "strict"
    assert "reports" in env["reb run"]
    assert env["reb GPUs (this host)"]
    assert env["reb hosts"] == "local://"
    got = rows(data)
    c1 = got["test_c1_cpu[local://]"]
    assert c1["reb_repo"] == "me/mini" and c1["reb_target"] == "local://"
    assert c1["reb_tier"] == "C1" and c1["reb_category"] == ""
    assert got["test_c3_single_gpu[local://]"]["reb_category"] == "insufficient_hardware"
    assert got["test_c4_multi_gpu[local://]"]["reb_tier"] == "C4"
    [extra] = [e for e in c1["extras"] if e["format_type"] == "html"]
    body = extra["content"]
    assert "main.py" in body and "<dt>command</dt>" in body and "hello from main" in body
    assert "<dt>evidence</dt>" in body and "gpu_holders" in body
    assert HOSTILE not in body and html.escape(HOSTILE) in body
    chart = re.search(r'<img id="reb-pyramid-chart" alt="[^"]*" src="data:image/png;base64,'
                      r'([A-Za-z0-9+/=]+)"', page)
    assert chart, "no embedded pyramid chart"
    assert base64.b64decode(chart.group(1)).startswith(b"\x89PNG\r\n\x1a\n")
    assert "total: C1 1/1  C3 0/1  C4 0/0" in page
    return got


def test_self_contained_report(pytester: pytest.Pytester, mini: list[str]) -> None:
    result = pytester.runpytest(*mini, "--html=report.html", "--self-contained-html")
    result.assert_outcomes(passed=1, failed=1, skipped=1, deselected=3)
    got = check_report((pytester.path / "report.html").read_text())
    assert not (pytester.path / "assets").exists(), "a self-contained report wrote assets"
    # the Duration column is the tier's (its outcome's), not the pytest item's
    from pytest_reb.plugin.html import tier_duration

    [log] = pytester.path.glob("reports/*/outcomes.jsonl")
    tiers = {(o := json.loads(line))["tier"]: o["duration"]
             for line in log.read_text().splitlines()}
    assert got["test_c1_cpu[local://]"]["duration"] == tier_duration(tiers["c1"])
    assert tier_duration(2.7) == "00:00:03" and tier_duration(0.0012) == "1 ms"


def test_report_under_xdist_carries_the_items_evidence(pytester: pytest.Pytester,
                                                       mini: list[str]) -> None:
    result = pytester.runpytest(*mini, "-n", "2", "--html=report.html")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    check_report((pytester.path / "report.html").read_text())


def test_without_pytest_html_or_a_page_nothing_is_registered(pytester: pytest.Pytester,
                                                   mini: list[str]) -> None:
    pytester.makeconftest(
        "def pytest_report_header(config):\n"
        "    return f'reb-html: {config.pluginmanager.has_plugin(\"reb-html\")}'\n")
    result = pytester.runpytest(*mini, "-p", "no:html")
    result.assert_outcomes(passed=1, failed=1, skipped=1, deselected=3)
    result.stdout.fnmatch_lines(["reb-html: False", "*reb pyramid*"])
    no_page = pytester.runpytest(*mini)  # pytest-html loaded, no page asked for
    no_page.stdout.fnmatch_lines(["reb-html: False"])
    with_html = pytester.runpytest(*mini, "--html=report.html")
    with_html.stdout.fnmatch_lines(["reb-html: True"])


def test_a_collection_error_still_makes_a_report(pytester: pytest.Pytester,
                                                 mini: list[str]) -> None:
    pytester.makepyfile(test_broken="this is not python\n")
    result = pytester.runpytest(*mini, "--html=report.html")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = report_data((pytester.path / "report.html").read_text())
    [broken] = [rows for nodeid, rows in data["tests"].items() if "test_broken" in nodeid]
    assert broken[0]["reb_repo"] == "" and broken[0]["reb_tier"] == ""
