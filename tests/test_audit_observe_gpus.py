"""C5 asks the report's interpreter with the run's GPUs, where the official validator asked.

metavoice-src, ClearerVoice-Studio and FunMusic take the device count from
their own probe of the report's interpreter, which ran beside the GPUs; an
observation made in the CPU profile reads 0 there, and turns an honest
``gpu_count: 2`` into a capability hallucination (issue 27).  The
interpreter here is real: this machine's Python with a stand-in ``torch``
that counts the devices ``CUDA_VISIBLE_DEVICES`` leaves it, which is what the
local target's profiles set, so the test needs no GPU.  ``tests/test_audit_gpu.py``
asks the same of a real torch on a GPU machine.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

import pytest
from support.repomodules import benchmark

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.pyramid.c5_observe import observe_python
from pytest_reb.rules.c5 import audit
from pytest_reb.selfreport import load_report
from pytest_reb.targets import LocalTarget

ROOT = Path(__file__).resolve().parent.parent
#: A torch whose device count is what the process was let see.
TORCH = """\
import os
__version__ = "2.4.0+cu124"
class cuda:
    @staticmethod
    def _ids():
        return [i for i in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if i.strip()]
    @staticmethod
    def is_available():
        return bool(cuda._ids())
    @staticmethod
    def device_count():
        return len(cuda._ids())
"""


@pytest.fixture
def python(tmp_path: Path) -> str:
    """An interpreter (a wrapper of this one) that imports the stand-in torch."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(TORCH)
    wrapper = tmp_path / "bin" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


def report(python: str, **claims: Any) -> dict[str, Any]:
    return {"python_path": python, "python_version": platform.python_version(),
            "torch_version": "2.4.0+cu124", "cuda_available": None, "gpu_count": 2,
            "ddp_expected_ok": None, "env_tool": "venv", "env_name": None, "notes": "", **claims}


def test_the_official_probe_sees_the_lease(python: str, tmp_path: Path) -> None:
    target = LocalTarget(gpus=["0", "1"])
    with_gpus = observe_python(target, python, checkout=str(tmp_path), gpus=["0", "1"])
    without = observe_python(target, python, checkout=str(tmp_path))
    assert with_gpus.official_torch_json is not None and without.official_torch_json is not None
    assert json.loads(with_gpus.official_torch_json.stdout)["gpu_count"] == 2
    assert json.loads(without.official_torch_json.stdout)["gpu_count"] == 0
    assert with_gpus.runs and with_gpus.torch_version == "2.4.0+cu124"


@pytest.mark.parametrize("name", ["metavoiceio/metavoice-src", "modelscope/ClearerVoice-Studio",
                                  "FunAudioLLM/FunMusic"])
def test_a_true_gpu_count_read_from_the_probe_is_no_hallucination(
        name: str, python: str, tmp_path: Path) -> None:
    variant = benchmark()[name].c5_compat
    load = load_report(json.dumps(report(python)).encode(), source="report.json")
    target = LocalTarget(gpus=["0", "1"])
    seen = observe_python(target, python, checkout=str(tmp_path), gpus=["0", "1"])
    assert audit(load, seen, {}, compat=True, variant=variant).counts["capability"] == 0
    blind = observe_python(target, python, checkout=str(tmp_path))  # the CPU profile: 0 GPUs
    assert audit(load, blind, {}, compat=True, variant=variant).counts["capability"] == 1


def test_c5_observes_with_every_gpu_of_the_target(pytester: pytest.Pytester,
                                                  python: str) -> None:
    """Through the plugin: C5's observation is made with ``--reb-gpus``' devices held."""
    module = (ROOT / "demo" / "test_demo__tinynet.py").read_text().replace(
        "from pytest_reb import Repo, Run, torchrun",
        "from pytest_reb import CompatVariant, Repo, Run, torchrun").replace(
        '    imports_total=8,', '    imports_total=8,\n'
        '    c5_compat=CompatVariant(gpu_from="probe"),')
    pytester.makepyfile(test_demo__tinynet=module)
    path = pytester.path / "report.json"
    path.write_text(json.dumps(report(python)))
    out = pytester.path / "reports"
    result = pytester.runpytest("--rootdir", str(pytester.path),
                                "--reb-host", "local://", "--reb-gpus", "0,1",
                                "--agent-report", str(path),
                                "--reb-repo-dir", str(ROOT / "demo" / "tinynet"),
                                "--reb-allow-commit-mismatch", "-m", "c5", "--reb-compat",
                                "--reb-outdir", str(out), "-p", "no:cacheprovider")
    [log] = out.glob("*/outcomes.jsonl")
    c5: Outcome = next(o for o in OutcomeLog(log) if o.tier == "c5")
    probe = c5.evidence["observed"]["official_torch_json"]
    assert json.loads(probe["stdout"])["gpu_count"] == 2, result.stdout.str()[-2000:]
    assert c5.compat is True and c5.evidence["counts"]["capability"] == 0, c5.message
