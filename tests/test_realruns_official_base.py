"""The official bundle's stand-in for the official base image's ``python`` can install pyright.

Most bundles run their pyright stage in ``--mode system``: ``python -m pip install
pyright`` into the ``python`` on ``PATH`` (conda's base interpreter in the official
image), then pyright with it.  Debian's ``python3`` has no pip, so a bare link to it
made that install fail and the stage record ``deps`` with no count (FlagGems' real
run); ``official.BASE_LINKS`` makes an empty venv instead, which has its own pip.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from official import BASE_LINKS, BASE_PYTHON  # tests/realruns is on the suite's pythonpath


@pytest.mark.container
def test_python_on_path_has_pip_and_no_packages(docker_client: Any) -> None:
    from pytest_reb.loop.images import ensure_base_image

    container = docker_client.containers.create(
        ensure_base_image(docker_client), ["sleep", "infinity"], entrypoint=[],
        network_mode="none", labels={"reb.test": "official-base"})
    try:
        container.start()
        made = container.exec_run(["bash", "-c", BASE_LINKS])
        assert made.exit_code == 0, made.output.decode(errors="replace")
        pip = container.exec_run(["bash", "-c", "python -m pip --version"])
        assert pip.exit_code == 0, pip.output.decode(errors="replace")
        assert f"{BASE_PYTHON}/lib/python3" in pip.output.decode()
        # an empty environment, as conda's base is to the repository: nothing of the venv under
        # test resolves through it
        bare = container.exec_run(["bash", "-c", "python -c 'import torch'"])
        assert bare.exit_code != 0
    finally:
        container.remove(force=True, v=True)


@pytest.mark.container
def test_git_runs_on_a_checkout_of_another_owner(docker_client: Any) -> None:
    """The official base image has git, and bundles call it: yomitoku's
    validate_agent_report.py runs ``git rev-parse HEAD`` unguarded, and without git its
    hallucination stage raised before writing results (recorded ``absent``).  The throwaway
    container gets the host's git and trusts the image's checkout, whose owner is not root."""
    from official import ENVIRONMENT, MOUNTS

    from pytest_reb.loop.images import ensure_base_image

    container = docker_client.containers.create(
        ensure_base_image(docker_client), ["sleep", "infinity"], entrypoint=[],
        network_mode="none", labels={"reb.test": "official-base"}, environment=ENVIRONMENT,
        volumes={path: {"bind": path, "mode": "ro"} for path in MOUNTS})
    try:
        container.start()
        script = ("mkdir /tmp/r && cd /tmp/r && git init -q && git -c user.name=t "
                  "-c user.email=t@t commit -q --allow-empty -m t && chown -R 4321:4321 /tmp/r "
                  "&& git rev-parse HEAD")
        done = container.exec_run(["bash", "-c", script])
        out = done.output.decode(errors="replace")
        assert done.exit_code == 0, out
        # stdout and stderr come merged, in no fixed order: git init's warning about its
        # templates (not mounted) may follow the hash
        assert re.search(r"^[0-9a-f]{40}$", out, re.MULTILINE), out
    finally:
        container.remove(force=True, v=True)
