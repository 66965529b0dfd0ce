"""Real run, C0 C1 C5: ZhengYinan-AIR/Diffusion-Planner in an image built here with its real deps.

Builds ``reb-real:diffusion-planner`` the way an agent would: the checkout at
the official path, a venv with what ``train_predictor.py`` imports on its CPU
training path, and a truthful report:

* torch 2.13.0 and torchvision 0.28.0, the CUDA builds from PyPI: timm imports
  ``torchvision.ops`` at ``import timm`` (``timm/layers/norm_act.py``), and
  PyPI's torchvision does not load beside the CPU-only torch (docs/real-runs.md);
* timm, tensorboard (``torch.utils.tensorboard``), wandb (``tb_log.py``; offline
  mode), mmengine (``mmengine.fileio.dump`` of args.json), tqdm, numpy;
* nuplan-devkit, which is on no package index: installed ``--no-deps`` from
  its source (fetched repository, pinned below), because
  ``diffusion_planner/utils/data_augmentation.py`` imports
  ``nuplan.common.actor_state.vehicle_parameters`` (pure Python, numpy only).
  Its requirements.txt (simulation, nuBoard, ray, pinned numpy 1.23) is not
  installed: no module of the training path needs it.

The pinned commit 3558eac... is in no history the session could fetch (main is
the squash 5659e49, Apr 2025); the image holds
the public HEAD, and the integrity check reports that it cannot find the pin.  At that HEAD
training fails in the repository's own code (PRE_GUIDANCE below), so a second image,
``reb-real:diffusion-planner-16cffef``, holds the last public commit before it; the GPU
machine gets that checkout.

    python tests/realruns/diffusion_planner.py PLANNER_MIRROR NUPLAN_MIRROR

Both are git directories (the session's ``fetch`` mirrors).  The checkout is
also left in ``.realrun/Diffusion-Planner`` for the GPU machine (gpu.sh).  The
repositories' code stays under .cache/ and .realrun/ (git-ignored).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import standin

from pytest_reb.loop.images import ensure_base_image

ROOT = standin.ROOT
WORK = ROOT / ".cache" / "realruns"
IMAGE = "reb-real:diffusion-planner"
IMAGE_PRE = "reb-real:diffusion-planner-16cffef"
MODULE = "repos/test_ZhengYinan_AIR__Diffusion_Planner.py"
#: The pin of repos/ (absent upstream) and the public commit the image holds instead.
PINNED = "3558eaccee936f177ffbb3fb420540eccd8855e9"
PUBLIC = "5659e494250523a603902e1c3dca0651d2e4c6fa"
#: The last public commit before the squash added classifier guidance: 5659e49's decoder reads
#: ``config.guidance_fn``, which train_predictor.py never sets (upstream issues #32, #42), so
#: training fails there; train_predictor.py itself is the same in both.
PRE_GUIDANCE = "16cffef4ae84a2efcb466fb7b2f5cf9defbe386d"
#: motional/nuplan-devkit, its public HEAD when fetched (version 1.2.2).
NUPLAN = "e9241677997dd86bfc0bcd44817ab04fe631405b"
ENV_DIR = "/opt/envs/diffusion_planner"
REPO_DIR = "/data/project/repo"
PACKAGES = ("torch==2.13.0", "torchvision==0.28.0", "timm", "tensorboard", "wandb", "mmengine",
            "tqdm", "numpy")
#: CPython 3.11 wheels for the base image (bookworm, glibc 2.36), from PyPI only.
WHEEL_TARGET = ("--only-binary=:all:", "--implementation=cp", "--python-version=3.11",
                "--abi=cp311", *(f"--platform=manylinux_2_{m}_x86_64" for m in range(36, 4, -1)),
                "--platform=manylinux2014_x86_64", "--platform=any")


def wheels(dest: Path) -> None:
    """Download the wheels (reusing Depth-Anything-V2's torch, hard-linked, when present)."""
    dest.mkdir(parents=True, exist_ok=True)
    for wheel in (WORK / "dav2-context" / "wheels").glob("*.whl"):
        if not (dest / wheel.name).exists():
            (dest / wheel.name).hardlink_to(wheel)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", *WHEEL_TARGET, "-d", str(dest),
                    "--find-links", str(dest), *PACKAGES], check=True)
    for cpu in dest.glob("torch-*+cpu-*.whl"):  # a local CPU build the host's pip offers
        cpu.unlink()


def nuplan_source(mirror: str, dest: Path) -> None:
    """nuplan-devkit's package and setup.py at ``NUPLAN`` (git archive; never committed)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", mirror, "archive", NUPLAN, "setup.py", "nuplan"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def build(client: docker.DockerClient, context: Path, base: str, commit: str, tag: str) -> None:
    """The image ``tag`` with the checkout of ``commit`` (``context``/repo-<commit>)."""
    version = client.images.get(base).labels["reb.python-version"]
    report = {"python_path": f"{ENV_DIR}/bin/python", "python_version": version,
              "torch_version": "2.13.0+cu130", "cuda_available": False, "gpu_count": 0,
              "ddp_expected_ok": None, "env_tool": "venv", "env_name": "diffusion_planner",
              "notes": "venv; pip install " + " ".join(PACKAGES) + " from a local wheelhouse; "
                       f"nuplan-devkit {NUPLAN[:12]} from source with --no-deps (only "
                       "nuplan.common.actor_state is imported by training). Checkout is the "
                       f"public {commit[:12]}: the pinned {PINNED[:12]} is not public. "
                       "Built without a GPU: CUDA reported unavailable."}
    (context / f"report-{commit[:7]}.json").write_text(json.dumps(report, indent=2) + "\n")
    (context / f"Dockerfile-{commit[:7]}").write_text(f"""\
FROM {base} AS env
COPY wheels/ /tmp/wheels/
COPY nuplan-devkit/ /tmp/nuplan-devkit/
RUN python3 -m venv {ENV_DIR} \\
 && {ENV_DIR}/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir --no-compile \\
      --disable-pip-version-check --quiet {" ".join(PACKAGES)} setuptools \\
 && {ENV_DIR}/bin/pip install --no-index --no-deps --no-build-isolation --no-cache-dir \\
      --disable-pip-version-check --quiet /tmp/nuplan-devkit

FROM {base}
COPY --from=env {ENV_DIR} {ENV_DIR}
COPY repo-{commit[:7]}/ {REPO_DIR}/
COPY report-{commit[:7]}.json /opt/scimlopsbench/report.json
WORKDIR {REPO_DIR}
""")
    subprocess.run(["docker", "build", "--network", "none", "-f",
                    str(context / f"Dockerfile-{commit[:7]}"), "-t", tag, str(context)], check=True)


def main(planner_mirror: str, nuplan_mirror: str) -> None:
    client = docker.from_env()
    base = ensure_base_image(client)
    context = WORK / "dp-context"
    wheels(context / "wheels")
    nuplan_source(nuplan_mirror, context / "nuplan-devkit")
    for commit, tag in ((PUBLIC, IMAGE), (PRE_GUIDANCE, IMAGE_PRE)):
        standin.checkout(planner_mirror, commit, context / f"repo-{commit[:7]}")
        build(client, context, base, commit, tag)
        print(f"pytest {MODULE} --reb-image {tag} "
              f"--agent-report {context / f'report-{commit[:7]}.json'} -m 'c0 or c1 or c5' -v -rA")
    standin.checkout(planner_mirror, PRE_GUIDANCE, ROOT / ".realrun" / "Diffusion-Planner")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
