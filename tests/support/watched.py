"""A command run under the witness with the host's observer watching it, as a target runs one.

The witness's pass comes from what the host reads in a process stopped for it
(``pytest_reb.witness.observe``), so a test that runs Python under the library
must watch it the same way: start it in its own session, observe its process
tree while it runs, then merge what the host saw with the record file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_reb import witness
from pytest_reb.witness import observe


def watched(argv: Sequence[str], cwd: str | Path, env: Mapping[str, str], library: str,
            record: Path, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str],
                                                        dict[int, witness.Process]]:
    """Run ``argv`` (its ``env`` already holds the witness's variables) and return its output
    and the stage's processes as the host and the record saw them."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    with observe.Observer(observe.Library(library, library), lambda: observe.tree(proc.pid),
                          lambda: session(proc.pid)) as obs:
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            for pid in session(proc.pid):  # what outlived it (stopped or not) ends here
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    text = record.read_text() if record.exists() else ""
    return (subprocess.CompletedProcess(list(argv), proc.returncode, out, err),
            witness.merge([text], [obs.seen]))


def session(sid: int) -> list[int]:
    """The processes of session ``sid`` (the command's own, also those its exit orphaned: a
    multiprocessing resource tracker ends after its parent, and stops for the host then)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()
                if int(stat[3]) == sid:
                    found.append(int(entry))
    return found
