"""Images whose checkout is not the demo's: another commit of it, a fork, a pruned copy.

The demo checkout (``pytest_reb.loop.demo``) is made again on the host, a second
commit is put on top of it (``change``: what the fork or the later commit
adds), and then ``after`` is done to the working tree (what the agent did,
uncommitted).  The image is the given base with its checkout replaced by
that tree, ``.git`` included; nothing of it runs at build time but Python's
``shutil``.  Tags are ``reb-hostile-checkout-<name>:<hash of the files>``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.loop.demo.checkout import DEMO_GIT_ENV, make_demo_checkout
from pytest_reb.loop.demo.images import REPO_DIR
from pytest_reb.loop.images import CACHE_DIR
from support.imagebuild import ensure_image

LOCKS = CACHE_DIR / "locks"


@dataclass(frozen=True)
class Checkout:
    """A built image and the two commits of its checkout."""

    image: str
    base_commit: str  # the demo's own commit
    head: str  # the commit the image's checkout is at


def _git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo), "LC_ALL": "C",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **DEMO_GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def committed_demo(name: str, change: Callable[[Path], None],
                   after: Callable[[Path], None] = lambda repo: None,
                   ) -> tuple[dict[str, bytes], str, str]:
    """The demo's checkout with ``change`` committed on top (as ``name``, with the demo's
    fixed identity and dates, so the same every time) and then ``after`` done: its files
    as a build context's ``repo/...``, the demo's commit, and the new head."""
    with tempfile.TemporaryDirectory(prefix="reb-checkout-") as scratch:
        repo = Path(scratch) / "repo"
        base_commit = make_demo_checkout(repo)
        change(repo)
        _git(repo, "add", "--all")
        _git(repo, "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", name)
        head = _git(repo, "rev-parse", "HEAD")
        after(repo)
        # the index holds file times: left out, the tag depends on the content alone
        files = {f"repo/{p.relative_to(repo)}": p.read_bytes()
                 for p in sorted(repo.rglob("*")) if p.is_file() and not p.is_symlink()
                 and p != repo / ".git" / "index"}
    return files, base_commit, head


def checkout_image(client: Any, base_image: str, name: str, change: Callable[[Path], None],
                   after: Callable[[Path], None] = lambda repo: None) -> Checkout:
    """``base_image`` with its checkout replaced by the demo + ``change`` committed + ``after``."""
    files, base_commit, head = committed_demo(name, change, after)
    base = client.images.get(base_image)
    files["Dockerfile"] = (
        f"FROM {base.id}\n"
        f'RUN ["/usr/bin/python3", "-c", "import shutil; shutil.rmtree({REPO_DIR!r})"]\n'
        f"COPY repo {REPO_DIR}\n"
        f"LABEL reb.hostile=checkout-{name}\n").encode()
    digest = hashlib.sha256()
    for path, data in sorted(files.items()):
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    tag = ensure_image(client, f"reb-hostile-checkout-{name}:{digest.hexdigest()[:12]}", files,
                       locks=LOCKS)
    return Checkout(tag, base_commit, head)
