"""``targets.family``: a target's copies retired with it, none joining afterwards."""

from __future__ import annotations

import gc

from pytest_reb.targets.family import Family


class Copy:
    """A target copy that counts its retirements."""

    def __init__(self) -> None:
        self.retired = 0

    def retire(self) -> None:
        self.retired += 1


def test_retiring_the_family_retires_each_member_once() -> None:
    family, members = Family(), [Copy(), Copy()]
    assert all(family.join(m) for m in members)
    family.retire()
    family.retire()
    assert [m.retired for m in members] == [1, 1]


def test_a_member_joining_after_the_end_is_refused_and_not_kept() -> None:
    family = Family()
    family.retire()
    late = Copy()
    assert family.join(late) is False
    family.retire()
    assert late.retired == 0  # the caller marks it retired; the family holds nothing


def test_a_member_nobody_holds_is_not_kept_alive() -> None:
    family = Family()
    family.join(Copy())
    gc.collect()
    family.retire()  # nothing left to retire, nothing raised
    assert family.retired
