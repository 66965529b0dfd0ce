"""Code of the image that writes the witness's record, or ends the run as if it finished.

Each case makes the demo's C1 print the marker and exit 0 without training, so compat
passes it (the official rule); strict must fail it ``entrypoint_not_run`` (issue 25, class 1):

- ``pth-bytes-forger``: a ``.pth`` writes start/reach/finish lines to the record through a
  *bytes* path, then ``os._exit(0)`` before ``train.py``: the open is a taint;
- ``env-preload-forger``: the image's ``ENV LD_PRELOAD`` library forges the record in its
  constructor, before ``main``: the host reads the image's config and refuses the record;
- ``system-preload-forger``: the same library listed in ``/etc/ld.so.preload``;
- ``static-interpreter-forger``: the report's interpreter is a static ELF that forges the
  record for ``train.py`` and execs the real Python for everything else: no preload
  reaches a static executable, so the host refuses any record of its run;
- ``import-hook-exit``: an import hook calls ``os._exit(0)`` at the entrypoint's own
  ``import torch``: an exit from outside the checkout's code is no finish;
- ``ctypes-fd-forger``: after the start, at that import, opens the record through libc by
  ctypes, writes reach and finish with ``os.write`` and leaves by exec'ing ``/bin/true``
  (exit 0, past the witness's ``_exit``): the file says "finish" and nothing in it says
  otherwise, but the host never saw the process stopped at a finish;
- ``memmove-stop-forger``: finds the witness's state by unaudited ``ctypes.memmove`` reads,
  finds its page read-only, is refused ``mprotect``, stops itself with ``SIGSTOP`` (a child
  continues it): the host does not take a stop whose state is not the witness's, and the
  refusal is a taint.

For none of them did the host take a finish (``host`` in the witness evidence).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import c1_not_a_finish
from support.images import demo_module

pytestmark = pytest.mark.container

CASES = {  # case -> words of the strict message
    "pth-bytes-forger": "the witness was interfered with: open /tmp/reb-witness-",
    "env-preload-forger": "the image preloads '/opt/forge/libforge.so' (its ENV LD_PRELOAD)",
    "system-preload-forger": "/etc/ld.so.preload loads /opt/forge/libforge.so",
    "static-interpreter-forger": "the interpreter /usr/local/bin/python is a static executable",
    "ctypes-fd-forger": "the record file says 'finish', but the host never saw the process "
                        "stopped at a finish",
    "memmove-stop-forger": "the witness was interfered with: ctypes.dlsym mprotect",
    "import-hook-exit": "ran but did not finish",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_record_the_target_could_write_is_not_a_finish(pytester: pytest.Pytester,
                                                        hostile: Callable[[str], str],
                                                        image_commit: str, case: str) -> None:
    c1 = c1_not_a_finish(pytester, hostile(case), demo_module(image_commit), CASES[case])
    hosts = [p.get("host") for p in c1.evidence["witness"]["processes"] if p.get("host")]
    # no finish the host took (it reads every end of the run: an exit from elsewhere is none)
    assert not [h for h in hosts if h["end"] in ("finish", "exit 0")], hosts
    if case == "import-hook-exit":
        assert "exit 0 from" in c1.message and "reb_end.py" in c1.message
