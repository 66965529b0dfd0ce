"""The suite's base images, made locally without a registry: Debian from debootstrap, imported.

No image registry is reachable where pytest-reb is developed and run, so nothing is pulled:
the root filesystem is made on the host with debootstrap and imported.  ``reb task build``
starts every task image from one (``task.py``), the demo images from another
(``pytest_reb.loop.demo``).  Each image is tagged with a short hash of its recipe inputs, so an
unchanged recipe is reused and a changed one rebuilt, and a stable alias tag always points at
the newest build: the hash, lock and prune discipline every image pytest-reb makes shares
(``digest``, ``lock``, ``remove_superseded``).

Nothing here reads the source checkout: locks and kept logs go under ``CACHE_DIR``
(``$REB_CACHE``, else ``$XDG_CACHE_HOME/pytest-reb``, ``~/.cache`` by default).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound
from filelock import FileLock

log = logging.getLogger(__name__)


def _cache_dir() -> Path:
    if os.environ.get("REB_CACHE"):
        return Path(os.environ["REB_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-reb"


#: Host-wide locks of image builds, scratch folders of task builds, a failed debootstrap's log.
CACHE_DIR = _cache_dir()

BASE_REPOSITORY = "reb-base"
BASE_SUITE = "bookworm"
BASE_TAG = f"{BASE_REPOSITORY}:{BASE_SUITE}"
# python3-venv: agents build venvs; ca-certificates: pip over TLS once the host's bundle is
# mounted. minbase already brings /bin/sh (dash), coreutils (timeout) and apt.
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
# apt's downloaded packages and indexes, translations and manuals: about 130 MB nobody reads.
# resolv.conf and hostname are the host's; Docker mounts its own over them at run time.
BASE_PRUNE = (
    "var/cache/apt/archives/*.deb",
    "var/cache/apt/*.bin",
    "var/lib/apt/lists/*",
    "usr/share/locale/*",
    "usr/share/man/*",
    "usr/share/info/*",
    "etc/resolv.conf",
    "etc/hostname",
)
# An imported image has no configuration at all; give it what a Debian image has.
BASE_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    'CMD ["/bin/bash"]',
)

# What the official report template records as python_version.
PRINT_PYTHON_VERSION = "import sys; print(sys.version.split()[0])"

LABEL_RECIPE = "reb.recipe"
LABEL_PYTHON = "reb.python-version"


class ImageError(RuntimeError):
    """An image could not be made; the message is one line a person can act on."""


def ensure_base_image(
    client: docker.DockerClient,
    *,
    repository: str = BASE_REPOSITORY,
    packages: Sequence[str] = BASE_PACKAGES,
) -> str:
    """Return the tag of a Debian base image, importing it first if this recipe has none.

    The root filesystem is made on the host with debootstrap (root needed) because no
    registry can be pulled from; the image is tagged ``<repository>:bookworm-<recipe>`` and
    aliased ``<repository>:bookworm``. The demo's base is the default; task images
    (``pytest_reb.loop.task``) ask for a richer package set under a repository of their own.
    """
    recipe = digest("base", BASE_SUITE, tuple(packages), BASE_PRUNE, BASE_CHANGES)
    tag = f"{repository}:{BASE_SUITE}-{recipe}"
    with lock("base" if repository == BASE_REPOSITORY else repository):
        if not image_exists(client, tag):
            log.info("making %s with debootstrap (a minute or two)", tag)
            _import_base(client, tag, recipe, packages)
        client.images.get(tag).tag(repository, BASE_SUITE)
        remove_superseded(client, tag)
    return tag


def _import_base(
    client: docker.DockerClient, tag: str, recipe: str, packages: Sequence[str]
) -> None:
    """debootstrap a root filesystem in a scratch folder, check and prune it, import it.

    The interpreter's version is recorded as a label, so the demo's self-report can state it
    truthfully without starting a container.
    """
    if os.geteuid() != 0:
        raise ImageError("making the base image needs root (debootstrap and chroot)")
    debootstrap = shutil.which("debootstrap", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if debootstrap is None:
        raise ImageError("debootstrap is not installed; run .ci/setup-docker.sh")
    scratch = Path(tempfile.mkdtemp(prefix="reb-base-"))
    rootfs = scratch / "rootfs"
    try:
        try:
            run_host(
                "debootstrap",
                [
                    debootstrap,
                    "--variant=minbase",
                    f"--include={','.join(packages)}",
                    BASE_SUITE,
                    str(rootfs),
                ],
            )
        except ImageError as exc:
            # The scratch tree goes; keep debootstrap's own log, where the cause is.
            kept = CACHE_DIR / "debootstrap.log"
            debootstrap_log = rootfs / "debootstrap" / "debootstrap.log"
            if debootstrap_log.exists():
                CACHE_DIR.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(debootstrap_log, kept)
                raise ImageError(f"{exc}; full log kept at {kept}") from None
            raise
        python_version = _check_rootfs(rootfs)
        for pattern in BASE_PRUNE:
            for path in rootfs.glob(pattern):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        tarball = scratch / "rootfs.tar"
        # Numeric owners: the host's user names need not map to the rootfs's ids. Docker makes
        # /dev, /proc and /sys itself, so only the empty directories are kept.
        run_host(
            "tar",
            [
                "tar",
                "--numeric-owner",
                "--exclude=./dev/*",
                "--exclude=./proc/*",
                "--exclude=./sys/*",
                "-C",
                str(rootfs),
                "-cf",
                str(tarball),
                ".",
            ],
        )
        repository, _, name = tag.partition(":")
        changes = [*BASE_CHANGES, f"LABEL {LABEL_RECIPE}={recipe} {LABEL_PYTHON}={python_version}"]
        client.api.import_image(src=str(tarball), repository=repository, tag=name, changes=changes)
    finally:
        _remove_scratch(scratch)


def _check_rootfs(rootfs: Path) -> str:
    """Fail early unless the probes' basics are there; return the interpreter's version."""
    for needed in ("bin/sh", "usr/bin/timeout", "usr/bin/python3"):
        if not (rootfs / needed).exists():
            raise ImageError(f"the debootstrapped root filesystem lacks /{needed}")
    version = run_host(
        "chroot python3",
        ["chroot", str(rootfs), "/usr/bin/python3", "-c", PRINT_PYTHON_VERSION],
    ).strip()
    if not version.startswith("3.11."):
        raise ImageError(f"the base image's python3 is {version}, not 3.11")
    return version


def run_host(what: str, command: list[str], env: dict[str, str] | None = None) -> str:
    """Run a host command; on failure raise with its last line of output, not a traceback."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    except FileNotFoundError:
        raise ImageError(f"{what}: {command[0]} is not installed") from None
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ImageError(f"{what} failed (exit {done.returncode}): {output[-1] if output else ''}")
    return done.stdout


