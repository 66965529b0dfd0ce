"""Our shim folders in the target: mounted where the official probe folder was, first on PYTHONPATH.

A stage's ``Run.shim_dir`` is a host folder of our own support files (a
``sitecustomize.py``, wrapper scripts) that reproduces what the official
harness injected without touching tracked files.  It is mounted read-only at
``{checkout}/benchmark_scripts`` so the official paths in argv and env work
unchanged, and put first on the run's ``PYTHONPATH``.
"""

from __future__ import annotations

from pytest_reb.spec import Repo, Run
from pytest_reb.targets import Target, TargetError

#: Where a shim folder appears in a container, under the checkout (the official probe folder).
SHIM_MOUNT = "benchmark_scripts"


def shim_dirs(repo: Repo) -> list[str]:
    """The shim folders the repository's stages declare, in stage order, once each."""
    out: list[str] = []
    for stage in ("cpu", "single_gpu", "multi_gpu"):
        run = getattr(repo, stage)
        if run is None:
            continue
        for r in (run, *run.together, *([run.retry.run] if run.retry else [])):
            if r.shim_dir and r.shim_dir not in out:
                out.append(r.shim_dir)
    return out


def mount_first(target: Target, repo: Repo, checkout: str) -> None:
    """Mount the repository's first shim folder before anything runs in ``target``: one
    probe folder per checkout, as officially."""
    for shim in shim_dirs(repo)[:1]:
        target.mount(shim, f"{checkout}/{SHIM_MOUNT}")


def shim_path(target: Target, run: Run, checkout: str) -> str | None:
    """Where ``run``'s shim folder is in ``target``, or None when it declares none."""
    if not run.shim_dir:
        return None
    seen = target.mount(run.shim_dir, f"{checkout}/{SHIM_MOUNT}")
    if seen is None:
        raise TargetError(f"{target.name} cannot see the shim folder {run.shim_dir} "
                          "(shims need a Docker or local:// target)")
    return seen


def with_shim(env: dict[str, str], shim: str | None, lib: str | None = None) -> dict[str, str]:
    """``env`` with the shim folder first on ``PYTHONPATH`` (once), our shim library ``lib``
    (``reb_shim``, which its sitecustomize imports) right after it."""
    if shim is None:
        return env
    first = [shim, *([lib] if lib else [])]
    rest = [p for p in env.get("PYTHONPATH", "").split(":") if p and p not in first]
    return {**env, "PYTHONPATH": ":".join([*first, *rest])}
