"""What the compat differentials feed both sides: stand-in interpreters and generated cases.

The interpreters are real (venvs of this machine's Python with a stand-in
``torch`` of a chosen version, CUDA answer and build; scripts that print
nothing, print a version, or fail; a non-executable file, a directory), so the
official scripts and pytest-reb ask the same processes the same questions.
The cases are reports with every field varied and C1-C4 outcomes as a compat
run records them.  ``tools/compat_differential.py`` (C5) and
``tools/compat_c2_differential.py`` (C2) use them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_reb.rules.c2_compat import official_c2
from pytest_reb.variants import SITUATIONS, C2Variant, Situation

#: The interpreter every stand-in is made from (the one running this tool, not a pyenv shim).
BASE_PYTHON = sys.executable

# --------------------------------------------------------------------------- interpreters


@dataclass(frozen=True)
class Torch:
    """A stand-in ``torch``: a version string and what ``torch.cuda`` answers."""

    version: str
    available: bool
    count: int
    broken: bool = False  # ``import torch`` raises
    cuda_build: str | None = "12.4"  # ``torch.version.cuda``; None: a CPU build, no ``.cuda()``
    exit_after: int | None = None  # the process exits so at the end (whatever it printed)
    on_import: str | None = None  # ``abort``: the import kills the process; ``hang``: never returns


#: name -> stand-in torch (None: no torch installed).
VENVS: dict[str, Torch | None] = {
    "cu2": Torch("2.4.0+cu124", True, 2),
    "cu1": Torch("2.5.1", True, 1),
    "cpu": Torch("2.4.0", False, 0, cuda_build=None),
    "spoof": Torch("2.4.0+cu124", True, 0, cuda_build=None),  # a patched is_available()
    "notorch": None,
    "broken": Torch("0", False, 0, broken=True),
}
#: Executables that are not Python: name -> shell body.
SCRIPTS = {
    "silent": "exit 0",  # exit 0, prints nothing
    "echo": "echo 3.11.7",  # prints a version whatever it is asked
    "fails": "echo nope >&2; exit 3",
}


#: What every working stand-in has: a scalar "tensor" enough for the probes' kernels.
TENSOR = """
class _T:
    def __init__(self, v=1.0, on_gpu=False):
        self.v, self.on_gpu = v, on_gpu
    def __matmul__(self, o): return _T(self.v * o.v, self.on_gpu)
    def __sub__(self, o): return _T(self.v - o.v, self.on_gpu)
    def __add__(self, o): return _T(self.v + o.v, self.on_gpu)
    def __mul__(self, o): return _T(self.v * getattr(o, "v", o), self.on_gpu)
    def __truediv__(self, o): return _T(self.v / o.v, self.on_gpu)
    def __float__(self): return float(self.v)
    def sum(self, *a, **k): return self
    def abs(self): return _T(abs(self.v), self.on_gpu)
    def max(self): return self
    def item(self): return float(self.v)
    def cpu(self): return _T(self.v)
    def to(self, device, *a, **k): return self.cuda() if "cuda" in str(device) else self.cpu()
    def cuda(self, *a, **k):
        if version.cuda is None or not cuda.device_count():
            raise AssertionError("Torch not compiled with CUDA enabled")
        return _T(self.v, True)
float32 = float16 = "dtype"
class Generator:
    def manual_seed(self, seed): return self
def randn(*a, **k):
    return _T(1.0).cuda() if "cuda" in str(k.get("device", "")) else _T(1.0)
ones = rand = zeros = tensor = randn
class backends:
    class cuda:
        class matmul:
            allow_tf32 = True
"""


def torch_source(t: Torch) -> str:
    """``torch/__init__.py`` of a stand-in: what the official probes and pytest-reb's ask."""
    if t.broken:
        return "raise ImportError('libtorch_cuda.so: cannot open shared object file')\n"
    if t.on_import == "abort":
        return "import os\nos.abort()\n"
    if t.on_import == "hang":
        return "import time\ntime.sleep(10 ** 6)\n"
    tail = (f"import atexit, os\natexit.register(os._exit, {t.exit_after})\n"
            if t.exit_after is not None else "")
    return (f"__version__ = {t.version!r}\n"
            f"class version:\n    cuda = {t.cuda_build!r}\n"
            "class cuda:\n"
            f"    @staticmethod\n    def is_available():\n        return {t.available!r}\n"
            f"    @staticmethod\n    def device_count():\n        return {t.count!r}\n"
            "    @staticmethod\n    def get_arch_list():\n        return ['sm_90']\n"
            "    @staticmethod\n    def get_device_capability(i=0):\n        return (9, 0)\n"
            "    @staticmethod\n    def get_device_name(i=0):\n        return 'NVIDIA H200'\n"
            "    @staticmethod\n    def current_device():\n        return 0\n"
            "    @staticmethod\n    def synchronize(*a):\n        return None\n"
            "    @staticmethod\n    def set_device(i):\n        return None\n"
            + TENSOR + tail)


