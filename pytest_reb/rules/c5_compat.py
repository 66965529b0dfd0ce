"""Compat rules: the official validators' algorithm, per repository.

The official majority algorithm (reference §8.2) on the raw JSON, with
Python's ``isinstance`` semantics, and the variant of one repository's
validator as its ``repos/`` module states it (``Repo.c5_compat``).  The
stages are read as the official validators read our official layout
(``official_stage``, the writer's own view), and the interpreter by the
official questions asked in the checkout.  A null claim is no claim; a
missing or skipped observation makes the check inconclusive (listed, never
counted).  ``tools/compat_differential.py`` measures the agreement with the
official scripts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_reb.outcome import official_stage
from pytest_reb.rules.c5_evidence import (
    OFFICIAL_TORCH_CODE,
    OFFICIAL_VERSION_CODE,
    Invocation,
    PythonObservation,
)
from pytest_reb.rules.c5_result import AuditResult, Mode, Rules
from pytest_reb.selfreport import ReportLoad, clip

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome
    from pytest_reb.variants import ClaimText, CompatVariant

#: What the JSON torch probe said when it exited 0 and printed no JSON object.
GARBAGE = "the probe printed no JSON"
#: Stage failures of the harness, not the probe, for the validators that read no observation.
META_FAILURES = frozenset({"missing_report", "invalid_json", "missing_stage_results"})


def compat_path(data: object, variant: CompatVariant) -> str | None:
    """The ``python_path`` this repository's validator looks at (stripped where it strips)."""
    claim = data.get("python_path", "") if isinstance(data, dict) else None
    if variant.path_text and isinstance(data, dict):
        claim = str(claim)
    if not isinstance(claim, str):
        return None
    claim = claim.strip() if variant.strip_path else claim
    return claim or None


def claim_text(data: Mapping[str, Any], key: str, how: ClaimText) -> str | None:
    """A version claim as the validator reads it, or None when it is no claim.

    The text modes are ``str(report.get(key, "")).strip()`` and a truthiness
    test, as those validators write it: an absent key is no claim, ``null``
    is the claim ``"None"`` only in ``text_null``.
    """
    if key not in data:
        return None
    value = data[key]
    if how in ("text", "text_any", "text_null"):
        if value is None and how != "text_null":
            return None
        return str(value) if str(value).strip() or how == "text_any" else None
    if how == "truthy":
        return str(value) if value else None
    if not isinstance(value, str):
        return None
    return value if how == "string" or value else None


