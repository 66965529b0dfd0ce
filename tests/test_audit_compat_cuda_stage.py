"""Compat C5 where the cuda stage gave no answer: each validator's own handling.

A cuda stage file may be absent (the bundle's check left none on an
interpreter that gave it no answer), written without a block, or never end.
The validators differ there, and each bundle's ``CompatVariant`` says how:
a torch probe of its own standing in (kvpress, InternEvo), a device count
judged only beside a stage (Depth-Anything-V2, T-GATE, Vim, torchft), ddp
judged with no count (VisionMamba, renderformer, FunMusic), a blockless stage
read by its exit status (VisionMamba).  Each case's count is the one its
official script gives, read from the script; ``tools/compat_differential.py``
measures the same rules on generated cases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.repomodules import benchmark

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c5_observe import Invocation, PythonObservation
from pytest_reb.rules.c2_compat import official_c2
from pytest_reb.rules.c5 import audit
from pytest_reb.selfreport import load_report

PY = "/opt/env/bin/python"


def python(cuda: bool, count: int) -> PythonObservation:
    """An interpreter with torch 2.4.0 that answers every official question."""
    answer = {"ok": True, "torch_version": "2.4.0", "cuda_available": cuda, "gpu_count": count}
    return PythonObservation(
        path=PY, exists=True, is_dir=False, executable=True, runs=True,
        official_version=Invocation(0, "3.11.7\n", ""),
        official_torch=Invocation(0, "2.4.0\n", ""),
        official_torch_json=Invocation(0, json.dumps(answer) + "\n", ""))


def cuda_stage(how: str | None, repo: str) -> Outcome | None:
    """C2 as the tier records a probe that gave no answer (``how``), by the bundle's check;
    None: C2 did not run."""
    if how is None:
        return None
    got = official_c2(None, None, benchmark()[repo].c2_compat, how)  # type: ignore[arg-type]
    return Outcome(repo=repo, target="t", tier="c2", status="passed" if got.passed else "failed",
                   category="runtime", compat=got.passed,
                   evidence={"observed": None, "official_cuda": got.evidence()})


def counts(repo: str, report: dict[str, Any], c2: str | None, *, cuda: bool = False,
           count: int = 0, c4_failed: bool = False) -> tuple[int, bool]:
    """The capability count and the verdict of compat C5 for the bundle."""
    load = load_report(json.dumps({"python_path": PY, **report}).encode(), source="r")
    outcomes: dict[str, Outcome | None] = {"c2": cuda_stage(c2, repo)}
    if c4_failed:
        outcomes["c4"] = Outcome(repo=repo, target="t", tier="c4", status="failed",
                                 category="runtime", compat=False, command=["bash", "run.sh"])
    result = audit(load, python(cuda, count), outcomes, compat=True,
                   variant=benchmark()[repo].c5_compat)
    return result.counts["capability"], result.passed


# (repository, report, how C2 ended or None, the interpreter's CUDA and count,
#  a failed multi_gpu stage, the official capability count)
CASES: list[tuple[str, dict[str, Any], str | None, bool, int, bool, int]] = [
    # kvpress asks torch itself for CUDA with no cuda stage; the majority leaves it unjudged
    ("NVIDIA/kvpress", {"cuda_available": True}, None, False, 0, False, 1),
    ("apple/ml-mdm", {"cuda_available": True}, None, False, 0, False, 0),
    # ... and for the count
    ("NVIDIA/kvpress", {"gpu_count": 2}, None, False, 1, False, 1),
    # InternEvo: a stage that left the values out (its record for a crash: no file)
    ("InternLM/InternEvo", {"cuda_available": True, "gpu_count": 2}, "crashed", False, 0,
     False, 2),
    # Depth-Anything-V2 and Vim: the count only beside a cuda stage file
    ("DepthAnything/Depth-Anything-V2", {"gpu_count": 3}, "crashed", True, 2, False, 0),
    ("DepthAnything/Depth-Anything-V2", {"gpu_count": 3}, "no_python", True, 2, False, 1),
    ("hustvl/Vim", {"gpu_count": 3}, None, True, 2, False, 0),
    # Depth-Anything-V2 takes 0 with no stage: ddp is then inconclusive
    ("DepthAnything/Depth-Anything-V2", {"ddp_expected_ok": True}, None, True, 2, True, 0),
    # T-GATE: nothing beside a stage without a block, whatever torch says
    ("HaozheLiu-ST/T-GATE", {"cuda_available": True, "gpu_count": 3, "ddp_expected_ok": True},
     "missing", False, 2, True, 0),
    # VisionMamba, renderformer, FunMusic: ddp against a failed multi_gpu stage, no count
    ("kyegomez/VisionMamba", {"ddp_expected_ok": True}, None, True, 2, True, 1),
    ("microsoft/renderformer", {"ddp_expected_ok": True}, None, True, 2, True, 1),
    ("FunAudioLLM/FunMusic", {"ddp_expected_ok": True}, None, True, 2, True, 1),
    # VisionMamba reads a stage without a block by its exit status, count 0
    ("kyegomez/VisionMamba", {"cuda_available": True, "gpu_count": 2}, "timeout", True, 2,
     False, 2),
]


@pytest.mark.parametrize(("repo", "report", "c2", "cuda", "count", "c4_failed", "expected"),
                         CASES, ids=[f"{c[0].split('/')[1]}-{i}" for i, c in enumerate(CASES)])
def test_a_cuda_stage_without_an_answer(repo: str, report: dict[str, Any], c2: str | None,
                                        cuda: bool, count: int, c4_failed: bool,
                                        expected: int) -> None:
    assert counts(repo, report, c2, cuda=cuda, count=count, c4_failed=c4_failed)[0] == expected


def test_a_cuda_stage_that_never_ends_leaves_no_validator() -> None:
    """torchft's check hangs on an import that never returns: the official run stops, its
    validator never runs, so nothing is counted and the audit fails."""
    assert counts("meta-pytorch/torchft", {"python_version": "3.10.0", "gpu_count": 7},
                  "timeout") == (0, False)
