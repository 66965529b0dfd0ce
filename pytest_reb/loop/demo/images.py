"""The demo images: the base image with an agent's environment for ``demo/tinynet`` in it.

Python packages are installed offline from a host-side wheelhouse in the checkout's
``.cache/wheels`` (downloaded once), in a build without network.  Tags are
``reb-demo:<variant>-<recipe>``, aliased ``reb-demo:<variant>`` (and ``reb-demo:latest``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import docker
from docker.errors import APIError, BuildError

from pytest_reb.loop.demo.checkout import make_demo_checkout, source_root
from pytest_reb.loop.images import (
    LABEL_PYTHON,
    LABEL_RECIPE,
    ImageError,
    digest,
    ensure_base_image,
    image_exists,
    lock,
    one_line,
    remove_superseded,
    run_host,
)

log = logging.getLogger(__name__)

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


def cache_dir() -> Path:
    """The checkout's ``.cache/``: the wheelhouse, and build contexts that hard-link from it."""
    return source_root() / ".cache"


def ensure_wheelhouse() -> list[Path]:
    """Return the wheels the demo environment installs, downloading them on first use.

    The image builds run without network, so every wheel must be on the host. A manifest per
    requirement set records what pip resolved, so later calls neither resolve nor download,
    and the set (which is part of the demo recipe) stays fixed until ``.cache/`` is removed.
    """
    cache = cache_dir()
    wheelhouse = cache / "wheels"
    key = digest(WHEEL_REQUIREMENTS, WHEEL_TARGET)
    manifest = wheelhouse / f"manifest-{key}.txt"
    with lock("wheels"):
        if manifest.exists():
            wheels = [wheelhouse / name for name in manifest.read_text().split()]
            if all(wheel.exists() for wheel in wheels):
                return wheels
        log.info("downloading %s and dependencies to %s", " ".join(WHEEL_REQUIREMENTS), wheelhouse)
        wheelhouse.mkdir(parents=True, exist_ok=True)
        # A fresh directory holds exactly the resolved set; wheels already in the wheelhouse are
        # found there (--find-links) instead of being fetched again.
        download = Path(tempfile.mkdtemp(prefix="download-", dir=cache))
        try:
            pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
            sources = ["--dest", str(download), "--find-links", str(wheelhouse)]
            run_host(
                "pip download", [*pip, "download", *sources, *WHEEL_TARGET, *WHEEL_REQUIREMENTS]
            )
            names = sorted(path.name for path in download.glob("*.whl"))
            for name in names:
                (download / name).replace(wheelhouse / name)
        finally:
            shutil.rmtree(download)
        manifest.write_text("".join(f"{name}\n" for name in names))
        return [wheelhouse / name for name in names]


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
        lock(f"demo-{variant}"),
        tempfile.TemporaryDirectory(prefix="reb-demo-build-", dir=cache_dir()) as scratch,
    ):
        context = Path(scratch)
        commit = make_demo_checkout(context / "repo")
        recipe = digest("demo", variant, dockerfile, commit, [w.name for w in wheels], report)
        tag = f"{DEMO_REPOSITORY}:{variant}-{recipe}"
        if not image_exists(client, tag):
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
        remove_superseded(client, tag)
    return tag


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
        raise ImageError(f"building {tag} failed: {one_line(exc.msg)} ({tail})") from None


def _link_or_copy(source: Path, dest: Path) -> None:
    """Hard-link a wheel into the build context (torch is large); copy across filesystems."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copyfile(source, dest)
