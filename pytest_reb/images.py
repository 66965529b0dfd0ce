"""Local Docker images for the demo and for pytest-reb's own tests, made without a registry.

No image registry is reachable where pytest-reb is developed and tested, so nothing is pulled:
the base image is a Debian root filesystem made with debootstrap and imported, and the demo
images are built from it with Python packages installed offline from a host-side wheelhouse.
Each image is tagged with a short hash of its recipe inputs, so an unchanged recipe is reused
and a changed one is rebuilt; a stable alias tag always points at the newest build.

The demo images play an agent-built environment for the sample repository ``demo/tinynet``:
a venv, the repository as a git checkout at the official path, and the agent's self-report.
The ``missing-dep`` variant is the same environment with PyYAML left out, while its report
still claims the same, which is exactly what the tiers must catch.

    python -m pytest_reb.images base    # the base image
    python -m pytest_reb.images demo    # the base image and both demo variants
    python -m pytest_reb.images checkout DEST   # the demo's git checkout alone

One module, a little over this project's usual size: the base and the demo images share
one recipe-hash, lock and prune discipline, and the demo recipe is the base's only user
besides ``task.py``.
"""

import argparse
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import docker
from docker.errors import APIError, BuildError, DockerException, ImageNotFound
from filelock import FileLock

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_SOURCE = REPO_ROOT / "demo" / "tinynet"
DEMO_REPORT = REPO_ROOT / "demo" / "report.json"
CACHE_DIR = REPO_ROOT / ".cache"
WHEELHOUSE = CACHE_DIR / "wheels"

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

