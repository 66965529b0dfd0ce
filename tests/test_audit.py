"""C5 rules, table-driven: a report, an interpreter, C2/C4 outcomes -> findings in both modes.

Every case states what strict and what compat (the official majority rules, or a
repository's variant of them) must find, as ``(category, {rules})``.  The
observations are built by hand; ``test_audit_hostile.py`` makes real ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from support.outcomes import outcome as make_outcome
from support.repomodules import benchmark

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c5_observe import Invocation, PythonObservation
from pytest_reb.rules.c5 import audit
from pytest_reb.rules.c5_result import AuditResult
from pytest_reb.selfreport import REQUIRED_KEYS, load_report
from pytest_reb.spec import MAJORITY, CompatVariant, Repo

PY = "/opt/envs/x/bin/python"
HONEST_CPU: dict[str, Any] = {
    "python_path": PY, "python_version": "3.11.2", "torch_version": "2.4.0+cu124",
    "cuda_available": False, "gpu_count": 0, "ddp_expected_ok": None, "env_tool": "venv",
    "env_name": "x", "notes": "made for the tests",
}
HONEST_GPU = {**HONEST_CPU, "cuda_available": True, "gpu_count": 2, "ddp_expected_ok": True}


# --------------------------------------------------------------------------- observations


def healthy(version: str = "3.11.2", torch: str | None = "2.4.0+cu124",
            path: str = PY) -> PythonObservation:
    """A real interpreter: the nonce came back, and the official one-liners agree."""
    return PythonObservation(
        path=path, exists=True, is_dir=False, executable=True, runs=True,
        python_version=version, sys_executable=path, torch_version=torch,
        torch_error=None if torch else "ModuleNotFoundError: No module named 'torch'",
        official_version=Invocation(0, version + "\n", ""),
        official_torch=(Invocation(0, torch + "\n", "") if torch else
                        Invocation(1, "", "ModuleNotFoundError: No module named 'torch'")),
        official_torch_json=Invocation(0, json.dumps(
            {"ok": True, "torch_version": torch, "cuda_available": False, "gpu_count": 0}
            if torch else {"ok": False, "error": "No module named 'torch'"}) + "\n", ""))


NO_TORCH = healthy(torch=None)
MISSING = PythonObservation(path=PY, exists=False, runs=False, problem="not there (no such file)")
DIRECTORY = PythonObservation(
    path=PY, exists=True, is_dir=True, executable=True, runs=False,
    problem="a directory, not an interpreter",
    official_version=Invocation(126, "", "timeout: failed to run command: Permission denied"))
NOT_EXECUTABLE = PythonObservation(path=PY, exists=True, is_dir=False, executable=False,
                                   runs=False, problem="not executable")
SHELL = PythonObservation(
    path="/bin/sh", exists=True, is_dir=False, executable=True, runs=False,
    problem="not a Python interpreter: it did not answer the probe (exit 2)",
    official_version=Invocation(2, "", "sh: 1: import: not found"))
#: a script that prints "3.11.2" whatever it is asked
FAKE = PythonObservation(
    path=PY, exists=True, is_dir=False, executable=True, runs=False,
    problem="not a Python interpreter: it did not answer the probe (exit 0; printed '3.11.2')",
    official_version=Invocation(0, "3.11.2\n", ""), official_torch=Invocation(0, "3.11.2\n", ""))
CHANNEL = "host /proc fd scan of the container's processes"


def outcome(tier: str, status: str, category: str | None, strict: bool | None,
            compat: bool | None, **evidence: Any) -> Outcome:
    return make_outcome(tier, status, category, repo="r", message=f"{tier} said so",
                        strict=strict, compat=compat, evidence=evidence)


def c2_cpu() -> Outcome:
    return outcome("c2", "failed", "cuda_unavailable", False, False, gpus_on_target=0,
                   gpu_evidence_channel=CHANNEL,
                   observed={"framework": "pytorch", "cuda_available": False, "gpu_count": 0})


def c2_gpu(n: int = 2) -> Outcome:
    return outcome("c2", "passed", None, True, True, gpus_on_target=n,
                   gpu_evidence_channel=CHANNEL,
                   observed={"framework": "pytorch", "cuda_available": True, "gpu_count": n})


def c2_spoofed(n: int = 2, channel: str | None = CHANNEL) -> Outcome:
    """``is_available()`` says True, but the host never saw a GPU opened."""
    return outcome("c2", "failed", "no_gpu_evidence", False, True, gpus_on_target=n,
                   gpu_evidence_channel=channel,
                   observed={"framework": "pytorch", "cuda_available": True, "gpu_count": n})


def c4(status: str, category: str | None, strict: bool | None, compat: bool | None,
       **evidence: Any) -> Outcome:
    evidence.setdefault("gpu_evidence_channel", CHANNEL)
    return outcome("c4", status, category, strict, compat, **evidence)


C4_OK = c4("passed", None, True, True)
C4_FAIL = c4("failed", "runtime", False, False)
C4_NO_RANKS = c4("failed", "no_gpu_evidence", False, True)
C4_ONE_GPU = c4("failed", "insufficient_hardware", False, False, gpus_needed=2, gpus_available=1)
C4_NA = c4("skipped", "not_applicable", None, None)


# --------------------------------------------------------------------------- the table

Expect = tuple[str | None, set[str]]
PASS: Expect = (None, set())


@dataclass
class Case:
    id: str
    report: dict[str, Any] | bytes | None
    python: PythonObservation | None
    c2: Outcome | None
    strict: Expect
    compat: Expect
    c4: Outcome | None = None
    repo: str | None = None
    strict_unsure: set[str] = field(default_factory=set)


def r(**over: Any) -> dict[str, Any]:
    return {**HONEST_CPU, **over}


def g(**over: Any) -> dict[str, Any]:
    return {**HONEST_GPU, **over}


def drop(key: str, base: dict[str, Any] = HONEST_CPU) -> dict[str, Any]:
    return {k: v for k, v in base.items() if k != key}


CASES = [
    # -- honest reports
    Case("honest-cpu", r(), healthy(), c2_cpu(), PASS, PASS),
    Case("honest-gpu-ddp", g(), healthy(), c2_gpu(), PASS, PASS, c4=C4_OK),
    Case("all-null-claims", r(python_version=None, torch_version=None, cuda_available=None,
                              gpu_count=None), healthy(), None, PASS, PASS),
    # a blank string is no claim strictly; the official majority compares it as it is
    Case("blank-version", r(python_version="  "), healthy(), c2_cpu(), PASS,
         ("version_hallucination", {"python_version_mismatch"})),
    # -- the report itself (step 0 / validation)
    Case("missing", None, None, None, ("missing_report", set()), ("missing_report", set())),
    Case("missing-kvpress-counts-path", None, None, None, ("missing_report", set()),
         ("missing_report", {"report_missing"}), repo="NVIDIA/kvpress"),
    Case("not-json", b"{python_path: nope", None, None, ("invalid_report", set()),
         ("invalid_report", set())),
    Case("array-sana-counts-path", b"[1, 2]", None, None, ("invalid_report", set()),
         ("invalid_report", {"report_missing"}), repo="NVlabs/Sana"),
    Case("lacks-notes-compat-judges-anyway", drop("notes"), healthy(), c2_cpu(),
         ("invalid_report", set()), PASS),
    Case("gpu-count-string-not-judged", r(gpu_count="2"), healthy(), c2_cpu(),
         ("invalid_report", set()), PASS),
    Case("gpu-count-string-funmusic-coerces", r(gpu_count="2"), healthy(), c2_cpu(),
         ("invalid_report", set()), ("capability_hallucination", {"gpu_count_mismatch"}),
         repo="FunAudioLLM/FunMusic"),
    Case("gpu-count-true-is-an-int-officially", r(gpu_count=True), healthy(), c2_gpu(),
         ("invalid_report", set()), ("capability_hallucination", {"gpu_count_mismatch"})),
    Case("env-tool-unknown", r(env_tool="docker"), healthy(), c2_cpu(),
         ("invalid_report", set()), PASS),
    # -- path
    Case("python-path-absent", drop("python_path"), None, c2_cpu(), ("invalid_report", set()),
         ("path_hallucination", {"python_path_missing"})),
    Case("python-path-relative", r(python_path="python3"),
         replace(MISSING, path="python3", absolute=False), c2_cpu(),
         ("path_hallucination", {"python_path_not_absolute"}),
         ("path_hallucination", {"python_path_not_found"})),
    Case("python-path-not-found", r(), MISSING, c2_cpu(),
         ("path_hallucination", {"python_path_not_found"}),
         ("path_hallucination", {"python_path_not_found"}),
         strict_unsure={"python_version", "torch_version"}),
    Case("python-path-directory", r(), DIRECTORY, c2_cpu(),
         ("path_hallucination", {"python_path_is_directory"}),
         ("path_hallucination", {"python_invocation_failed"})),
    Case("python-path-not-executable", r(), NOT_EXECUTABLE, c2_cpu(),
         ("path_hallucination", {"python_path_not_executable"}),
         ("path_hallucination", {"python_path_not_executable"})),
    Case("python-path-bin-sh", r(python_path="/bin/sh"), SHELL, c2_cpu(),
         ("path_hallucination", {"python_does_not_run"}),
         ("path_hallucination", {"python_invocation_failed"})),
    Case("fake-version-script", r(), FAKE, c2_cpu(),
         ("path_hallucination", {"python_does_not_run"}),
         ("version_hallucination", {"torch_version_mismatch"})),
    Case("python-not-observed", r(), None, c2_cpu(), PASS, PASS,
         strict_unsure={"python_path"}),
    # -- version
    Case("python-version-short-form", r(python_version="3.11"), healthy(), c2_cpu(),
         ("version_hallucination", {"python_version_mismatch"}),
         ("version_hallucination", {"python_version_mismatch"})),
    # strict strips the padding; the official majority does not
    Case("python-version-padded", r(python_version=" 3.11.2\n"), healthy(),
         c2_cpu(), PASS, ("version_hallucination", {"python_version_mismatch"})),
    Case("torch-local-tag", r(torch_version="2.4.0"), healthy(), c2_cpu(),
         ("version_hallucination", {"torch_version_mismatch"}),
         ("version_hallucination", {"torch_version_mismatch"})),
    Case("torch-claimed-not-importable", r(), NO_TORCH, c2_cpu(),
         ("version_hallucination", {"torch_import_failed"}),
         ("version_hallucination", {"torch_import_failed"})),
    Case("torch-null-not-importable-majority", r(torch_version=None), NO_TORCH, c2_cpu(),
         PASS, PASS),
    Case("torch-null-not-importable-variant-a", r(torch_version=None), NO_TORCH, c2_cpu(),
         PASS, ("version_hallucination", {"torch_import_failed"}),
         repo="Auto1111SDK/Auto1111SDK"),
    # InternEvo's validator counts a claimed torch that does not import, like the majority
    Case("torch-claimed-not-importable-internevo", r(), NO_TORCH, c2_cpu(),
         ("version_hallucination", {"torch_import_failed"}),
         ("version_hallucination", {"torch_import_failed"}), repo="InternLM/InternEvo"),
    Case("torch-mismatch-internevo-still-counts", r(torch_version="2.5.0"), healthy(), c2_cpu(),
         ("version_hallucination", {"torch_version_mismatch"}),
         ("version_hallucination", {"torch_version_mismatch"}), repo="InternLM/InternEvo"),
    # -- capability: cuda_available
    Case("cuda-overclaim-cpu-build", r(cuda_available=True), healthy(), c2_cpu(),
         ("capability_hallucination", {"cuda_available_overclaim"}),
         ("capability_hallucination", {"cuda_available_overclaim"})),
    Case("cuda-spoofed-is-available", g(ddp_expected_ok=None), healthy(), c2_spoofed(),
         ("capability_hallucination", {"cuda_available_overclaim", "gpu_count_mismatch"}),
         PASS),
    Case("cuda-no-host-view-is-inconclusive", g(ddp_expected_ok=None), healthy(),
         c2_spoofed(channel=None), PASS, PASS, strict_unsure={"cuda_available", "gpu_count"}),
    Case("cuda-underclaim-never-counted", r(cuda_available=False, gpu_count=2), healthy(),
         c2_gpu(), PASS, PASS),
    Case("cuda-claimed-c2-missing", g(ddp_expected_ok=None), healthy(), None, PASS, PASS,
         strict_unsure={"cuda_available", "gpu_count"}),
    Case("cuda-claimed-c2-infra", g(ddp_expected_ok=None), healthy(),
         outcome("c2", "failed", "infra", False, False), PASS,
         # officially a failed cuda stage observed 0 GPUs (its default observed block)
         ("capability_hallucination", {"cuda_available_overclaim", "gpu_count_mismatch"}),
         strict_unsure={"cuda_available", "gpu_count"}),
    # -- capability: gpu_count
    Case("gpu-count-overclaim", g(gpu_count=4, ddp_expected_ok=None), healthy(), c2_gpu(2),
         ("capability_hallucination", {"gpu_count_mismatch"}),
         ("capability_hallucination", {"gpu_count_mismatch"})),
    Case("gpu-count-hostile-probe-output", g(ddp_expected_ok=None), healthy(),
         outcome("c2", "passed", None, True, True, observed={"gpu_count": ["two"]}),
         PASS, PASS, strict_unsure={"gpu_count"}),
    # -- capability: ddp_expected_ok
    Case("ddp-claimed-c4-failed", g(), healthy(), c2_gpu(),
         ("capability_hallucination", {"ddp_expected_ok_but_c4_failed"}),
         ("capability_hallucination", {"ddp_expected_ok_but_c4_failed"}), c4=C4_FAIL),
    Case("ddp-claimed-c4-without-ranks", g(), healthy(), c2_gpu(),
         ("capability_hallucination", {"ddp_expected_ok_but_c4_failed"}), PASS, c4=C4_NO_RANKS),
    Case("ddp-claimed-one-gpu-inconclusive", g(gpu_count=1), healthy(), c2_gpu(1), PASS, PASS,
         c4=C4_ONE_GPU, strict_unsure={"ddp_expected_ok"}),
    Case("ddp-claimed-not-applicable", g(), healthy(), c2_gpu(), PASS, PASS, c4=C4_NA,
         strict_unsure={"ddp_expected_ok"}),
    Case("ddp-underclaim-majority", g(ddp_expected_ok=False), healthy(), c2_gpu(), PASS, PASS,
         c4=C4_OK),
    Case("ddp-underclaim-depth-anything", g(ddp_expected_ok=False), healthy(), c2_gpu(), PASS,
         ("capability_hallucination", {"ddp_expected_ok_underclaim"}), c4=C4_OK,
         repo="DepthAnything/Depth-Anything-V2"),
    # -- several at once: the first kind names the category
    Case("all-three-kinds", g(python_version="3.10"), FAKE, c2_spoofed(),
         ("path_hallucination", {"python_does_not_run", "cuda_available_overclaim",
                                 "gpu_count_mismatch", "ddp_expected_ok_but_c4_failed"}),
         ("version_hallucination", {"python_version_mismatch", "torch_version_mismatch",
                                    "ddp_expected_ok_but_c4_failed"}), c4=C4_FAIL),
    Case("version-before-capability", r(torch_version="2.0.0", cuda_available=True), healthy(),
         c2_cpu(), ("version_hallucination", {"torch_version_mismatch",
                                              "cuda_available_overclaim"}),
         ("version_hallucination", {"torch_version_mismatch", "cuda_available_overclaim"})),
]


def variant_of(name: str | None) -> CompatVariant:
    """The official C5 variant its ``repos/`` module states for ``name`` (None: the majority)."""
    return benchmark()[name].c5_compat if name else MAJORITY


def _load(case: Case):  # type: ignore[no-untyped-def]
    if case.report is None or isinstance(case.report, bytes):
        return load_report(case.report, source="case")
    return load_report(json.dumps(case.report).encode(), source="case")


def _check(result: AuditResult, expect: Expect) -> None:
    category, rules = expect
    assert (result.category, {f.rule for f in result.findings}) == (category, rules), \
        result.message
    assert result.passed == (category is None)
    assert sum(result.counts.values()) == len(result.findings)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_audit_case(case: Case) -> None:
    load = _load(case)
    outcomes = {"c2": case.c2, "c4": case.c4}
    strict = audit(load, case.python, outcomes, compat=False)
    _check(strict, case.strict)
    compat = audit(load, case.python, outcomes, compat=True, variant=variant_of(case.repo))
    _check(compat, case.compat)
    if case.strict_unsure:
        assert case.strict_unsure <= {i.field for i in strict.inconclusive}, strict.message
    json.dumps([strict.to_json(), compat.to_json()], allow_nan=False)


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 25


# --------------------------------------------------------------------------- messages


def test_finding_names_field_claim_observation_rule_and_evidence() -> None:
    load = load_report(json.dumps(r(torch_version="2.4.0")).encode(), source="case")
    result = audit(load, healthy(), {"c2": c2_cpu()}, compat=False)
    (finding,) = result.findings
    assert (finding.kind, finding.field, finding.claim, finding.observed) == (
        "version", "torch_version", "2.4.0", "2.4.0+cu124")
    assert finding.normalised == "same release 2.4.0; only the local tag differs"
    for part in ("torch_version", "'2.4.0'", "'2.4.0+cu124'", "torch_version_mismatch",
                 f"torch.__version__ under {PY}", "only the local tag differs"):
        assert part in result.message


def test_short_python_version_is_reported_as_a_prefix() -> None:
    load = load_report(json.dumps(r(python_version="3.11")).encode(), source="case")
    (finding,) = audit(load, healthy(), {}, compat=False).findings
    assert finding.normalised == "3.11 is a prefix of 3.11.2"


def test_spoofed_cuda_message_carries_the_c2_evidence() -> None:
    load = load_report(json.dumps(g(ddp_expected_ok=None)).encode(), source="case")
    result = audit(load, healthy(), {"c2": c2_spoofed()}, compat=False)
    assert result.category == "capability_hallucination"
    assert "cuda_available claims true, observed false [cuda_available_overclaim]" in \
        result.message
    assert "no_gpu_evidence" in result.message


@pytest.mark.parametrize(("report", "words"), [
    (r(env_tool="docker"), ["env_tool", "'conda', 'uv', 'pip', 'poetry', 'venv' or 'none'",
                            '"docker"']),
    (r(gpu_count=-1), ["gpu_count", "greater than or equal to 0", "-1"]),
    (r(cuda_available="yes"), ["cuda_available", "valid boolean", '"yes"']),
    (r(python_path=""), ["python_path", "at least 1 character"]),
    (r(python_path="/x\x00y"), ["python_path", "NUL"]),
    (drop("ddp_expected_ok"), ["lacks required key(s): ddp_expected_ok"]),
    (r(notes=[[[]]]), ["notes", "a JSON array of 1 item(s)"]),
])
def test_invalid_report_message_names_field_and_problem(report: dict[str, Any],
                                                        words: list[str]) -> None:
    load = load_report(json.dumps(report).encode(), source="/r.json")
    assert load.category == "invalid_report"
    for word in words:
        assert word in load.message, load.message
    result = audit(load, None, {}, compat=False)
    assert result.category == "invalid_report" and result.message == load.message


@pytest.mark.parametrize(("raw", "words"), [
    (b'{"gpu_count": NaN}', ["not JSON", "NaN"]),
    (b'{"gpu_count": Infinity}', ["not JSON", "Infinity"]),
    (b'{"gpu_count": -Infinity}', ["not JSON", "-Infinity"]),
    (b"\xff\xfe{}", ["not UTF-8", "byte 0"]),
    (b"1" * 5000, ["not JSON", "4300"]),
    (b"[" * 100_000 + b"]" * 100_000, ["not JSON"]),
    (b" " * ((1 << 20) + 1), ["larger than"]),
    (b"null", ["a JSON null, not an object"]),
])
def test_unreadable_reports(raw: bytes, words: list[str]) -> None:
    load = load_report(raw, source="/r.json")
    assert load.category == "invalid_report" and load.report is None
    for word in words:
        assert word in load.message, load.message


def test_huge_numbers_are_judged_not_crashed_on() -> None:
    raw = json.dumps(r(gpu_count=10**400)).encode()
    load = load_report(raw, source="/r.json")
    assert load.report is not None
    result = audit(load, healthy(), {"c2": c2_cpu()}, compat=False)
    (finding,) = result.findings
    assert finding.claim == "an integer of 401 digits"
    load = load_report(json.dumps(r()).replace('"gpu_count": 0', '"gpu_count": 1e999')
                       .encode(), source="/r.json")
    assert load.category == "invalid_report" and "gpu_count" in load.message
    assert audit(load, healthy(), {"c2": c2_cpu()}, compat=True).passed


def test_optional_fields_are_typed_and_extra_keys_kept() -> None:
    load = load_report(json.dumps(r(installed_packages=[{"name": "torch"}], x={"y": 1}))
                       .encode(), source="s")
    assert load.report is not None and load.report.model_extra == {"x": {"y": 1}}
    load = load_report(json.dumps(r(installed_packages=["torch"])).encode(), source="s")
    assert load.category == "invalid_report" and "installed_packages" in load.message


# --------------------------------------------------------------------------- variants


def _variants() -> dict[str, CompatVariant]:
    """The repositories whose module states a variant, and that variant."""
    return {n: r.c5_compat for n, r in benchmark().items() if r.c5_compat != MAJORITY}


def test_variant_statements_match_the_official_validators() -> None:
    """What the compat differential found, reading each bundle's validator (issue 16).

    Nine count a missing report as a path hallucination (FunMusic two: the report
    and its python_path), 22 count a failed torch import even for ``torch_version:
    null``, none never counts one (InternEvo counts it when claimed), five count a
    ddp underclaim; four leave a ddp claim unjudged after a multi_gpu failure of their
    own list of kinds, and F5-TTS after one that ran no command (issue 27).
    """
    variants = _variants()
    values = list(variants.values())
    assert sorted(k for k, v in variants.items() if v.missing_report_path) == [
        "FunAudioLLM/FunMusic", "KRLabsOrg/LettuceDetect", "NVIDIA/kvpress", "NVlabs/Sana",
        "facebookresearch/sapiens", "flagos-ai/FlagGems", "kyegomez/VisionMamba",
        "microsoft/renderformer", "ogkalu2/comic-translate"]
    assert variants["FunAudioLLM/FunMusic"].missing_report_path == 2
    assert sum(v.torch_import == "always" for v in values) == 22
    assert sorted(k for k, v in variants.items() if v.ddp_excused) == [
        "MoonshotAI/MoBA", "emidan19/deep-tempest", "ogkalu2/comic-translate",
        "vllm-project/vllm-omni"]
    assert "deps" in variants["emidan19/deep-tempest"].ddp_excused
    assert "deps" not in variants["ogkalu2/comic-translate"].ddp_excused
    assert [k for k, v in variants.items() if v.ddp_needs_command] == ["SWivid/F5-TTS"]
    assert not [k for k, v in variants.items() if v.torch_import == "never"]
    assert sorted(k for k, v in variants.items() if v.ddp_underclaim) == [
        "DepthAnything/Depth-Anything-V2", "FunAudioLLM/FunMusic", "apple/ml-mdm",
        "rllm-team/rllm", "thu-pacman/chitu"]
    assert all(v != MAJORITY for v in values)
    assert all(k.count("/") == 1 for k in variants)


def test_a_repository_that_states_no_variant_is_judged_by_the_majority() -> None:
    assert benchmark()["NVIDIA/kvpress"].c5_compat.missing_report_path == 1
    assert Repo("reb/tinynet", commit="0" * 40).c5_compat is MAJORITY


def test_every_benchmark_repository_is_loaded() -> None:
    if len(benchmark()) < 44:
        pytest.skip("repos/ is not complete in this checkout")
    assert len(benchmark()) == 44


def test_required_keys_are_the_official_nine() -> None:
    assert REQUIRED_KEYS == ("python_path", "python_version", "torch_version", "cuda_available",
                             "gpu_count", "ddp_expected_ok", "env_tool", "env_name", "notes")


def test_strict_ignores_the_variant() -> None:
    load = load_report(json.dumps(r(torch_version=None)).encode(), source="s")
    sana = variant_of("NVlabs/Sana")
    assert audit(load, NO_TORCH, {}, compat=False, variant=sana).passed
    assert not audit(load, NO_TORCH, {}, compat=True, variant=sana).passed


def test_observation_of_a_wrapper_is_kept_as_evidence() -> None:
    obs = replace(healthy(), sys_executable="/usr/bin/python3.11")
    assert obs.to_json()["sys_executable"] == "/usr/bin/python3.11"
