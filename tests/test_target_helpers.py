"""Two helpers of every target (``pytest_reb/targets``): the bounded output tail
(``TailBuffer``) and ``CUDA_VISIBLE_DEVICES`` mapped through a GPU lease (``cuda_visible``).
"""

from __future__ import annotations

import pytest

from pytest_reb.targets import TailBuffer, cuda_visible


def test_tail_buffer_keeps_the_end_and_counts_everything() -> None:
    buf = TailBuffer(limit=10)
    for _ in range(1000):
        buf.feed(b"0123456789abc")
    assert buf.total == 13000
    assert buf.text().endswith("456789abc") and "12990 earlier bytes not kept" in buf.text()


@pytest.mark.parametrize(("env", "lease", "visible"), [
    ({}, [], ""),
    ({"CUDA_VISIBLE_DEVICES": "0,1"}, ["3", "5"], "3,5"),
    ({"CUDA_VISIBLE_DEVICES": "1"}, ["3", "5"], "5"),
    ({}, ["2"], "2"),
    ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, ["4"], "4"),   # asks for more than leased: the lease
])
def test_cuda_visible_maps_logical_ids_through_the_lease(env: dict[str, str], lease: list[str],
                                                          visible: str) -> None:
    assert cuda_visible(env, lease) == visible
