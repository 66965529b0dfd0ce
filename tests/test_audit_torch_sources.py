"""Strict C5's torch version against every source the run has: C2's probe and the host.

- C2's CUDA probe is a file the interpreter runs in the GPU profile; a ``.pth`` that lies
  to the audit's ``-c`` only is caught by it: a claim C2's probe contradicts is a version
  hallucination, even when the audit's probe repeated the claim.
- the host's read of the files (``hostfacts``): a version no torch install supports fails; a
  host that found no torch at all where the interpreter looks supports nothing; a host that
  could not read the files leaves the claim inconclusive, never confirmed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from test_audit import HONEST_CPU, c2_cpu, healthy

from pytest_reb.evidence import hostfacts
from pytest_reb.evidence.hostfacts import HostFacts, TorchInstall
from pytest_reb.rules.c5 import audit
from pytest_reb.rules.c5_result import AuditResult
from pytest_reb.selfreport import load_report
from pytest_reb.targets.hostview import HostView

CLAIM = HONEST_CPU["torch_version"]
SITE = "/opt/envs/x/lib/python3.11/site-packages"


def strict(python_host: HostFacts | None, c2_torch: str | None = CLAIM) -> AuditResult:
    c2 = c2_cpu()
    c2.evidence["observed"]["torch_version"] = c2_torch
    py = replace(healthy(), host=python_host)
    load = load_report(json.dumps(HONEST_CPU).encode(), source="case")
    return audit(load, py, {"c2": c2, "c4": None}, compat=False)


def agreeing() -> HostFacts:
    facts = HostFacts("/opt/envs/x/bin/python", resolved="/usr/bin/python3.11",
                      major_minor={"3.11": "/usr/bin/python3.11"}, searched=[SITE])
    facts.torch.append(TorchInstall(SITE, {f"{SITE}/torch/version.py": CLAIM}))
    return facts


def test_the_honest_claim_agrees_with_c2_and_the_host() -> None:
    result = strict(agreeing())
    assert result.passed and not result.inconclusive, result.message


def test_a_claim_c2s_probe_contradicts_is_a_hallucination() -> None:
    result = strict(agreeing(), c2_torch="2.13.0+cpu")
    assert result.category == "version_hallucination"
    assert {f.rule for f in result.findings} == {"torch_version_contradicts_c2"}


def test_no_torch_on_disk_where_the_interpreter_looks_supports_no_version() -> None:
    facts = agreeing()
    facts.torch.clear()
    result = strict(facts)
    assert {f.rule for f in result.findings} == {"torch_version_contradicts_host"}, \
        result.message


def test_a_host_that_cannot_read_the_files_leaves_the_claim_inconclusive(
        tmp_path: Path) -> None:
    blind = hostfacts.from_view(HostView(str(tmp_path)), "/opt/envs/x/bin/python")
    assert blind.problem is not None
    for host in (blind, None):
        result = strict(host)
        assert result.passed, result.message  # not contradicted ...
        assert {i.rule for i in result.inconclusive} >= {"torch_version_contradicts_host"}
