"""The demo repository as a one-commit git checkout, the same bytes and hash on every host.

The commit is made afresh from the working files with a fixed author, committer and dates,
so its hash changes exactly when ``demo/tinynet``'s tree does; ``demo/test_demo__tinynet.py``
pins it the way the official harness pins a repository's commit.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from pytest_reb.loop.images import ImageError, run_host
from pytest_reb.spec import checkout_root

# Fixed identity and dates: the demo commit's hash then depends on the tree alone.
DEMO_GIT_ENV = {
    "GIT_AUTHOR_NAME": "TinyNet Authors",
    "GIT_AUTHOR_EMAIL": "tinynet@example.org",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "TinyNet Authors",
    "GIT_COMMITTER_EMAIL": "tinynet@example.org",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+00:00",
}
DEMO_COMMIT_MESSAGE = "TinyNet: a two-layer perceptron on synthetic blobs"


def source_root() -> Path:
    """The pytest-reb checkout the demo comes from: ``$REB_SOURCE``, else the working directory.

    One line, not a traceback, when it holds no ``demo/tinynet``: the demo is a checkout's
    files, and an installed package alone has none.
    """
    root = checkout_root().resolve()
    if not (root / "demo" / "tinynet").is_dir():
        raise ImageError(f"no demo/tinynet in {root}: run from a pytest-reb checkout "
                         "or set REB_SOURCE to one")
    return root


def demo_dir() -> Path:
    """``demo/`` of the checkout: the sample repository, its module and its report."""
    return source_root() / "demo"


def demo_commit() -> str:
    """Return the commit hash the demo images check ``demo/tinynet`` out at (see above)."""
    with tempfile.TemporaryDirectory(prefix="reb-demo-repo-") as scratch:
        return make_demo_checkout(Path(scratch) / "repo")


def make_demo_checkout(dest: Path, source: Path | None = None) -> str:
    """Copy ``demo/tinynet`` (or ``source``) to ``dest`` as a one-commit git repository;
    return the hash.

    Modes are normalised and ignored files (``demo/tinynet/.gitignore``) removed, so the
    working tree equals the commit and neither depends on the host's checkout.
    """
    source = source or demo_dir() / "tinynet"
    if not source.is_dir():
        raise ImageError(f"{source} is missing; run from a pytest-reb checkout")
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(dest),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        **DEMO_GIT_ENV,
    }
    for args in (
        ["init", "--quiet", "--initial-branch=main"],
        ["add", "--all"],
        ["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", DEMO_COMMIT_MESSAGE],
        ["clean", "--quiet", "-ffdx"],
    ):
        run_host("git " + args[0], ["git", "-C", str(dest), *args], env=env)
    return run_host(
        "git rev-parse", ["git", "-C", str(dest), "rev-parse", "HEAD"], env=env
    ).strip()