def build_interpreters(root: Path, venvs: Mapping[str, Torch | None] = VENVS) -> dict[str, str]:
    """Make the interpreters under ``root``; returns name -> absolute path."""
    paths: dict[str, str] = {}
    for name, t in venvs.items():
        venv = root / "venv" / name
        subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        if t is not None:
            site = next((venv / "lib").glob("python3*")) / "site-packages" / "torch"
            site.mkdir(parents=True)
            (site / "__init__.py").write_text(torch_source(t))
        paths[name] = str(venv / "bin" / "python")
    for name, body in SCRIPTS.items():
        script = root / "bin" / name
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
        paths[name] = str(script)
    noexec = root / "bin" / "noexec"
    noexec.write_text("print('3.11.7')\n")
    noexec.chmod(0o644)
    paths["noexec"] = str(noexec)
    paths["dir"] = str(root / "venv" / "cu2" / "bin")
    paths["missing"] = str(root / "venv" / "gone" / "bin" / "python")
    return paths


#: How the interpreters' folder is named in dumps and in the test table.
WORK = "/opt/reb-diff"
#: The relative interpreter every checkout holds (a link to the ``cu2`` venv).
RELATIVE = ".venv/bin/python"
#: A bare name: no file of the checkout, but ``subprocess`` finds it on ``PATH``.
BARE = "python3"


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One input: the bundle, the report (bytes, or None for no file), and the C1-C4 outcomes."""

    bundle: str
    report: str | None
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)  # tier -> outcome fields
    label: str = ""


def python_version() -> str:
    out = subprocess.run([BASE_PYTHON, "-c", "import platform; print(platform.python_version())"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def report_value(rng: random.Random, key: str, py: str, interp: dict[str, str],
                 torch: Torch | None) -> Any:
    """A value of ``key`` as agents write them: right, padded, short, wrong, typed wrong."""
    tv = torch.version if torch and not torch.broken else "2.4.0+cu124"
    pools: dict[str, list[Any]] = {
        "python_version": [py, py, f" {py}\n", py.rsplit(".", 1)[0], "3.10.14", None, "",
                           float(py.rsplit(".", 1)[0]), 3, True, [py]],
        "torch_version": [tv, tv, f"{tv} ", tv.split("+")[0], "2.3.1", None, "", 2.4, 0,
                          {"v": tv}],
        "cuda_available": [True, True, False, None, "true", "false", 1, 0],
        "gpu_count": [0, 1, 2, 2, None, "2", 1.0, 2.0, True, -1, "two"],
        "ddp_expected_ok": [True, False, None, "true", 1],
        "env_tool": ["venv", "conda", "docker", None],
        "env_name": ["x", None, ""],
        "notes": ["", None, "made by the differential"],
    }
    return rng.choice(pools[key])


def make_report(rng: random.Random, interp: dict[str, str], py: str) -> tuple[str | None, str]:
    """A report text (None: no file) and a label saying what kind it is."""
    shape = rng.random()
    if shape < 0.05:
        return None, "no report"
    if shape < 0.12:
        text, label = rng.choice([("", "empty file"), ("{python_path: nope", "broken JSON"),
                                  ("[1, 2]", "array"), ("null", "null"), ('"x"', "string"),
                                  ("{}", "empty object"), ("42", "number")])
        return text, label
    name = rng.choice([*interp, "cu2", "cu2", "cpu", "cu1", "relative", "padded", "rel_missing",
                       "bare", "false", "empty", "number", "absent"])
    torch = VENVS.get(name) if name in VENVS else (VENVS["cu2"] if name in ("relative",
                                                                            "padded") else None)
    path: Any = {"relative": RELATIVE, "padded": f" {interp['cu2']}\n",
                 "rel_missing": "venv/bin/python", "bare": BARE, "false": "/bin/false",
                 "empty": "", "number": 3}.get(
                     name, interp.get(name))
    data: dict[str, Any] = {"python_path": path}
    for key in ("python_version", "torch_version", "cuda_available", "gpu_count",
                "ddp_expected_ok", "env_tool", "env_name", "notes"):
        data[key] = report_value(rng, key, py, interp, torch)
    if name == "absent":
        del data["python_path"]
    for key in list(data):
        if key != "python_path" and rng.random() < 0.04:
            del data[key]
    return json.dumps(data), f"python {name}"


#: What our C2 probe prints, by the interpreter it ran under: the JSON line and the exit.
C2_ANSWERS: dict[str, tuple[dict[str, Any], int]] = {
    "cu2": ({"framework": "pytorch", "cuda_available": True, "gpu_count": 2}, 0),
    "cu1": ({"framework": "pytorch", "cuda_available": True, "gpu_count": 1}, 0),
    "cu4": ({"framework": "pytorch", "cuda_available": True, "gpu_count": 4}, 0),
    "cpu": ({"framework": "pytorch", "cuda_available": False, "gpu_count": 0}, 0),
    "spoof": ({"framework": "pytorch", "cuda_available": True, "gpu_count": 0,
               "spoof": ["torch.cuda.device_count() is 0"]}, 0),
    "exits1": ({"framework": "pytorch", "cuda_available": True, "gpu_count": 2}, 1),
    "exits1_cpu": ({"framework": "pytorch", "cuda_available": False, "gpu_count": 0}, 1),
    "none": ({"framework": "none", "cuda_available": False, "gpu_count": 0,
              "torch_error": "ModuleNotFoundError: No module named 'torch'"}, 3),
}
#: Our category of an unanswered probe (``stage_messages.categorise``), by situation.
C2_CATEGORY = {"no_python": "missing_report", "missing": "entrypoint_not_found",
               "not_executable": "entrypoint_not_found", "directory": "entrypoint_not_found",
               "timeout": "timeout", "crashed": "runtime", "failed": "runtime",
               "silent": "runtime", "garbage": "runtime"}


def c2_outcome(rng: random.Random, variant: C2Variant) -> dict[str, Any]:
    """A C2 outcome as the tier records it: our probe's answer (or how it gave none) and
    what this bundle's official stage would have written of it (``official_c2``)."""
    if rng.random() < 0.5:
        obs, exit_code = C2_ANSWERS[rng.choice(list(C2_ANSWERS))]
        how: Situation = "silent"
        category = (None if obs.get("cuda_available") and not obs.get("spoof") else
                    "deps" if obs["framework"] == "none" else
                    "cuda_spoofed" if obs.get("spoof") else "cuda_unavailable")
    else:
        obs, how = None, rng.choice(SITUATIONS)
        exit_code = {"timeout": None, "missing": 127, "not_executable": 127, "directory": 127,
                     "crashed": -6, "failed": 1, "no_python": None}.get(how, 0)
        category = C2_CATEGORY[how]
    official = official_c2(obs, exit_code, variant, how)
    fields: dict[str, Any] = {
        "status": "passed" if official.passed else "failed",
        "category": None if official.passed else category or "runtime",
        "compat": official.passed, "message": "differential",
        "evidence": {"observed": obs, "official_cuda": official.evidence()}}
    if how != "no_python":
        fields |= {"command": ["python", "cuda_probe.py"], "exit_code": exit_code,
                   "timed_out": how == "timeout" and obs is None}
    return fields


