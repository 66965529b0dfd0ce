"""``reb gc``'s sweep (``housekeeping.py``): which containers' makers count as gone.
"""

from __future__ import annotations


def test_gc_spares_makers_it_cannot_check() -> None:
    import os
    import socket

    from pytest_reb.targets.housekeeping import _owner_alive

    here = socket.gethostname()
    assert _owner_alive(f"{here}:{os.getpid()}")
    assert not _owner_alive(f"{here}:{2**22 + 12345}")   # no such pid: an orphan
    assert _owner_alive("some-other-host:1")             # a shared engine's other client
    assert not _owner_alive("")