DEMO_REPOSITORY = "reb-demo"
DEMO_VARIANTS = ("good", "missing-dep")
TORCH_REQUIREMENT = "torch==2.13.0+cpu"
# numpy is not in tinynet's requirements, but without it every `import torch` warns "Failed to
# initialize NumPy: No module named 'numpy'", noise that looks like a missing dependency.
WHEEL_REQUIREMENTS = (TORCH_REQUIREMENT, "numpy", "pyyaml")
# The demo images run the base image's CPython 3.11 on glibc 2.36 (bookworm): fetch wheels for
# that, whatever the host's Python is. pip does not widen manylinux_2_x tags, so list them.
WHEEL_TARGET = (
    "--only-binary=:all:",
    "--implementation=cp",
    "--python-version=3.11",
    "--abi=cp311",
    *(f"--platform=manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)),
    "--platform=manylinux2014_x86_64",
)

ENV_DIR = "/opt/envs/tinynet"
ENV_PYTHON = f"{ENV_DIR}/bin/python"
REPO_DIR = "/data/project/repo"
REPORT_PATH = "/opt/scimlopsbench/report.json"

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
    (``pytest_reb.task``) ask for a richer package set under a repository of their own.
    """
    recipe = _digest("base", BASE_SUITE, tuple(packages), BASE_PRUNE, BASE_CHANGES)
    tag = f"{repository}:{BASE_SUITE}-{recipe}"
    with _lock("base" if repository == BASE_REPOSITORY else repository):
        if not _image_exists(client, tag):
            log.info("making %s with debootstrap (a minute or two)", tag)
            _import_base(client, tag, recipe, packages)
        client.images.get(tag).tag(repository, BASE_SUITE)
        _remove_superseded(client, tag)
    return tag


def ensure_wheelhouse() -> list[Path]:
    """Return the wheels the demo environment installs, downloading them on first use.

    The image builds run without network, so every wheel must be on the host. A manifest per
    requirement set records what pip resolved, so later calls neither resolve nor download,
    and the set (which is part of the demo recipe) stays fixed until ``.cache/`` is removed.
    """
    key = _digest(WHEEL_REQUIREMENTS, WHEEL_TARGET)
    manifest = WHEELHOUSE / f"manifest-{key}.txt"
    with _lock("wheels"):
        if manifest.exists():
            wheels = [WHEELHOUSE / name for name in manifest.read_text().split()]
            if all(wheel.exists() for wheel in wheels):
                return wheels
        log.info("downloading %s and dependencies to %s", " ".join(WHEEL_REQUIREMENTS), WHEELHOUSE)
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        # A fresh directory holds exactly the resolved set; wheels already in the wheelhouse are
        # found there (--find-links) instead of being fetched again.
        download = Path(tempfile.mkdtemp(prefix="download-", dir=CACHE_DIR))
        try:
            pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
            sources = ["--dest", str(download), "--find-links", str(WHEELHOUSE)]
            _run_host(
                "pip download", [*pip, "download", *sources, *WHEEL_TARGET, *WHEEL_REQUIREMENTS]
            )
            names = sorted(path.name for path in download.glob("*.whl"))
            for name in names:
                (download / name).replace(WHEELHOUSE / name)
        finally:
            shutil.rmtree(download)
        manifest.write_text("".join(f"{name}\n" for name in names))
        return [WHEELHOUSE / name for name in names]


def demo_commit() -> str:
    """Return the commit hash the demo images check ``demo/tinynet`` out at.

    The commit is made afresh from the working files with a fixed author, committer and
    dates, so the hash changes exactly when the repository's tree does; repos/-style modules
    and the tests pin it the way the official harness pins a repository's commit.
    """
    with tempfile.TemporaryDirectory(prefix="reb-demo-repo-") as scratch:
        return make_demo_checkout(Path(scratch) / "repo")


def ensure_demo_image(client: docker.DockerClient, variant: str = "good") -> str:
    """Return the tag of a demo image, building it first if this recipe has none.

    ``good`` is a working agent-built environment for ``demo/tinynet``; ``missing-dep`` lacks
    PyYAML but carries the same self-report. Tags are ``reb-demo:<variant>-<recipe>`` with the
    alias ``reb-demo:<variant>``, and ``reb-demo:latest`` for ``good``.
    """
    if variant not in DEMO_VARIANTS:
        raise ValueError(f"unknown demo variant {variant!r}; known: {', '.join(DEMO_VARIANTS)}")
    base = ensure_base_image(client)
    python_version = client.images.get(base).labels[LABEL_PYTHON]
    wheels = ensure_wheelhouse()
    packages = [r for r in WHEEL_REQUIREMENTS if variant == "good" or r != "pyyaml"]
    dockerfile = _demo_dockerfile(base, packages)
    report = json.dumps(_demo_report(python_version), indent=2) + "\n"
    with (
        _lock(f"demo-{variant}"),
        tempfile.TemporaryDirectory(prefix="reb-demo-build-", dir=CACHE_DIR) as scratch,
    ):
        context = Path(scratch)
        commit = make_demo_checkout(context / "repo")
        recipe = _digest("demo", variant, dockerfile, commit, [w.name for w in wheels], report)
        tag = f"{DEMO_REPOSITORY}:{variant}-{recipe}"
        if not _image_exists(client, tag):
            log.info("building %s (installs torch: a few minutes)", tag)
            (context / "Dockerfile").write_text(dockerfile)
            (context / "report.json").write_text(report)
            (context / "wheels").mkdir()
            for wheel in wheels:
                _link_or_copy(wheel, context / "wheels" / wheel.name)
            labels = {LABEL_RECIPE: recipe, "reb.demo.variant": variant, "reb.demo.commit": commit}
            _build_demo(client, context, tag, labels)
        image = client.images.get(tag)
        for alias in (variant, "latest") if variant == "good" else (variant,):
            image.tag(DEMO_REPOSITORY, alias)
        _remove_superseded(client, tag)
    return tag


def main(argv: Sequence[str] | None = None) -> int:
    """Build the images from the command line; print their tags, one a line."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_reb.images",
        description="Build pytest-reb's local images (no registry is used).",
    )
    parser.add_argument("what", choices=["base", "demo", "checkout"],
                        help="base image only, base + demos, or the demo's checkout alone")
    parser.add_argument("dest", nargs="?", type=Path,
                        help="checkout: the new folder (a GPU machine without Docker verifies "
                             "it with --reb-host=local:// --reb-repo-dir DEST)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.what == "checkout":
        if args.dest is None or args.dest.exists():
            parser.error("checkout needs a DEST folder that does not exist yet")
        try:
            print(make_demo_checkout(args.dest), flush=True)
        except ImageError as exc:
            print(f"error: {_one_line(str(exc))}", file=sys.stderr)
            return 1
        return 0
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        print(
            f"error: the Docker daemon does not answer ({exc}); run .ci/setup-docker.sh",
            file=sys.stderr,
        )
        return 1
    try:
        print(ensure_base_image(client), flush=True)
        if args.what == "demo":
            for variant in DEMO_VARIANTS:
                print(ensure_demo_image(client, variant), flush=True)
    except (ImageError, DockerException) as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


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
            _run_host(
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
        _run_host(
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
    version = _run_host(
        "chroot python3",
        ["chroot", str(rootfs), "/usr/bin/python3", "-c", PRINT_PYTHON_VERSION],
    ).strip()
    if not version.startswith("3.11."):
        raise ImageError(f"the base image's python3 is {version}, not 3.11")
    return version


def _demo_dockerfile(base: str, packages: Sequence[str]) -> str:
    """The agent's build, in two stages so the wheels never become a layer of the image."""
    return f"""\
FROM {base} AS env
COPY wheels/ /tmp/wheels/
RUN python3 -m venv {ENV_DIR} \\
 && {ENV_DIR}/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir \\
      --no-compile --disable-pip-version-check --quiet {" ".join(packages)}

FROM {base}
COPY --from=env {ENV_DIR} {ENV_DIR}
COPY repo/ {REPO_DIR}/
COPY report.json {REPORT_PATH}
WORKDIR {REPO_DIR}
"""


def _demo_report(python_version: str) -> dict[str, object]:
    """The self-report an honest agent would write for the good variant, key order as official."""
    return {
        "python_path": ENV_PYTHON,
        "python_version": python_version,
        "torch_version": TORCH_REQUIREMENT.partition("==")[2],
        "cuda_available": False,
        "gpu_count": 0,
        "ddp_expected_ok": None,
        "env_tool": "venv",
        "env_name": "tinynet",
        "notes": (
            f"python3 -m venv {ENV_DIR}; pip install {' '.join(WHEEL_REQUIREMENTS)} offline from "
            "a local wheelhouse (CPU-only torch build). No GPU was visible while building, so "
            "CUDA is reported unavailable and no distributed check was run."
        ),
    }


def _build_demo(
    client: docker.DockerClient, context: Path, tag: str, labels: dict[str, str]
) -> None:
    """Build without network, then drop the ``env`` stage so its wheel layer is not kept.

    The stage is built on its own first only to learn its image id; the full build then
    reuses it from the build cache.
    """
    options = {
        "path": str(context),
        "rm": True,
        "forcerm": True,
        "pull": False,
        "network_mode": "none",
    }
    try:
        stage, _ = client.images.build(target="env", **options)
        try:
            client.images.build(tag=tag, labels=labels, **options)
        finally:
            try:
                client.images.remove(stage.id)
            except APIError as exc:  # still used by a concurrent build: harmless to keep
                log.warning("could not remove the build stage %s: %s", stage.short_id, exc)
    except BuildError as exc:
        lines = [chunk.get("stream", "") for chunk in exc.build_log]
        tail = " | ".join(line.strip() for line in lines[-5:] if line.strip())
        raise ImageError(f"building {tag} failed: {_one_line(exc.msg)} ({tail})") from None


def make_demo_checkout(dest: Path) -> str:
    """Copy ``demo/tinynet`` to ``dest`` as a one-commit git repository; return the hash.

    Modes are normalised and ignored files (``demo/tinynet/.gitignore``) removed, so the
    working tree equals the commit and neither depends on the host's checkout.
    """
    if not DEMO_SOURCE.is_dir():
        raise ImageError(f"{DEMO_SOURCE} is missing; run from a pytest-reb checkout")
    shutil.copytree(DEMO_SOURCE, dest, ignore=shutil.ignore_patterns(".git"))
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
        _run_host("git " + args[0], ["git", "-C", str(dest), *args], env=env)
    return _run_host(
        "git rev-parse", ["git", "-C", str(dest), "rev-parse", "HEAD"], env=env
    ).strip()


def _run_host(what: str, command: list[str], env: dict[str, str] | None = None) -> str:
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


def _link_or_copy(source: Path, dest: Path) -> None:
    """Hard-link a wheel into the build context (torch is large); copy across filesystems."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)


def _remove_superseded(client: docker.DockerClient, tag: str) -> None:
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


def _image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True


def _lock(name: str) -> FileLock:
    """A host-wide lock per image, so parallel sessions (xdist workers) build it only once."""
    locks = CACHE_DIR / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    return FileLock(locks / f"{name}.lock")


def _digest(*parts: object) -> str:
    """Twelve hex digits of SHA-256 over the recipe inputs: short enough for a tag."""
    blob = json.dumps(parts, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