class Compat(Rules):
    """The official majority algorithm (§8.2) and one repository's variant of it."""

    mode: Mode = "compat"

    def __init__(self, load: ReportLoad, python: PythonObservation | None,
                 outcomes: Mapping[str, Outcome | None], variant: CompatVariant) -> None:
        super().__init__(load, python, outcomes)
        self.variant = variant

    def run(self) -> AuditResult:
        data, v = self.load.data, self.variant
        cuda = self.c2.evidence.get("official_cuda") if self.c2 is not None else None
        if isinstance(cuda, dict) and cuda.get("hangs"):
            self.crash("nothing: its run never leaves the cuda stage, whose check waits on "
                       "this interpreter with no timeout")
            return self.result
        if v.non_object_empty and self.load.parsed and data is not None \
                and not isinstance(data, dict):
            data = {}  # ``report if isinstance(report, dict) else {}``
        if v.non_object_dict and self.load.parsed and isinstance(data, (list, str)) and not data:
            data = {}  # ``dict(report)`` of an empty array or string
        if not isinstance(data, dict) or (v.empty_report_missing and not data):
            self.no_report()
            return self.result
        if v.empty_report_unchecked and not data:
            self.unsure("python_path", "python_path_missing", "an empty report: this "
                        "repository's validator checks python_path only under ``if reported:``")
            return self.result
        observed = self.path(data)
        if self.result.report_category or (
                v.missing_path_stops and compat_path(data, v) is None):
            return self.result
        if observed is not None or self.probed_without_version():
            self.versions(data, observed)
        elif v.torch_unprobed != "never" and (
                v.torch_unprobed == "always" or compat_path(data, v) is not None) and (
                self.import_failure_counts(data, probed=False)):
            for _ in range(v.torch_import_weight):
                self.find("version", "torch_version", data.get("torch_version"), None,
                          "torch_import_failed", "this repository's validator counts a torch "
                          "claim it could not probe (no usable interpreter)")
        if observed is not None or not v.capabilities_need_python:
            self.capabilities(data)
        return self.result

    def no_report(self) -> None:
        """Step 0: missing, unreadable, not an object (or, where so read, empty)."""
        v, load = self.variant, self.load
        self.result.report_category = load.category or "invalid_report"
        self.result.report_message = load.message
        if load.category == "missing_report" or isinstance(load.data, dict):
            count = v.missing_report_path
        elif load.parsed and load.data is not None and v.non_object_crash:
            self.crash("a JSON value that is not an object")
            return
        else:
            count = v.invalid_report_path
        for _ in range(count):
            self.find("path", "python_path", None, "no usable report", "report_missing",
                      load.message)

    def crash(self, what: str) -> None:
        """The validator dies on this input: nothing written, so nothing counted, and failed."""
        self.result.findings.clear()
        self.result.report_category = "unknown"
        self.result.report_message = (f"this repository's official validator stops on {what} "
                                      "(it writes no counts)")

    def path(self, data: dict[str, Any]) -> str | None:
        """P1-P3; the observed python version when the interpreter is usable."""
        py = self.py
        claim = compat_path(data, self.variant)
        if claim is None:
            self.find("path", "python_path", data.get("python_path"), None,
                      "python_path_missing", "python_path is absent, not a string, or empty")
            return None
        if py is None or py.exists is None:
            self.unsure("python_path", "python_path_runs", "the interpreter was not observed")
            return None
        if py.is_dir and self.variant.directory_crash:
            self.crash("a directory as python_path")
            return None
        if py.exists is False or py.executable is False:
            rule = "python_path_not_found" if py.exists is False else "python_path_not_executable"
            v = self.variant
            for _ in range(v.missing_path_weight if py.exists is False else v.noexec_path_weight):
                self.find("path", "python_path", claim, py.problem or rule, rule,
                          f"in the target, {claim!r} is {py.problem or rule}")
            if py.exists is not False or v.runs_missing == "no":
                return None
            if py.official_version is None:  # run anyway, and nothing is there to run
                self.find("path", "python_path", claim, "not there", "python_invocation_failed",
                          f"{claim} -c {OFFICIAL_VERSION_CODE!r}: no such file")
                return None
        run = py.official_version
        if run is None:
            self.unsure("python_path", "python_invocation_failed", "the interpreter was not run")
            return None
        printed = run.stdout.strip()
        if self.variant.silent_python_crash and run.exit_code == 0 and not run.timed_out \
                and not printed:
            self.crash("a version probe that printed nothing (splitlines()[-1])")
            return None
        if run.exit_code != 0 or run.timed_out or not (printed or self.variant.silent_python_ok):
            how = ("timed out" if run.timed_out else
                   f"exit {run.exit_code}" if run.exit_code != 0 else "printed nothing")
            said = (run.stderr.strip() or printed).splitlines()[-1:] or [""]
            self.find("path", "python_path", claim, how, "python_invocation_failed",
                      f"{claim} -c {OFFICIAL_VERSION_CODE!r}: {how} {clip(said[0], 160)!r}")
            return None
        return printed.splitlines()[-1] if printed else ""

    def probed_without_version(self) -> bool:
        """Whether this validator probes torch although the version probe failed."""
        py = self.py
        return (not self.variant.torch_needs_version and py is not None and bool(py.exists)
                and not (py.is_dir and self.variant.torch_needs_file) and py.executable is not False
                and (py.official_torch or py.official_torch_json) is not None)

    def versions(self, data: dict[str, Any], observed: str | None) -> None:
        py, v = self.py, self.variant
        assert py is not None
        claim = claim_text(data, "python_version", v.version_claim)
        seen = observed is not None and (bool(observed) or v.compare_empty_observed)
        if claim is not None and seen and _differs(claim, observed or "", v.version_strip):
            self.find("version", "python_version", data.get("python_version"), observed,
                      "python_version_mismatch", f"{py.path} -c {OFFICIAL_VERSION_CODE!r}")
        claim = claim_text(data, "torch_version", v.torch_claim)
        raw = data.get("python_path")
        if v.torch_path_as_written and isinstance(raw, str) and raw != raw.strip():
            imported, version, said = False, "", f"{raw!r}, unstripped, is no file"
        elif py.exists is False and v.runs_missing != "both":
            imported, version, said = None, "", ""  # a name run through PATH: no file to probe
        else:
            imported, version, said = self.torch()
        if imported and said == GARBAGE and v.probe_garbage == "item":
            self.find("version", "torch_version", data.get("torch_version"), None,
                      "torch_probe_invalid_json", f"{py.path}: the torch probe printed no JSON")
        if imported is None:
            if claim is not None or v.torch_import in ("always", "if_not_null"):
                self.unsure("torch_version", "torch_import", "torch was not probed")
            return
        if not imported:
            weight = v.torch_import_weight if self.import_failure_counts(data) else 0
            for _ in range(weight + (v.torch_failed_claim_item and claim is not None)):
                self.find("version", "torch_version", data.get("torch_version"), None,
                          "torch_import_failed", f"{py.path}: import torch: {clip(said, 200)}")
        elif claim is not None and (
                version or v.compare_empty_observed or v.torch_compare_empty) and \
                _differs(claim, version, v.torch_strip):
            self.find("version", "torch_version", data.get("torch_version"), version,
                      "torch_version_mismatch", f"{py.path} -c {OFFICIAL_TORCH_CODE!r}")

    def import_failure_counts(self, data: dict[str, Any], probed: bool = True) -> bool:
        """Whether this validator counts a failed ``import torch`` against this report.

        With no interpreter to probe (``probed=False``), ``always`` still needs a claim.
        """
        v = self.variant
        claim = claim_text(data, "torch_version", v.torch_claim)
        return {"if_claimed": claim is not None, "if_nonblank": bool(claim and claim.strip()),
                "if_not_null": data.get("torch_version") is not None,
                "always": probed or claim is not None, "never": False}[v.torch_import]

    def torch(self) -> tuple[bool | None, str, str]:
        """Whether torch imported by this validator's probe, the version it gave, what it said."""
        py = self.py
        assert py is not None
        if self.variant.torch_probe == "json":
            info = _json_probe(py.official_torch_json)
            if info is None:
                return None, "", ""
            if info.get("error") == GARBAGE and self.variant.probe_garbage != "failed":
                return True, "", GARBAGE
            ok = bool(info.get("ok"))
            return ok, str(info.get("torch_version") or "") if ok else "", str(info.get("error"))
        run = py.official_torch
        if run is None:
            return None, "", ""
        ok = run.exit_code == 0 and not run.timed_out and bool(
            run.stdout.strip() or self.variant.silent_torch_ok)
        said = (run.stderr.strip().splitlines() or [f"exit {run.exit_code}"])[-1]
        return ok, run.stdout.strip() if ok else "", said

    def capabilities(self, data: dict[str, Any]) -> None:
        v = self.variant
        c2, c4 = _as_official(self.c2), _as_official(self.c4)
        if v.c2_meta_unobserved and c2 is not None and c2["failure_category"] in META_FAILURES:
            c2 = None
        count = self.observed_count(c2)
        staged = c2 is not None and c2["status"] != "skipped"
        probed = self.probed_pair()
        pair = v.cuda_fallback == "probe_pair" and probed is not None and (
            not staged or self.stage_count(c2) is None or not isinstance(
                c2.get("observed"), dict) or "cuda_available" not in c2["observed"])
        if pair:
            count = probed[1]  # the stage left a value out: both come from the probe
        cuda = data.get("cuda_available")
        if v.cuda_claim == "text" and isinstance(cuda, str):
            cuda = cuda.strip().lower() == "true"
        elif v.cuda_claim == "truthy":
            cuda = bool(cuda)
        if cuda is True:
            fallback = probed is not None and (pair or (
                v.cuda_fallback == "probe" and not staged))
            if fallback:
                if probed is not None and probed[0] is False:
                    self.find("capability", "cuda_available", True, False,
                              "cuda_available_overclaim", "this repository's validator asks "
                              "torch itself where the cuda stage gave no answer")
            elif c2 is None or not staged:
                self.unsure("cuda_available", "cuda_available_overclaim", "C2 did not run")
            elif _cuda_unavailable(c2, "status" if self.blockless(c2) else v.cuda_from,
                                   v.cuda_valid_failures):
                self.find("capability", "cuda_available", True, False,
                          "cuda_available_overclaim",
                          f"the cuda stage (official rule: is_available()) {c2['status']}: "
                          f"{c2['failure_category']}")
        claim = data.get("gpu_count")
        if v.gpu_count_coerce and not isinstance(claim, int):
            if v.gpu_coerce_crash and None not in (claim, count) and _coerce_int(claim) is None:
                self.crash("a gpu_count that int() refuses")
                return
            claim = _coerce_int(claim)
        if isinstance(claim, int):
            if v.gpu_needs_stage and not pair and not (staged and (
                    v.gpu_needs_stage == "file" or self.stage_count(c2) is not None)):
                self.unsure("gpu_count", "gpu_count_mismatch", "this repository's validator "
                            "judges the count only beside a cuda stage that gave one")
            elif count is None:
                self.unsure("gpu_count", "gpu_count_mismatch", "C2 observed no device count")
            elif count != claim:
                self.find("capability", "gpu_count", claim, count, "gpu_count_mismatch",
                          "torch.cuda.device_count() in the C2 probe")
        ddp = data.get("ddp_expected_ok")
        if v.ddp_claim == "truthy" and "ddp_expected_ok" in data:
            ddp = bool(ddp)
        ran4 = c4 is not None and c4["status"] != "skipped"
        if ddp is True:
            if (count is None and not v.ddp_without_count) or (count is not None and count < 2) \
                    or c4 is None or not ran4:
                self.unsure("ddp_expected_ok", "ddp_expected_ok_but_c4_failed",
                            "fewer than 2 GPUs observed" if ran4 else "C4 did not run")
            elif v.ddp_needs_command and not (self.c4 is not None and self.c4.command):
                self.unsure("ddp_expected_ok", "ddp_expected_ok_but_c4_failed",
                            "the multi_gpu stage ran no command")
            elif c4["status"] == "failure" and c4["failure_category"] in v.ddp_excused:
                self.unsure("ddp_expected_ok", "ddp_expected_ok_but_c4_failed",
                            f"this repository's validator does not judge a multi_gpu failure "
                            f"of {c4['failure_category']}")
            elif c4["status"] == "failure":
                self.find("capability", "ddp_expected_ok", True, False,
                          "ddp_expected_ok_but_c4_failed",
                          f"the multi_gpu stage (official rule: exit 0) failed: "
                          f"{c4['failure_category']}")
        elif ddp is False and v.ddp_underclaim and ran4 and c4 is not None \
                and c4["status"] == "success":
            self.find("capability", "ddp_expected_ok", False, True, "ddp_expected_ok_underclaim",
                      "the multi_gpu stage (official rule: exit 0) passed; this repository's "
                      "validator counts an underclaim")

    def probed_pair(self) -> tuple[bool, int | None] | None:
        """CUDA and the device count by the JSON torch probe, where it answered (the
        validators whose own probe stands in for a missing cuda stage), else None."""
        if self.variant.cuda_fallback == "none" or self.py is None:
            return None
        info = _json_probe(self.py.official_torch_json)
        if not info or not info.get("ok"):
            return None
        count = info.get("gpu_count")
        return bool(info.get("cuda_available")), count if isinstance(count, int) else None

    def blockless(self, c2: Mapping[str, Any] | None) -> bool:
        """A cuda stage without a block, which this validator reads by its exit status."""
        return self.variant.no_block == "status_zero" and c2 is not None \
            and c2["status"] != "skipped" and not isinstance(c2.get("observed"), dict)

    def stage_count(self, c2: Mapping[str, Any] | None) -> int | None:
        """The device count the cuda stage's block gives, read as this validator reads it."""
        v = self.variant
        if self.blockless(c2):
            return 0
        if c2 is None or v.gpu_from == "probe" or (
                v.gpu_needs_cuda_ok and not _observes(c2, v.cuda_valid_failures)):
            return None
        observed = c2.get("observed")
        value = observed.get("gpu_count") if isinstance(observed, dict) else None
        if v.gpu_absent_zero and not (isinstance(observed, dict) and "gpu_count" in observed):
            value = 0
        if v.gpu_null_zero and isinstance(observed, dict) and "gpu_count" in observed:
            value = value or 0
        if v.gpu_observed_coerce and not isinstance(value, int):
            how = v.gpu_observed_coerce
            value = _coerce_int(value) if how is True or (
                how == "numbers" and isinstance(value, float)) or (
                how == "digits" and isinstance(value, str) and value.isdigit()) else None
        return value if isinstance(value, int) else None

    def observed_count(self, c2: Mapping[str, Any] | None) -> int | None:
        """The device count this validator compares with (Python's isinstance: True is 1)."""
        v = self.variant
        count = self.stage_count(c2)
        probed = None
        if v.gpu_from != "stage" and self.py is not None:
            info = _json_probe(self.py.official_torch_json)
            value = info.get("gpu_count") if info and info.get("ok") else None
            probed = value if isinstance(value, int) else None
        if v.gpu_from == "probe_or_stage":
            count, probed = probed, count
        return count if count is not None else probed if probed is not None else v.gpu_default