def _remove_scratch(path: Path) -> None:
    """Remove a scratch tree; unmount first whatever a failed debootstrap left mounted in it.

    rmtree over a still-mounted /proc or /sys would reach into the host's, so refuse instead.
    """
    prefix = f"{path}/"
    mounted = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounted if m.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], check=False)
    mounted = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    left = [m for m in mounted if m.startswith(prefix)]
    if left:
        raise ImageError(f"{left[0]} is still mounted; {path} was left in place")
    shutil.rmtree(path)


def remove_superseded(client: docker.DockerClient, tag: str) -> None:
    """Drop the tags of earlier recipes of the same image, so that iterating on a recipe does
    not pile up gigabytes. Run after the aliases moved, so an earlier image loses its last tag
    and goes. Docker refuses while a container uses one; that one is kept."""
    repository, _, name = tag.partition(":")
    earlier = re.compile(
        rf"{re.escape(repository)}:{re.escape(name.rsplit('-', 1)[0])}-[0-9a-f]{{12}}"
    )
    for image in client.images.list(name=repository):
        for other in image.tags:
            if other != tag and earlier.fullmatch(other):
                try:
                    client.images.remove(other)
                except APIError as exc:
                    log.info("kept %s: %s", other, exc.explanation)


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True


def lock(name: str) -> FileLock:
    """A host-wide lock per image, so parallel sessions (xdist workers) build it only once."""
    locks = CACHE_DIR / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    return FileLock(locks / f"{name}.lock")


def digest(*parts: object) -> str:
    """Twelve hex digits of SHA-256 over the recipe inputs: short enough for a tag."""
    blob = json.dumps(parts, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def one_line(text: str) -> str:
    return " ".join(text.split())
