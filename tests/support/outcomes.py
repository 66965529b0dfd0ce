"""The one ``Outcome`` factory of the tests, and the ``ExecResult`` one beside it.

A test names only what it is about: the tier, the status and what matters to it; the
rest is what a tier would record (strict and compat follow the status unless given).
"""

from __future__ import annotations

from typing import Any

from pytest_reb.outcome import Outcome
from pytest_reb.rules.entrypoint_stage import GpuNeed, gpu_problem
from pytest_reb.targets import ExecResult

#: The channel the host's GPU evidence comes through on a machine with NVML.
NVML_CHANNEL = "host NVML compute contexts"


def outcome(tier: str = "c1", status: str = "passed", category: str | None = None, *,
            repo: str = "me/mini", target: str = "t", **fields: Any) -> Outcome:
    """An outcome of ``repo`` on ``target``; any other ``Outcome`` field by name."""
    fields.setdefault("strict", status == "passed")
    fields.setdefault("compat", status == "passed")
    return Outcome(repo=repo, target=target, tier=tier, status=status,  # type: ignore[arg-type]
                   category=category, **fields)


def exec_result(holders: dict[int, list[int]] | None = None, *, rc: int = 0, out: str = "",
                err: str = "", channel: str | None = NVML_CHANNEL, **fields: Any) -> ExecResult:
    """A command's result as the host records it: exit code, output, the GPUs' holders."""
    return ExecResult(["x"], rc, out, err, 1.0, gpu_holders=holders or {},
                      gpu_evidence_channel=channel, **fields)


def replayed_gpu_problem(evidence: dict[str, Any]) -> tuple[str, str] | None:
    """What C3's GPU rule makes of a recorded outcome's holders and counters (the GPU
    machine's records, ``tests/data/gpu/``)."""
    compute = {k: v for k, v in evidence["gpu_compute"].items() if k != "sm_active_min_ms"}
    holders = {int(pid): gpus for pid, gpus in evidence["gpu_holders"].items()}
    return gpu_problem(GpuNeed(1), exec_result(holders, gpu_compute=compute,
                                               channel=evidence["gpu_evidence_channel"]))
