"""What the image printed is shown as data: one escape, where outcomes are made and read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_reb.outcome import Outcome, one_line, shown

ATTACK = "\x1b[2J\x1b[H\x1b[32mALL TIERS PASSED\x1b[0m\r\x07\x9b1m\u202eabc\u2066\u2028"


def test_controls_are_written_out_and_lines_stay() -> None:
    assert shown(ATTACK) == (r"\x1b[2J\x1b[H\x1b[32mALL TIERS PASSED\x1b[0m\x0d\x07\x9b1m"
                             r"\u202eabc\u2066\u2028")
    assert shown("a\n\tb é 漢") == "a\n\tb é 漢"


@given(st.text())
def test_shown_is_idempotent_and_leaves_no_control(text: str) -> None:
    once = shown(text)
    assert shown(once) == once
    assert not any(c in once for c in "\x1b\r\x07\x9b\u202e\u2066")


def test_an_outcome_read_back_is_escaped_everywhere() -> None:
    raw = Outcome("r", "t\x1b", "c1", "failed", message=ATTACK, command=["x\x07"],
                  evidence={"k\x1b": [ATTACK, 3]}, stderr_tail=ATTACK).to_json()
    got = Outcome.from_json(raw)
    for text in (got.message, got.stderr_tail, got.target, got.command[0],
                 *got.evidence, got.evidence[r"k\x1b"][0]):
        assert not any(c in text for c in "\x1b\r\x07\x9b\u202e"), text
    assert got.evidence[r"k\x1b"][1] == 3


def test_one_line_writes_out_newlines_and_tabs_too() -> None:
    assert one_line("a\nb\tc\r\x1b[1m") == r"a\nb\tc\x0d\x1b[1m"
    assert one_line(3) == "3"


@given(st.text())
def test_one_line_is_one_line_and_idempotent(text: str) -> None:
    once = one_line(text)
    assert one_line(once) == once
    assert len(once.splitlines()) <= 1 and "\t" not in once
