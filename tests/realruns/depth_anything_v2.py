"""Real run, C0 and C1: DepthAnything/Depth-Anything-V2 in an image built here with its real deps.

Builds ``reb-real:dav2`` the way an agent would: the pinned checkout at the
official path, a venv with the PyPI builds of torch 2.13.0 and torchvision
0.28.0 (torchvision's operators need the CUDA build of torch; they fail
against the CPU-only one), opencv-python-headless, matplotlib and numpy, and a
truthful report.  Then fills an asset cache: the demo image (a repository
asset) by ``--reb-prepare``-less offline preparation, the hub checkpoint by a
random-init stand-in (``standin.py``).  Prints the pytest commands to run.

    python tests/realruns/depth_anything_v2.py MIRROR_GIT_DIR

MIRROR_GIT_DIR is a clone or mirror of the repository holding the pinned
commit.  The repository's code stays under .cache/ (git-ignored).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import standin

from pytest_reb.loop.images import ensure_base_image

ROOT = standin.ROOT
WORK = ROOT / ".cache" / "realruns"
IMAGE = "reb-real:dav2"
COMMIT = "e5a2732d3ea2cddc081d7bfd708fc0bf09f812f1"
ENV_DIR = "/opt/envs/dav2"
REPO_DIR = "/data/project/repo"
PACKAGES = ("torch==2.13.0", "torchvision==0.28.0", "opencv-python-headless", "matplotlib",
            "numpy")
#: CPython 3.11 wheels for the base image (bookworm, glibc 2.36), from PyPI only.
WHEEL_TARGET = ("--only-binary=:all:", "--implementation=cp", "--python-version=3.11",
                "--abi=cp311", *(f"--platform=manylinux_2_{m}_x86_64" for m in range(36, 4, -1)),
                "--platform=manylinux2014_x86_64")


def wheels(dest: Path) -> None:
    if any(dest.glob("torch-2.13.0-*.whl")):
        return
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", *WHEEL_TARGET, "-d", str(dest),
                    *PACKAGES], check=True)


def build(client: docker.DockerClient, context: Path, base: str) -> None:
    version = client.images.get(base).labels["reb.python-version"]
    report = {"python_path": f"{ENV_DIR}/bin/python", "python_version": version,
              "torch_version": "2.13.0", "cuda_available": False, "gpu_count": 0,
              "ddp_expected_ok": None, "env_tool": "venv", "env_name": "dav2",
              "notes": "venv; pip install torch==2.13.0 torchvision==0.28.0 "
                       "opencv-python-headless matplotlib numpy from a local wheelhouse. "
                       "Built without a GPU: CUDA reported unavailable."}
    (context / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (context / "Dockerfile").write_text(f"""\
FROM {base} AS env
COPY wheels/ /tmp/wheels/
RUN python3 -m venv {ENV_DIR} \\
 && {ENV_DIR}/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir --no-compile \\
      --disable-pip-version-check --quiet {" ".join(PACKAGES)}

FROM {base}
COPY --from=env {ENV_DIR} {ENV_DIR}
COPY repo/ {REPO_DIR}/
COPY report.json /opt/scimlopsbench/report.json
WORKDIR {REPO_DIR}
""")
    subprocess.run(["docker", "build", "--network", "none", "-t", IMAGE, str(context)],
                   check=True)


def main(mirror: str) -> None:
    client = docker.from_env()
    base = ensure_base_image(client)
    context = WORK / "dav2-context"
    wheels(context / "wheels")
    standin.checkout(mirror, COMMIT, context / "repo")
    build(client, context, base)
    cache = WORK / "assets"
    python = ["docker", "run", "--rm", "--network", "none", "-v", "{scratch}:/out", IMAGE,
              f"{ENV_DIR}/bin/python"]
    standin.dav2_model(python, REPO_DIR, cache)
    print(f"image {IMAGE}; asset cache {cache}")
    print("pytest repos/test_DepthAnything__Depth_Anything_V2.py --reb-image reb-real:dav2 "
          f"--reb-assets {cache} -m 'c0 or c1' -v -rA")


if __name__ == "__main__":
    main(sys.argv[1])