def _as_official(o: Outcome | None) -> dict[str, Any] | None:
    """A stage as the official harness would have written it: by its compat verdict.

    In a ``--reb-compat`` run that is what our official layout holds; in a
    strict run the compat audit still judges by the official verdicts.  None
    where the official cuda stage would have written no file, which the
    majority validator reads as no observation.
    """
    if o is None:
        return None
    if o.status != "skipped" and o.compat is not None:
        o = replace(o, status="passed" if o.compat else "failed")
    return official_stage(o, official=True)


def _differs(claim: str, observed: str, strip: bool) -> bool:
    return (claim.strip() != observed.strip()) if strip else claim != observed


def _cuda_unavailable(c2: Mapping[str, Any], how: str, valid: frozenset[str]) -> bool:
    """Whether the cuda stage says CUDA is unavailable, read the way this validator reads it
    (``valid``: the failures that still observe, where only a success does)."""
    observed = c2.get("observed")
    said_false = isinstance(observed, dict) and observed.get("cuda_available") is False
    if how == "observed_bool":  # bool() of what the block holds, both keys there
        return isinstance(observed, dict) and {"cuda_available", "gpu_count"} <= observed.keys() \
            and not observed["cuda_available"]
    if how == "observed":
        return said_false
    if how == "observed_if_success":
        return _observes(c2, valid) and said_false
    return c2["status"] == "failure" or c2["exit_code"] != 0 or said_false


def _observes(c2: Mapping[str, Any], valid: frozenset[str]) -> bool:
    """A cuda stage that succeeded, or failed of a kind this validator takes as an observation."""
    return c2["status"] == "success" or (c2["status"] == "failure"
                                         and c2["failure_category"] in valid)


def _json_probe(run: Invocation | None) -> dict[str, Any] | None:
    """What the JSON torch probe said (its last line), or None when it did not run."""
    if run is None:
        return None
    if run.exit_code != 0 or run.timed_out:
        return {"ok": False, "error": f"exit {run.exit_code}" + " (timed out)" * run.timed_out}
    lines = run.stdout.strip().splitlines()
    try:
        info = json.loads(lines[-1]) if lines else None
    except ValueError:
        info = None
    return info if isinstance(info, dict) else {"ok": False, "error": GARBAGE}


def _coerce_int(value: object) -> int | None:
    """``int(gpu_count)`` of the validators that coerce; what ``int()`` refuses is no claim."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError, OverflowError):
        return None
