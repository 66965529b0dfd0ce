"""One command in a running container, timed and stopped by the host.

The Docker SDK turns the socket timeout off for exec streams, so nothing of the
engine bounds a command: its output is read on a thread of ours
(``open_stream``), the deadline is the host's clock on that thread, and the
stop is the host's signals to every process of the container's cgroup but the
keep-alive (``stop``), never a binary of the image nor one of ours that the
image could signal.  A container that died under a command is the machine's
failure, not the environment's (``check_alive``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Mapping
from typing import Any

from pytest_reb.pids import alive
from pytest_reb.targets.base import HOST_SLACK, KILL_GRACE
from pytest_reb.targets.cgroup import Cgroup
from pytest_reb.targets.container import COMMAND_USER
from pytest_reb.targets.errors import InfraError
from pytest_reb.targets.result import TailBuffer


def open_stream(api: Any, ctr: Any, argv: list[str], env: Mapping[str, str],
                cwd: str | None) -> tuple[str, threading.Thread, TailBuffer, TailBuffer]:
    """``argv`` started in ``ctr`` as ``COMMAND_USER``: its exec id, a thread (not started
    yet) that reads its output until the stream ends, and the tails it fills (stdout,
    stderr).  ``InfraError`` when the engine refuses the exec."""
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    out, err = TailBuffer(), TailBuffer()
    try:
        exec_id = api.exec_create(ctr.id, argv, environment=env or None,
                                  workdir=cwd or None, user=COMMAND_USER)["Id"]
        stream = api.exec_start(exec_id, stream=True, demux=True)
    except (DockerException, RequestException) as exc:
        raise InfraError(f"cannot exec in {ctr.name}: {str(exc)[:300]}") from None

    def pump() -> None:
        with contextlib.suppress(Exception):
            for o, e in stream:
                if o:
                    out.feed(o)
                if e:
                    err.feed(e)

    return exec_id, threading.Thread(target=pump, name="reb-exec", daemon=True), out, err


def stop(reader: threading.Thread, cgroup: Cgroup | None, keep: set[int], *,
         timed_out: bool) -> bool:
    """Stop a command still running: at its timeout TERM, then KILL after ``KILL_GRACE``,
    both to every process of ``cgroup`` but ``keep`` (the keep-alive); past the limit at once
    KILL.  Whether its stream is still open after that: then the container must go."""
    if not reader.is_alive():
        return False
    if cgroup is not None:
        with contextlib.suppress(OSError):
            if timed_out:  # a process stopped (for the witness) takes TERM once continued
                cgroup.signal_all(signal.SIGTERM, keep)
                cgroup.signal_all(signal.SIGCONT, keep)
                reader.join(KILL_GRACE)
            cgroup.kill_all(keep)
    reader.join(HOST_SLACK)
    return reader.is_alive()


def check_alive(ctr: Any, keep: set[int]) -> None:
    """A container that stopped under a command is an infrastructure failure.

    Its init and keep-alive (``keep``) are looked at first: a container killed
    from outside ends the command's stream before the engine says it stopped,
    and the sweep is quick enough to ask the engine in between.
    """
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    gone = [pid for pid in keep if not alive(pid)]
    if gone:
        raise InfraError(f"container {ctr.name} stopped during the command (its init or "
                         f"keep-alive died: host pids {sorted(gone)})")

    try:
        ctr.reload()
    except (DockerException, RequestException) as exc:
        raise InfraError(f"container {ctr.name} vanished during the command: "
                         f"{str(exc)[:200]}") from None
    if ctr.status != "running":
        state = ctr.attrs.get("State", {})
        raise InfraError(f"container {ctr.name} stopped during the command (status "
                         f"{ctr.status}, exit {state.get('ExitCode')}, "
                         f"OOMKilled {state.get('OOMKilled')})")
