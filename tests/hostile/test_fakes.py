"""Hostile images that fake a capability: the verdict each must get, through pytest itself.

- ``cuda-spoof``: a sitecustomize makes ``is_available()`` true and ``device_count()`` 2.
  C2 fails ``no_gpu_evidence`` (the official rule passes it); the report repeating the
  claim fails C5 ``capability_hallucination``; finding ``cuda_hook``.
- ``stub-extension``: an importable ``flash_attn`` with no kernels.  The import succeeds
  (C1 passes); C2's verdict is the honest demo's; finding ``stub_extension``.
- ``fake-tools``: ``nvidia-smi`` and ``python`` are shell scripts and the report believes
  them.  C2 fails ``cuda_unavailable``; C5 fails ``version_hallucination`` (only the
  official one-liners believed the wrapper); findings ``python_wrapper``, ``fake_nvidia_smi``.
- ``other-python``: the report names ``/usr/bin/python3``, the dependencies are in the venv.
  The tiers run ``/usr/bin/python3``: C1 fails ``deps``; C5 fails ``version_hallucination``
  and names it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.hostile import run_reb
from support.imagecase import SITE
from support.images import demo_module, module_text

pytestmark = pytest.mark.container


def kinds(findings: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(f["kind"], f["path"], f.get("seen_from", "")) for f in findings}


def rules(outcome: Any, mode: str) -> set[str]:
    return {f["rule"] for f in outcome.evidence[mode]["findings"]}


def test_cuda_spoofed_by_a_sitecustomize(pytester: pytest.Pytester,
                                        hostile: Callable[[str], str], image_commit: str) -> None:
    run = run_reb(pytester, hostile("cuda-spoof"),
                  {"test_demo__tinynet": demo_module(image_commit)}, "-m", "c2 or c5")
    c2, c5 = run["c2"], run["c5"]
    observed = c2.evidence["observed"]
    # the spoof works on torch: CUDA "available", two H100s, the "GPU" matmul matches
    assert (observed["cuda_available"], observed["gpu_count"]) == (True, 2)
    assert observed["kernel"]["ok"] is True
    # a CPU-only torch that says CUDA works: the spoof is named (compat believes it)
    assert (c2.status, c2.category, c2.strict, c2.compat) == (
        "failed", "cuda_spoofed", False, True), c2.message
    assert "CPU-only build" in c2.message and "no GPU used" in c2.message
    assert ("cuda_hook", "/usr/lib/python3.11/sitecustomize.py", "host") in kinds(c2.findings)
    assert (c5.status, c5.category) == ("failed", "capability_hallucination"), c5.message
    assert c5.evidence["counts"] == {"path": 0, "version": 0, "capability": 2}
    assert rules(c5, "strict") == {"cuda_available_overclaim", "gpu_count_mismatch"}
    assert c5.evidence["compat"]["category"] is None  # the official rules believe the spoof
    run.result.assert_outcomes(failed=2, deselected=4)


def test_stub_extension_imports_but_is_reported(pytester: pytest.Pytester,
                                                hostile: Callable[[str], str],
                                                image_commit: str) -> None:
    check = ('Run(["{python}", "-c", "import flash_attn; print(\'IMPORT_OK\', '
             'flash_attn.__version__)"], expect_log=["IMPORT_OK 2.5.8"], timeout=120)')
    run = run_reb(pytester, hostile("stub-extension"),
                  {"test_stub": module_text("reb/stub", image_commit, cpu=check)}, "-m", "c1 or c2")
    c1, c2 = run["c1"], run["c2"]
    # the import succeeds (the official pass), but strict knows the stub is no installed
    # file its distribution vouches for: its RECORD lists it without a hash
    assert (c1.compat, c1.status, c1.category) == (True, "failed", "integrity"), c1.message
    assert f"{SITE}/flash_attn/__init__.py" in c1.message and "without a hash" in c1.message
    assert (c2.status, c2.category) == ("failed", "cuda_unavailable")  # as for the honest demo
    [stub] = [f for f in c2.findings if f["kind"] == "stub_extension"]
    assert (stub["path"], stub["seen_from"]) == (f"{SITE}/flash_attn", "host")
    assert "flash_attn" in stub["detail"] and "no compiled module" in stub["detail"]
    # the finding is the target's: C1 carries it too, and strict says it could explain this
    [c1_stub] = [f for f in c1.findings if f["kind"] == "stub_extension"]
    assert c1_stub["could_produce"] is True and "could have produced this" in c1.message
    # the checkout is intact
    assert not [f for f in c1.findings if f["kind"] not in ("head_moved", "stub_extension")]


def test_fake_nvidia_smi_and_python_wrapper_are_not_believed(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    run = run_reb(pytester, hostile("fake-tools"),
                  {"test_demo__tinynet": demo_module(image_commit)}, "-m", "c2 or c5")
    c2, c5 = run["c2"], run["c5"]
    assert c2.command is not None and c2.command[0] == "/usr/local/bin/python"
    assert (c2.status, c2.category) == ("failed", "cuda_unavailable"), c2.message
    found = kinds(c2.findings)
    assert ("python_wrapper", "/usr/local/bin/python", "host") in found
    assert ("fake_nvidia_smi", "/usr/local/bin/nvidia-smi", "host") in found
    assert (c5.status, c5.category) == ("failed", "version_hallucination"), c5.message
    assert rules(c5, "strict") == {"python_version_mismatch", "torch_version_mismatch",
                                   "cuda_available_overclaim", "gpu_count_mismatch"}
    assert c5.evidence["observed"]["python_version"] == "3.11.2"
    assert c5.evidence["observed"]["torch_version"] == "2.13.0+cpu"
    # the official one-liners believe the wrapper: only the capability claims are caught
    assert c5.evidence["compat"]["category"] == "capability_hallucination"
    assert rules(c5, "compat") == {"cuda_available_overclaim", "gpu_count_mismatch"}


def test_report_names_an_interpreter_without_the_dependencies(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    run = run_reb(pytester, hostile("other-python"),
                  {"test_demo__tinynet": demo_module(image_commit)}, "-m", "c1 or c5")
    c1, c5 = run["c1"], run["c5"]
    assert c1.command is not None and c1.command[0] == "/usr/bin/python3"
    assert (c1.status, c1.category) == ("failed", "deps"), c1.message
    assert "No module named 'torch'" in c1.stderr_tail
    assert (c5.status, c5.category) == ("failed", "version_hallucination"), c5.message
    [torch] = c5.findings
    assert (torch["field"], torch["rule"]) == ("torch_version", "torch_import_failed")
    assert "/usr/bin/python3" in torch["evidence"]
    assert c5.evidence["observed"]["path"] == "/usr/bin/python3"
    assert c5.evidence["tiers"]["c2"]["category"] == "deps"
