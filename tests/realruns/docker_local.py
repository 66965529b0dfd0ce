"""``docker run`` for the stand-in makers on a machine with no Docker (the GPU machine).

    docker_local.py run [--rm] [--network N] [--user U] [-v SRC:DST] [-e K=V] [-w DIR]
                        [--entrypoint PROGRAM] IMAGE ARGS...

The stand-in functions of ``standin_*.py`` make their files with the
repository's own code under the image's interpreter, through ``docker run``.
On the GPU machine the environment under test *is* the machine's ``python3``,
so this runs the same command there: each mount becomes a symbolic link at its
target path (``/out``, the scratch folder; ``/data/project/repo``, the
checkout, linked by ``gpu_repos.py``, and the working folder unless ``-w`` names one, as
the images' WORKDIR), the image's venv interpreter is
``REB_LOCAL_PYTHON``, and ``--network`` and ``--user`` are moot (no network
there; one user).  Installed as ``docker`` on ``PATH`` by ``gpu_repos.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The venv interpreter the real-run images have (``standin.PYTHON``).
IMAGE_PYTHON = "/opt/envs/research/bin/python"
#: The real-run images' WORKDIR (``build.py``), where a command without ``-w`` starts.
IMAGE_WORKDIR = "/data/project/repo"
WITH_VALUE = {"--network", "--user", "-v", "-e", "-w", "--entrypoint", "--name"}


def link(src: str, dst: str) -> None:
    """``dst`` made a symbolic link to ``src`` (an older link there is replaced)."""
    target = Path(dst)
    if target.is_symlink():
        target.unlink()
    elif target.exists():
        raise SystemExit(f"docker_local: {dst} exists and is not a link")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(src)


def main(args: list[str]) -> None:
    if not args or args[0] != "run":
        raise SystemExit(__doc__)
    args = args[1:]
    env, cwd, program = dict(os.environ), None, None
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        value = args.pop(0) if flag in WITH_VALUE else None
        if flag == "-v" and value:
            src, dst = value.split(":")[:2]
            link(src, dst)
        elif flag == "-e" and value:
            key, _, val = value.partition("=")
            env[key] = val
        elif flag == "-w":
            cwd = value
        elif flag == "--entrypoint":
            program = value
    argv = args[1:]  # args[0] is the image
    if program:
        argv = [program, *argv]
    python = os.environ.get("REB_LOCAL_PYTHON", sys.executable)
    argv = [python if a == IMAGE_PYTHON else a for a in argv]
    if cwd:
        os.chdir(cwd)
    elif Path(IMAGE_WORKDIR).is_dir():
        os.chdir(IMAGE_WORKDIR)
    os.execvpe(argv[0], argv, env)


if __name__ == "__main__":
    main(sys.argv[1:])
