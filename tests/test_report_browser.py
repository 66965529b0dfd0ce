"""The HTML report and the ``reb table`` page, opened in a real browser (headless Chromium).

Two demo runs on the real images (a good environment and one missing a
dependency) make the pages: the first with ``--html --self-contained-html``,
then ``reb table`` over both, labelled as two agents, with the paper's rows.
Chromium (Debian's ``chromium``; ``tests/run.sh`` installs it) loads each page
from disk with the network parts switched off, and what its DOM holds after
the page's own scripts ran is checked: the chart and the table.  A
screenshot of each is saved, into ``$REB_SCREENSHOTS`` when set (docs/reports.md's
images are made that way), else into the test's temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# chart is loaded here, once: pytester's in-process runs drop the modules a run
# imported, and numpy's extension cannot be loaded twice in one process.
import pytest_reb.report.chart  # noqa: F401
from pytest_reb.loop import cli

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync")


@pytest.fixture(scope="session")
def browser() -> str:
    """Chromium, or a skip that says why (asked first: before any image is built)."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed (apt-get install chromium; tests/run.sh does)")
    return path


def chromium(browser: str, page: Path, profile: Path, *args: str
             ) -> subprocess.CompletedProcess[str]:
    """One headless Chromium run on ``page`` with a new, empty profile."""
    profile.mkdir(parents=True)
    return subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                           "--virtual-time-budget=5000", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)


def dom_and_screenshot(browser: str, page: Path, shot: Path, work: Path, size: str) -> str:
    dom = chromium(browser, page, work / f"{shot.stem}-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    taken = chromium(browser, page, work / f"{shot.stem}-shot", f"--screenshot={shot}",
                     f"--window-size={size}", "--hide-scrollbars")
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == tuple(int(v) for v in size.split(","))
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
        assert colours is None or len(colours) > 50, "the screenshot is (nearly) blank"
    return dom.stdout


@pytest.mark.container
def test_report_and_table_in_a_browser(browser: str, pytester: pytest.Pytester, demo_image: str,
                                       missing_dep_image: str, tmp_path: Path) -> None:
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    common = ["--rootdir", str(pytester.path), "--reb-outdir", str(pytester.path / "reports"),
              "-p", "no:cacheprovider", "-p", "no:benchmark"]
    report = pytester.path / "demo.html"
    first = pytester.runpytest("--reb-image", demo_image, f"--html={report}",
                               "--self-contained-html", *common)
    assert first.ret in (0, 1) and report.exists(), first.stdout.str()[-3000:]
    second = pytester.runpytest("--reb-image", missing_dep_image, *common)
    assert second.ret == 1, second.stdout.str()[-3000:]
    runs = sorted(p.parent for p in (pytester.path / "reports").glob("*/outcomes.jsonl"))
    assert len(runs) == 2
    good, sloppy = (runs if (runs[0] / "outcomes.jsonl").read_text().count(demo_image)
                    else runs[::-1])
    out = pytester.path / "table"
    assert cli.main(["table", f"{good}:good-agent", f"{sloppy}:sloppy-agent", "--paper",
                     "--out", str(out)]) == 0
    for suffix in ("csv", "md", "html"):
        assert (out / f"reb_table.{suffix}").stat().st_size > 0

    shots = Path(os.environ.get("REB_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    dom = dom_and_screenshot(browser, report, shots / "html-report.png", tmp_path, "1280,1700")
    assert re.search(r'<img id="reb-pyramid-chart" [^>]*src="data:image/png;base64,', dom)
    assert '<table id="results-table"' in dom
    for column in ("Repository", "Target", "Tier", "Failure category"):
        assert re.search(rf'<th class="sortable[^"]*" data-column-type="reb_\w+">{column}</th>',
                         dom), column
    # the rows are drawn by the report's own script: they are in the DOM only if it ran
    assert len(re.findall(r'<td class="col-reb_repo">reb/tinynet</td>', dom)) == 6
    assert '<td class="col-reb_category">insufficient_hardware</td>' in dom

    dom = dom_and_screenshot(browser, out / "reb_table.html", shots / "reb-table.png", tmp_path,
                             "1400,1000")
    assert re.search(r'<img id="reb-table-chart" [^>]*src="data:image/png;base64,', dom)
    body = re.search(r'<table id="reb-table">.*?</table>', dom, re.S)
    assert body, "no table in the DOM"
    rows = re.findall(r"<tr class=\"(measured|published)\"><td>([^<]*)</td>", body.group(0))
    assert rows == [("measured", "good-agent"), ("measured", "sloppy-agent"),
                    ("published", "Codex (gpt-5.1-codex) †"),
                    ("published", "Claude Code (GLM-4.7) †"),
                    ("published", "Claude (Sonnet 4.5) †"),
                    ("published", "NexAU (DeepSeek-V3.1-Nex-N1) †")]
