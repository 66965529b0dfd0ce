"""The Docker engine around a run: is it there, are the images there, remove our containers.

Used by a run (its pre-flight and its end, ``session.py``), by ``reb gc`` (``cli.py``) and
by a Docker target as it is made (``image_of``).  Nothing here makes a container; it only
asks the engine (an image's metadata, never its files) and removes what our labels
(``reb.run``, ``reb.owner``: ``targets/base.py``) mark as ours.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from typing import Any

from pytest_reb.targets.base import LABEL_OWNER, LABEL_RUN
from pytest_reb.targets.errors import TargetError

#: How long ``sweep`` waits for the engine to finish removals it started.
SWEEP_WAIT = 60.0


def sweep(run_id: str | None = None, *, only_orphans: bool = False) -> int:
    """Remove our containers: those of ``run_id``, or all of ours; returns how many.

    Ours are those whose ``reb.run`` label names a run; with ``only_orphans``, only those
    whose maker (``reb.owner``: this host and a pid) is gone.

    Waits until the engine lists none of them any more (at most ``SWEEP_WAIT``
    seconds): a removal an interrupted client started goes on in the engine,
    and a second ``remove`` meanwhile is refused as "already in progress".
    """
    try:
        import docker

        client = docker.from_env()
        label = f"{LABEL_RUN}={run_id}" if run_id else LABEL_RUN
        containers = client.containers.list(all=True, filters={"label": label})
    except Exception:  # no daemon: nothing of ours can be running there
        return 0
    doomed = removable(containers, only_orphans=only_orphans)
    deadline = time.monotonic() + SWEEP_WAIT
    left = {ctr.id: ctr for ctr in doomed}
    while left and time.monotonic() < deadline:
        for ctr in left.values():
            with contextlib.suppress(Exception):
                ctr.remove(force=True, v=True)  # their anonymous volumes too
        with contextlib.suppress(Exception):  # one look per round, at all of them
            listed = {c.id for c in client.containers.list(all=True, filters={"label": label})}
            left = {cid: ctr for cid, ctr in left.items() if cid in listed}
        if left:
            time.sleep(0.5)
    return len(doomed) - len(left)


def removable(containers: list[Any], *, only_orphans: bool = False) -> list[Any]:
    """Which of ``containers`` (listed by our run label) a ``sweep`` removes.

    An empty run label is a kept image's (``agent.commit``): a container a user started
    from it is nobody's orphan, whatever the mode.
    """
    return [ctr for ctr in containers if ctr.labels.get(LABEL_RUN)
            and not (only_orphans and _owner_alive(ctr.labels.get(LABEL_OWNER, "")))]


def _owner_alive(owner: str) -> bool:
    """Whether the process that made a container may still be running.

    A maker on another host (a shared engine) cannot be checked from here, so
    it counts as alive: only ``reb gc --all`` or ``--run`` removes those.
    """
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return bool(host)
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def engine() -> tuple[Any, str | None]:
    """A client of the local Docker daemon that answered a ping, or None and why not."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        return None, (f"the Docker daemon does not answer ({type(exc).__name__}: "
                      f"{str(exc)[:200]})")
    return client, None


def docker_available() -> str | None:
    """Why the Docker daemon cannot be used, or None when it answers."""
    return engine()[1]


def missing_images(images: list[str], client: Any = None) -> list[str]:
    """The images not on the local engine (asked without pulling)."""
    import docker
    from docker.errors import ImageNotFound

    client = client or docker.from_env()
    missing = []
    for image in images:
        try:
            client.images.get(image)
        except ImageNotFound:
            missing.append(image)
    return missing


def image_of(client: Any, image: str) -> tuple[str, dict[str, str]]:
    """``image``'s id on the engine of ``client`` and its own ``ENV`` (name -> value), asked
    without pulling; ``TargetError`` when it is not there or the engine stops answering."""
    from docker.errors import DockerException, ImageNotFound
    from requests.exceptions import RequestException

    try:
        got = client.images.get(image)
        env = (got.attrs.get("Config") or {}).get("Env") or ()
        return got.id, dict(e.split("=", 1) for e in env if "=" in e)
    except ImageNotFound:
        raise TargetError(
            f"image {image!r} is not on this Docker engine (pytest-reb never pulls; "
            "build or load it first)") from None
    except (DockerException, RequestException) as exc:  # gone between the two
        raise TargetError(f"the Docker daemon does not answer: {exc}") from None


def image_labels(image: str) -> dict[str, str]:
    """The labels of ``image`` on this host's engine: metadata, never the image's files;
    none when there is no such image or no engine answers (a GPU machine verifying itself
    through ``local://`` need not have the Docker SDK)."""
    try:
        import docker

        attrs = docker.from_env().api.inspect_image(image)
    except Exception:
        return {}
    return dict((attrs.get("Config") or {}).get("Labels") or {})
