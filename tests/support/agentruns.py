"""Agent runs for the tests: a backend run on the demo's task image, and what it left.

Shared by the agent tests (``test_agent_*``); the images the runs commit go into the
``agent_images`` fixture's list, which removes them.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from pytest_reb.loop.agent import backends
from pytest_reb.loop.agent.run import AgentRun, run_agent
from pytest_reb.loop.task import select


def agent(docker_client: Any, task_image: str, tmp_path: Path, images: list[str],
          command: str, **kw: Any) -> AgentRun:
    """``command`` as a custom backend on the demo task, no GPUs; nothing of it left running."""
    mounts = kw.pop("mounts", {})
    backend = backends.resolve(kw.pop("name", "scripted"), command=command, mounts=mounts,
                               error_regex=kw.pop("error_regex", None))
    rec = run_agent(docker_client, backend, select(["reb/tinynet"])[0],
                    out_root=tmp_path / "runs", gpus="none", task_image=task_image,
                    budget=kw.pop("budget", 600), **kw)
    if rec.image:
        images.append(rec.image)
    assert not docker_client.containers.list(all=True, filters={"label": f"reb.run={rec.run}"})
    return rec


def saved_hits(image: str, needles: list[str]) -> int:
    """Lines of ``docker save`` of ``image`` (every byte it keeps) holding any needle."""
    with tempfile.NamedTemporaryFile("w") as fh:
        fh.write("\n".join(needles) + "\n")
        fh.flush()
        done = subprocess.run(f"docker save {image} | grep -a -c -F -f {fh.name}", shell=True,
                              capture_output=True, text=True, check=False)
    return int(done.stdout.strip() or 0)


def host_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, names and contents to be read for a secret."""
    return [p for p in folder.rglob("*") if p.is_file()]
