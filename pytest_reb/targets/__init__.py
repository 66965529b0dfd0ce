"""A target: the environment under test, and the one ``exec`` every probe goes through.

Three kinds fit behind one small contract (``base.Target``, inspect_ai's
sandbox shape): ``exec(argv, timeout=, env=, cwd=, profile=, gpus=) -> ExecResult``.

* ``DockerTarget`` (``docker.py``) makes hardened containers from an image
  (``--reb-image``): a ``cpu`` profile with no GPU devices and a ``gpu``
  profile with the leased GPUs.  It never pulls.
* ``LocalTarget`` (``local.py``, ``--reb-host=local://``) runs on this machine: the GPU box.
* ``TestinfraTarget`` (``testinfra.py``) takes any other testinfra URL.

``git.py`` reads which commit a target's checkout is at, before any of them runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_reb.targets.archive import archive_file, image_file
    from pytest_reb.targets.base import (
        EXEC_TAG,
        HOST_SLACK,
        KILL_GRACE,
        LABEL_OWNER,
        LABEL_RUN,
        ImageRef,
        Profile,
        Target,
        cuda_visible,
        is_local,
        labels,
        marked_json,
        owner_label,
        wrap_timeout,
    )
    from pytest_reb.targets.container import Limits
    from pytest_reb.targets.docker import DockerTarget
    from pytest_reb.targets.errors import InfraError, TargetError
    from pytest_reb.targets.git import checkout_commit, read_git_commit
    from pytest_reb.targets.local import LocalTarget
    from pytest_reb.targets.mounts import (
        NODE_MOUNT,
        PROBES_DIR,
        PROBES_MOUNT,
        PYRIGHT_MOUNT,
        SEED_MOUNT,
        SHIMLIB_MOUNT,
        tool_mounts,
    )
    from pytest_reb.targets.result import TAIL_BYTES, ExecResult, TailBuffer
    from pytest_reb.targets.testinfra import TestinfraTarget

#: Where each name of ``__all__`` is defined, imported when first asked for (PEP 562): the
#: host's compiling processes (``python -m pytest_reb.targets.precompile``) import this
#: package first, and need none of the targets, the Docker SDK among them (0.1 CPU-s each).
_WHERE = {
    **dict.fromkeys(("archive_file", "image_file"), "archive"),
    **dict.fromkeys(("EXEC_TAG", "HOST_SLACK", "KILL_GRACE", "LABEL_OWNER", "LABEL_RUN",
                     "ImageRef", "Profile", "Target", "cuda_visible", "is_local", "labels",
                     "marked_json", "owner_label", "wrap_timeout"), "base"),
    "Limits": "container", "DockerTarget": "docker", "InfraError": "errors",
    "TargetError": "errors", "checkout_commit": "git", "read_git_commit": "git",
    "LocalTarget": "local", "TestinfraTarget": "testinfra",
    **dict.fromkeys(("NODE_MOUNT", "PROBES_DIR", "PROBES_MOUNT", "PYRIGHT_MOUNT", "SEED_MOUNT",
                     "SHIMLIB_MOUNT", "tool_mounts"), "mounts"),
    **dict.fromkeys(("TAIL_BYTES", "ExecResult", "TailBuffer"), "result"),
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EXEC_TAG", "HOST_SLACK", "KILL_GRACE", "LABEL_OWNER", "LABEL_RUN", "NODE_MOUNT",
    "PROBES_DIR", "PROBES_MOUNT", "PYRIGHT_MOUNT", "SEED_MOUNT", "SHIMLIB_MOUNT", "TAIL_BYTES",
    "DockerTarget", "ExecResult", "ImageRef", "InfraError", "Limits", "LocalTarget", "Profile",
    "TailBuffer", "Target", "TargetError", "TestinfraTarget", "archive_file", "checkout_commit",
    "cuda_visible", "image_file", "is_local", "is_remote", "labels", "make_target",
    "marked_json", "owner_label", "read_git_commit", "tool_mounts", "wrap_timeout",
]


def is_remote(where: ImageRef | str) -> bool:
    """Whether the target runs on another machine (a testinfra URL, not local:// or an image
    on this host's engine): its GPUs are that machine's."""
    from pytest_reb.targets.base import ImageRef, is_local

    return not isinstance(where, ImageRef) and not is_local(where)


def make_target(where: ImageRef | str, *, run_id: str, gpus: Sequence[str] | None,
                limits: Limits, timeout_scale: float = 1.0, client: Any = None) -> Target:
    """A target from ``--reb-image`` (an ``ImageRef``) or ``--reb-host`` (a testinfra URL);
    ``gpus`` None for a remote one means: ask that machine.  ``timeout_scale`` is
    ``--reb-timeout-scale``, which the target's ``exec`` applies to every stage timeout;
    ``client``, a Docker client to use for an image (default: a new one)."""
    from pytest_reb.targets.base import ImageRef, is_local
    from pytest_reb.targets.docker import DockerTarget
    from pytest_reb.targets.local import LocalTarget
    from pytest_reb.targets.testinfra import TestinfraTarget

    target: Target
    if isinstance(where, ImageRef):
        target = DockerTarget(where.name, run_id=run_id, gpus=gpus, limits=limits, client=client)
    elif is_local(where):
        target = LocalTarget(gpus=gpus)
    else:
        target = TestinfraTarget(where, gpus=gpus)
    target.timeout_scale = timeout_scale
    return target
