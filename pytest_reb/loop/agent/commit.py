"""Committing an agent's container: any size, labelled as an image, never lost.

``docker commit`` of a multi-GB environment takes the engine minutes (it copies the layer),
longer than the SDK's 60 s HTTP read timeout: the client gave up while the engine went on
and finished an image that no record named. So the commit's read timeout is sized for the
layer (``commit_timeout``), and a commit that failed on the client's side (a read timeout,
a dropped connection) is looked up by its labels before the run is declared failed; the
record names the tag before the commit starts, so an image the engine finishes after an
interruption is still named by it.

The kept image is not a container of the run: the container's ``reb.run`` / ``reb.owner``
labels (and any ``REB_LABELS``) are emptied in the image, which gets its own
``reb.agent-env.*`` labels, so a container a user starts from it with ``docker run`` is
nobody's orphan and ``reb gc`` leaves it alone.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import time
from collections.abc import Mapping
from typing import Any

from pytest_reb.runs.matrix import AGENT_ENV_LABEL
from pytest_reb.targets import LABEL_RUN

ENV_REPOSITORY = "reb-agent-env"
#: Labels of a kept image (its metadata, never its files): what made it.
ENV_LABEL = AGENT_ENV_LABEL
#: The slowest the engine is taken to copy a layer, bytes per second, and a floor.
COMMIT_RATE = 5e6
COMMIT_FLOOR_S = 600.0
#: How long a commit the client lost is waited for before the run is declared failed.
LOOKUP_WAIT_S = 600.0


class CommitError(RuntimeError):
    """The engine made no image of the container: one line."""


def image_tag(slug: str, run: str) -> str:
    """``reb-agent-env:<owner>__<name>-<run>``, known before the commit starts."""
    return f"{ENV_REPOSITORY}:" + re.sub(r"[^A-Za-z0-9_.-]", "-", f"{slug}-{run}")[:128]


def commit_timeout(layer_bytes: int | None) -> float:
    """Seconds the commit's HTTP read may wait: the floor, plus the layer at ``COMMIT_RATE``."""
    if layer_bytes is None:
        return COMMIT_FLOOR_S * 6
    return COMMIT_FLOOR_S + layer_bytes / COMMIT_RATE


def changes(values: Mapping[str, str], run_labels: Mapping[str, str],
            cmd: list[str] | None) -> list[str]:
    """The Dockerfile changes of the commit: the image's CMD back, the labels the run put on
    its container emptied (a label cannot be removed by a commit), the image's own set.

    Every other label is the task image's (``reb.task.*``, ``reb.recipe``, a custom task
    image's ``maintainer``): the container inherited it and the commit keeps it as it is.
    """
    emptied = [k for k in run_labels if not k.startswith(ENV_LABEL)]
    return [f"CMD {json.dumps(cmd or ['/bin/bash'])}",
            *(f"LABEL {k}=\"\"" for k in sorted(emptied)),
            *(f"LABEL {ENV_LABEL}{k}={json.dumps(v)}" for k, v in values.items())]


def commit(client: Any, ctr: Any, tag: str, run: str, change_list: list[str], *,
           timeout: float, lookup_wait: float = LOOKUP_WAIT_S) -> str:
    """Commit ``ctr`` to ``tag``; the image's id. A commit the client lost is looked up."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    api = copy.copy(client.api)  # the same connection pool, a read timeout of its own
    api.timeout = timeout
    repository, _, name = tag.partition(":")
    try:
        return api.commit(ctr.id, repository=repository, tag=name, changes=change_list)["Id"]
    except APIError as exc:  # the engine answered: the commit is over
        discard_untagged(client, ctr)
        raise CommitError(f"the engine refused the commit: {exc.explanation}") from None
    except RequestException as exc:
        lost = f"the commit's answer was lost ({type(exc).__name__})"
    found = await_image(client, run, lookup_wait)
    if found is None:
        raise CommitError(f"{lost}; no image labelled {ENV_LABEL}run={run} appeared in "
                          f"{lookup_wait:g} s")
    return found


def discard_untagged(client: Any, ctr: Any) -> None:
    """Remove the untagged images committed from ``ctr``. The engine writes the image before
    it tags it: a tag it refuses (an invalid name, a tag the engine cannot set) leaves an image
    nothing names. It is known by the container it came from, or, on engines that no longer
    say (API 1.45), by the run label it inherited from the container."""
    run = (ctr.labels or {}).get(LABEL_RUN)
    with contextlib.suppress(Exception):
        for image in client.images.list(filters={"dangling": True}):
            source = image.attrs.get("Container")
            if source == ctr.id or (not source and run and image.labels.get(LABEL_RUN) == run):
                client.images.remove(image.id, force=True)


def await_image(client: Any, run: str, wait: float) -> str | None:
    """The id of the image committed for ``run``, once the engine lists it (None after
    ``wait`` seconds): a commit the client lost may still be going on in the engine."""
    deadline = time.monotonic() + wait
    while True:
        with contextlib.suppress(Exception):
            found = client.images.list(filters={"label": f"{ENV_LABEL}run={run}"})
            if found:
                return found[0].id
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(5.0, max(0.1, deadline - time.monotonic())))


def remove_container(client: Any, ctr: Any, timeout: float) -> None:
    """Remove ``ctr`` and the image's VOLUMEs with it, with a read timeout sized like its
    commit (a big layer takes a while)."""
    api = copy.copy(client.api)
    api.timeout = timeout
    api.remove_container(ctr.id, force=True, v=True)

