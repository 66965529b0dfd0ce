"""Every value from the target prints as one line: no forged line in the terminal.

- ``newline-names``: an untracked file whose name holds ``\\n  C1 CPU  #########  PASS``,
  a carriage return and an ANSI colour; the same in the report's ``python_version`` and
  ``torch_version``; a tracked file edited, so ``reb integrity`` names the checkout.  The
  failure sections, the pyramid and ``reb integrity`` show the forged line only written
  out (``\\n  C1 CPU ...``), never as a line of its own, and no raw control character.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from support.bounds import FORGED_LINE
from support.hostile import run_reb
from support.images import module_text

pytestmark = pytest.mark.container

C1 = 'Run(["{python}", "-c", "print(\'C1_OK\')"], expect_log=["C1_OK"], timeout=60)'
RAW_CONTROL = re.compile("[\x1b\r\x07\x9b]")


def test_names_and_report_values_holding_lines_print_on_one_line(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    run = run_reb(pytester, hostile("newline-names"), {"test_lines": module_text(
        "reb/lines", image_commit, cpu=C1)}, "-m", "c1 or c5")
    c5 = run["c5"]
    assert c5.status == "failed", c5.message
    terminal = run.result.stdout.str()
    assert "reb integrity" in terminal and "FAILURES" in terminal
    lines = terminal.splitlines()
    forged = [ln for ln in lines if ln.lstrip().startswith(FORGED_LINE.strip())]
    assert forged == [], forged
    shown = [ln for ln in lines if "\\n" + FORGED_LINE in ln]
    assert any("reb/lines @" in ln for ln in shown), shown  # the integrity line
    assert any(ln.startswith("C5 ") or " C5 " in ln for ln in shown), shown  # the failure
    assert not RAW_CONTROL.search(terminal)
