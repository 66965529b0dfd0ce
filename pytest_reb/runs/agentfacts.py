"""What the commit of an agent run says of itself, read from the image's labels.

``reb agent run`` commits the agent's container with ``reb.agent-env.*`` labels
(``loop/agent/commit.py``): when it started, how long it ran, its exit, whether it
ran past its budget, its tokens.  The official layout's job summary and token file
need them for a target the run verifies, so they are read here, from the engine's
metadata of the image (never from its files), by whoever names the target.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_reb.runs.matrix import AGENT_ENV_LABEL
from pytest_reb.targets.housekeeping import image_labels


def agent_facts(image: str | None) -> dict[str, Any] | None:
    """What the commit of an agent run says of it, from the image's ``reb.agent-env.*``
    labels (its metadata, never its files): start, wall time, exit code, timed out, tokens.

    None for no image (a testinfra target), an image no ``reb agent run`` made, or an engine
    that does not answer.
    """
    if not image:
        return None
    found = {k[len(AGENT_ENV_LABEL):]: v for k, v in image_labels(image).items()
             if k.startswith(AGENT_ENV_LABEL)}
    if "run" not in found:
        return None

    def number(key: str) -> float | None:
        try:
            return float(found.get(key, ""))
        except ValueError:
            return None

    try:
        tokens = json.loads(found.get("tokens", '"unknown"'))
    except ValueError:
        tokens = "unknown"
    exit_code = number("exit-code")
    return {"run": found["run"], "agent": found.get("agent"), "started": number("started"),
            "wall_s": number("wall-s"), "timed_out": found.get("timed-out") == "true",
            "exit_code": None if exit_code is None else int(exit_code),
            "tokens": tokens if isinstance(tokens, dict) else "unknown"}