def make_stages(rng: random.Random, c2: C2Variant) -> dict[str, dict[str, Any]]:
    """C1-C4 outcomes (fields of ``Outcome``) as a compat run records them; some did not run."""
    stages: dict[str, dict[str, Any]] = {}
    for tier in ("c1", "c2", "c3", "c4"):
        roll = rng.random()
        if roll < (0.05 if tier == "c2" else 0.15):
            continue  # not run: no stage file
        if tier == "c2":
            stages[tier] = c2_outcome(rng, c2)
            continue
        if roll < 0.35:
            stages[tier] = {"status": "skipped", "category": "not_applicable",
                            "message": "repo_not_supported", "compat": None}
            continue
        ok = rng.random() < 0.55
        fields: dict[str, Any] = {"status": "passed" if ok else "failed",
                                  "category": None if ok else rng.choice(
                                      ["runtime", "deps", "timeout", "cuda_unavailable",
                                       "infra", "data", "missing_report",
                                       "entrypoint_not_found", "insufficient_hardware",
                                       "model", "args_unknown", "unknown"]),
                                  "compat": ok, "message": "differential"}
        if fields["category"] != "missing_report" and rng.random() < 0.7:
            fields["command"] = ["bash", "run.sh"]  # it launched (one validator asks)
        stages[tier] = fields
    return stages


def cases(bundles: list[str], count: int, seed: int, interp: dict[str, str],
          c2: Mapping[str, C2Variant]) -> Iterator[Case]:
    """``count`` cases spread evenly over ``bundles`` (``c2``: each bundle's cuda check)."""
    rng = random.Random(seed)
    py = python_version()
    for i in range(count):
        bundle = bundles[i % len(bundles)]
        text, label = make_report(rng, interp, py)
        yield Case(bundle, text, make_stages(rng, c2[bundle]), label)
