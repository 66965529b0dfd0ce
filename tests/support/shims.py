"""Helpers shared by the tests of our shims, one test file per folder of ``repos/shims/``.

Every shim test runs a shim for real on the host python against small stand-ins of the
code it patches, drives or serves; these are the ways of running one that several
folders' tests share (``from support.shims import ...``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from support.repomodules import REPOS, SHIMLIB

#: The shim folders, one per repository module that has shims: ``repos/shims/<module>/``.
SHIMS = REPOS / "shims"


# --------------------------------------------------------------- drivers' stand-ins
# VisionMamba, comic-translate, nano-vllm, SocialED

#: A stand-in torch: the default device, the current CUDA device and the GPU count (FAKE_GPUS)
#: are what the drivers touch; ``python -m torch.distributed.run [options] script.py args`` runs
#: the script once per rank with LOCAL_RANK and WORLD_SIZE set, in turn.
FAKE_TORCH = {
    "torch/__init__.py": """
        from . import cuda
        DEFAULT_DEVICE = None
        def set_default_device(device):
            global DEFAULT_DEVICE
            DEFAULT_DEVICE = device
    """,
    "torch/cuda.py": """
        import os
        CURRENT = None
        def device_count():
            return int(os.environ.get("FAKE_GPUS", "0"))
        def is_available():
            return device_count() > 0
        def set_device(index):
            global CURRENT
            if index >= device_count():
                raise RuntimeError(f"invalid device ordinal {index}")
            CURRENT = index
            print("set_device", index)
    """,
    "torch/distributed/__init__.py": "",
    "torch/distributed/run.py": """
        import os, subprocess, sys
        args = sys.argv[1:]
        print("torchrun", args)
        n = int(args[args.index("--nproc_per_node") + 1])
        script = next(i for i, a in enumerate(args) if a.endswith(".py"))
        for rank in range(n):
            env = {**os.environ, "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n)}
            code = subprocess.call([sys.executable, *args[script:]], env=env)
            if code:
                sys.exit(code)
    """,
}


def run_python(argv: list[str], cwd: Path, pythonpath: list[Path],
               **env: str) -> subprocess.CompletedProcess[str]:
    """``python argv`` as a stage runs it: cwd the repository, the shim folder first on
    PYTHONPATH (as the tiers put it), then the stand-in libraries."""
    full = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUDA_VISIBLE_DEVICES")}
    full.update({"PYTHONPATH": ":".join(map(str, pythonpath)), "PYTHONDONTWRITEBYTECODE": "1"})
    full.update(env)
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


# -------------------------------------------------------- a clean budget environment
# torchft, kvpress, SenseVoice, MultiModalMamba

BUDGET_VARS = ("SCIMLOPSBENCH_", "CUDA_VISIBLE_DEVICES", "XPU_VISIBLE_DEVICES",
               "_REB_TORCHFT_CUDA_CHECKED", "PYTHONPATH")


def python(argv: list[str], pythonpath: list[Path], cwd: Path,
           **env: str) -> subprocess.CompletedProcess[str]:
    """``argv`` under the host python with a clean budget environment plus ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(BUDGET_VARS)}
    path = ":".join(map(str, [*pythonpath[:1], SHIMLIB, *pythonpath[1:]]))
    return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True,
                          env={**base, "PYTHONPATH": path, **env}, timeout=60)


def python_code(code: str, pythonpath: list[Path], cwd: Path, **env: str) -> str:
    """``python -c code`` as ``python`` runs it (the shim folder ``pythonpath[0]`` first, then
    our shim library), its output; it must exit 0."""
    done = python(["-c", code], pythonpath, cwd, **env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def fill(text: str, **values: str) -> str:
    """``text`` with each ``{key}`` replaced by its value: a module's placeholders as a stage
    would see them, without the plugin's filling."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


# -------------------------------------------------- a stage's places in a temporary tree
# Sana, ClearerVoice, FlagGems, renderformer

def shim(stem: str, name: str) -> str:
    """The path of one of our shims; a missing file fails here, not as a puzzling exit code."""
    path = SHIMS / stem / name
    assert path.is_file(), path
    return str(path)


def run(argv: Sequence[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``cwd`` with this process's environment plus ``env``, output captured."""
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


class Tree:
    """What a stage's placeholders stand for in a temporary target (a stand-in of the plugin's
    filling: placeholders first, then ``{file:..}`` and ``{glob:..}`` read from disk)."""

    def __init__(self, root: Path, stem: str) -> None:
        self.places = {"{python}": sys.executable, "{repo}": str(root / "repo"),
                       "{assets}": str(root / "assets"), "{out}": str(root / "out"),
                       "{shims}": str(SHIMS / stem), "{port}": "29555"}
        for key in ("{repo}", "{assets}", "{out}"):
            Path(self.places[key]).mkdir(parents=True, exist_ok=True)

    def __getitem__(self, key: str) -> Path:
        return Path(self.places["{" + key + "}"])

    def fill(self, value: str) -> str:
        for key, place in self.places.items():
            value = value.replace(key, place)

        def resolve(match: re.Match[str]) -> str:
            kind, arg = match.group(1), match.group(2)
            if kind == "file":
                return Path(arg).read_text(encoding="utf-8").strip()
            found = sorted(glob.glob(arg))
            assert found, f"nothing matches {arg}"
            return found[0]
        return re.sub(r"\{(glob|file):([^{}]+)\}", resolve, value)

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [self.fill(a) for a in argv]

    def setup(self, stage: Any, **env: str) -> None:
        for step in stage.setup:
            res = run(self.argv(step), Path(self.fill(stage.cwd)), **env)
            assert res.returncode == 0, (step, res.stdout, res.stderr)


def report(res: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON a stand-in program printed after ``REPORT `` (it must have exited 0)."""
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))
