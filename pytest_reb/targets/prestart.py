"""Containers started before a target first asks for one, so their start overlaps the run's own.

A pyramid's first command waited for its lanes' containers to start (0.3 s on the
development machine, the engine's work on the other core), and C5's strict probe for its
twin's, while nothing else could be done.  Once collection has matched the run's one image
to its one repository, the run knows what those containers will be, mounts included:
``fixtures.prestart`` asks the target for them then (``DockerTarget.prestart``), and the
first item's set-up and the lanes' imports go on while the engine makes them.

A container is handed over only to a target whose own arguments for ``containers.run`` are
*exactly* those it was started with (image id, mounts, limits, CPU weight, labels, devices);
any other start makes its own, as before.  Nothing of the image runs in a prestarted
container (its entrypoint is our busybox ``sleep`` under the engine's init, as in every
container of ours) until a command is sent, so it is what a container started at that
moment would be.  Those never asked for are removed when the target that started them
closes; they carry the run's labels, so ``reb gc`` finds them after a SIGKILL too.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

#: How long a close waits for a container still being made, before giving it to the sweep.
MAKE_WAIT = 60.0


def key_of(kwargs: Mapping[str, Any]) -> str:
    """The arguments of ``containers.run`` as one comparable string (the SDK's ``Mount`` and
    ``DeviceRequest`` are dicts)."""
    return json.dumps(kwargs, sort_keys=True, default=repr)


class Prestarted:
    """Containers of one image being started, or started, each under the key of its arguments."""

    def __init__(self, client: Any, image_id: str) -> None:
        self._client = client
        self._image_id = image_id
        self._lock = threading.Lock()
        self._ready: dict[str, list[Future[Any]]] = {}
        self._closed = False

    def start(self, *batches: list[Mapping[str, Any]]) -> None:
        """Begin making containers, one with each ``kwargs`` of each batch: a batch's side by
        side, each batch once the one before it is made (the engine makes a few containers
        at once no faster than one after another: what is asked for first comes first)."""
        queued: list[list[tuple[Future[Any], Mapping[str, Any]]]] = []
        with self._lock:
            if self._closed:
                return
            for batch in batches:
                queued.append([(Future(), kwargs) for kwargs in batch])
                for made, kwargs in queued[-1]:
                    self._ready.setdefault(key_of(kwargs), []).append(made)

        def make(made: Future[Any], kwargs: Mapping[str, Any]) -> None:
            try:
                made.set_result(self._client.containers.run(self._image_id, **kwargs))
            except BaseException as exc:  # the asking target starts its own, and says why
                made.set_exception(exc)

        def run() -> None:
            for batch in queued:
                with self._lock:
                    closed = self._closed
                if closed:  # closed before this batch began: its containers are never made
                    for made, _ in batch:
                        made.set_exception(RuntimeError("closed before it was made"))
                    continue
                threads = [threading.Thread(target=make, args=item, name="reb-prestart",
                                            daemon=True) for item in batch]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()

        threading.Thread(target=run, name="reb-prestart", daemon=True).start()

    def take(self, kwargs: Mapping[str, Any]) -> Any | None:
        """A running container made with exactly ``kwargs`` (waiting for one being made), or
        None: none was started so, or it failed or stopped (then it is removed)."""
        with self._lock:
            waiting = self._ready.get(key_of(kwargs))
            made = waiting.pop(0) if waiting else None
        if made is None:
            return None
        try:
            ctr = made.result(MAKE_WAIT)
            ctr.reload()
        except Exception:
            self._discard(made)
            return None
        if ctr.status != "running":
            self._discard(made)
            return None
        return ctr

    def close(self) -> None:
        """Remove every container nobody took, side by side; none is started after this."""
        with self._lock:
            self._closed = True
            left = [f for queue in self._ready.values() for f in queue]
            self._ready.clear()
        removals = [threading.Thread(target=self._discard, args=(f,), name="reb-prestart-rm")
                    for f in left]
        for t in removals:
            t.start()
        for t in removals:
            t.join()

    @staticmethod
    def _discard(made: Future[Any]) -> None:
        with contextlib.suppress(Exception):
            made.result(MAKE_WAIT).remove(force=True, v=True)
