"""The honest environments of the real runs: one row per repository, read by ``build.py``.

Each row is what a careful agent would install from the repository's own
install instructions and requirement files at the pinned commit, with
packages from PyPI only (downloaded on the host into one wheelhouse; the image
is built with its network off).  What the row leaves out is said in ``left_out``
with the reason, so the C0 figure it gets can be read against it.

A row is a ``realenv.RealEnv``; the rows live in modules of a few batches each
(``rows_ab.py``, ``rows_cd.py``, ``rows_g.py``), in the order they were added, and
a new batch's rows go under a heading of their own in the last of them (or a new
module joined here once that one is full).  The rows' pins are facts about the
pinned trees, read from them; nothing here is collected by pytest.
"""

from __future__ import annotations

import rows_ab
import rows_cd
import rows_g
from realenv import RealEnv

ENVIRONMENTS: tuple[RealEnv, ...] = (*rows_ab.ROWS, *rows_cd.ROWS, *rows_g.ROWS)


def find(repo: str) -> RealEnv:
    """The row of ``repo`` (owner/name)."""
    for row in ENVIRONMENTS:
        if row.repo == repo:
            return row
    raise KeyError(f"no real-run environment for {repo}; rows: "
                   + ", ".join(r.repo for r in ENVIRONMENTS))
