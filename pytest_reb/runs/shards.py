"""Spreading targets over pytest-xdist workers, and over machines (shards).

Every item of one (repository module, target) pair must run on one worker:
the pair's containers are reused across its tiers, and its probes run once.
xdist's ``loadscope`` groups by module, which would put every agent's image
of a repository on one worker; ``loadgroup`` is broken on pytest 9.2
(xdist#1386).  ``scheduling.TargetScheduling`` is ``loadscope`` with the
target's parameter id added to the scope (``scope_of``), in a module of its
own so xdist's schedulers are imported only under ``-n``.  Shards split the pairs deterministically
so several machines can share a matrix and ``reb merge`` can join them.
"""

from __future__ import annotations

import re

_PARAM = re.compile(r"^(?P<module>[^:]+)::[^\[]+(?P<param>\[.*\])$")


def scope_of(nodeid: str) -> str:
    """``repos/test_x.py::test_c1_cpu[img]`` -> ``repos/test_x.py[img]``."""
    m = _PARAM.match(nodeid)
    if m:
        return m.group("module") + m.group("param")
    return nodeid.rsplit("::", 1)[0]


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> (2, 4); raises ValueError with a message a person can act on."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--reb-shard takes I/N with 1 <= I <= N, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_keys(keys: set[str], shard: tuple[int, int]) -> set[str]:
    """The pairs of shard ``i`` of ``n``: every n-th of the sorted keys, so shards are even.

    Every machine collects the same modules and matrix, so every machine
    computes the same split and together they cover each pair exactly once.
    """
    index, count = shard
    return {key for pos, key in enumerate(sorted(keys)) if pos % count == index - 1}
