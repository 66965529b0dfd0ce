"""Which commit a checkout is at, read from its ``.git`` files, without running anything.

Collection matches a target to its repository module by the checkout's
commit, before any container exists: an image's files are read through a
created-but-never-started container, this machine's directly.  No git is
needed in the image, and none of its code runs.  An image's answer is kept by
its id (``imagecache``): a later run of the same image reads no file of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pytest_reb.targets import imagecache
from pytest_reb.targets.archive import image_file
from pytest_reb.targets.base import ImageRef, is_local

#: This reader's code is part of the key of a kept answer.
_DIGEST = imagecache.code_digest(Path(__file__))


def read_git_commit(read: Callable[[str], bytes | None], repo_dir: str) -> str | None:
    """The commit checked out at ``repo_dir``, read from ``.git`` files (no git needed)."""
    head = read(f"{repo_dir}/.git/HEAD")
    if head is None:
        return None
    text = head.decode("ascii", errors="replace").strip()
    if not text.startswith("ref: "):
        return text.lower() if re.fullmatch(r"[0-9a-fA-F]{40}", text) else None
    ref = text[5:].strip()
    direct = read(f"{repo_dir}/.git/{ref}")
    if direct is not None and re.fullmatch(rb"[0-9a-fA-F]{40}\s*", direct):
        return direct.decode().strip().lower()
    packed = read(f"{repo_dir}/.git/packed-refs") or b""
    for line in packed.decode("ascii", errors="replace").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and re.fullmatch(r"[0-9a-fA-F]{40}", sha):
            return sha.lower()
    return None


def checkout_commit(where: ImageRef | str, repo_dir: str) -> str | None:
    """The commit of the checkout in a target, without starting anything that runs its code."""
    if isinstance(where, ImageRef):
        import docker
        from docker.errors import DockerException

        client = docker.from_env()
        try:
            image = client.images.get(where.name).id
        except DockerException:
            image = None
        parts = (repo_dir, _DIGEST)
        kept = imagecache.load("checkout-commit", image, parts)
        if isinstance(kept, str):
            return kept
        commit = read_git_commit(lambda p: image_file(client, image or where.name, p), repo_dir)
        if commit is not None:
            imagecache.store("checkout-commit", image, parts, commit)
        return commit
    if is_local(where):
        def read(p: str) -> bytes | None:
            try:
                return Path(p).read_bytes()[: 1 << 16]
            except OSError:
                return None

        return read_git_commit(read, repo_dir)
    return None
