"""One Docker SDK client per process and engine address, shared by every part of a run.

``docker.from_env()`` builds an HTTP session and asks the engine its API version
(``GET /version``) each time it is called; a pyramid asked for one at the
pre-flight, the image check, the target, the checkout's commit, the HTML
metadata and the final sweep: six round trips and sessions for one engine.
The client is stateless towards the engine (each call is its own request on a
pooled connection, which ``requests`` reopens if the engine restarted), so one
serves them all.  It is kept per engine address (``DOCKER_HOST`` and its TLS
settings), so a run or a test that points the environment at another engine
gets a client of that engine, never a stale one.

The SDK is imported here on first use only: the plugin module imports nothing
of Docker (``tests/test_prestart.py``).
"""

from __future__ import annotations

import os
import threading
from typing import Any

#: what ``docker.from_env`` reads to choose the engine and how to reach it
_ENV = ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_CONTEXT")

_clients: dict[tuple[str | None, ...], Any] = {}
_lock = threading.Lock()


def client() -> Any:
    """The Docker client of the engine the environment names (made, and versioned, once).

    Raises what ``docker.from_env`` raises (``DockerException``) when no engine
    answers; a failure is not kept, so the next call asks again.
    """
    key = tuple(os.environ.get(name) for name in _ENV)
    with _lock:
        made = _clients.get(key)
        if made is None:
            import docker

            made = _clients[key] = docker.from_env()
        return made
