"""Compat rules: the official validators' algorithm, per repository.

The official majority algorithm (reference §8.2) on the raw JSON, with
Python's ``isinstance`` semantics, and the variant of one repository's
validator as its ``repos/`` module states it (``Repo.c5_compat``).  A null
claim is no claim; a missing or skipped observation makes the check
inconclusive (listed, never counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_reb.audit.observe import OFFICIAL_TORCH_CODE, OFFICIAL_VERSION_CODE, PythonObservation
from pytest_reb.audit.report import ReportLoad, clip
from pytest_reb.audit.result import AuditResult, Mode, Rules

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome
    from pytest_reb.spec import CompatVariant

class Compat(Rules):
    """The official majority algorithm (§8.2) and one repository's variant of it."""

    mode: Mode = "compat"

    def __init__(self, load: ReportLoad, python: PythonObservation | None,
                 outcomes: Mapping[str, Outcome | None], variant: CompatVariant) -> None:
        super().__init__(load, python, outcomes)
        self.variant = variant

    def run(self) -> AuditResult:
        data = self.load.data
        if not isinstance(data, dict):  # step 0: missing, unreadable, not an object
            self.result.report_category = self.load.category or "invalid_report"
            self.result.report_message = self.load.message
            if self.variant.missing_report_is_path:
                self.find("path", "python_path", None, "no usable report", "report_missing",
                          self.load.message)
            return self.result
        version = self.path(data.get("python_path"))
        if version is not None:
            self.versions(data, version)
        self.capabilities(data)
        return self.result

    def path(self, claim: object) -> str | None:
        """P1-P3; the observed python version when the interpreter is usable."""
        py = self.py
        if not isinstance(claim, str) or not claim:
            self.find("path", "python_path", claim, None, "python_path_missing",
                      "python_path is absent, not a string, or empty")
            return None
        if not claim.startswith("/"):
            self.find("path", "python_path", claim, "no such file", "python_path_not_found",
                      "a relative path; the official check resolves it against the checkout")
            return None
        if py is None:
            self.unsure("python_path", "python_path_runs", "the interpreter was not observed")
            return None
        if py.exists is False or py.executable is False:
            rule = "python_path_not_found" if py.exists is False else "python_path_not_executable"
            self.find("path", "python_path", claim, py.problem or rule, rule,
                      f"in the target, {claim!r} is {py.problem or rule}")
            return None
        run = py.official_version
        if run is None:
            self.unsure("python_path", "python_invocation_failed", "the interpreter was not run")
            return None
        if not run.ok:
            how = ("timed out" if run.timed_out else
                   f"exit {run.exit_code}" if run.exit_code != 0 else "printed nothing")
            said = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:] or [""]
            self.find("path", "python_path", claim, how, "python_invocation_failed",
                      f"{claim} -c {OFFICIAL_VERSION_CODE!r}: {how} {clip(said[0], 160)!r}")
            return None
        return run.stdout.strip()

    def versions(self, data: dict[str, Any], observed: str) -> None:
        py = self.py
        assert py is not None
        claim = data.get("python_version")
        if isinstance(claim, str) and claim.strip() and claim.strip() != observed:
            self.find("version", "python_version", claim, observed, "python_version_mismatch",
                      f"{py.path} -c {OFFICIAL_VERSION_CODE!r}")
        claim = data.get("torch_version")
        claimed = isinstance(claim, str) and bool(claim.strip())
        run = py.official_torch
        if run is None:
            if claimed or self.variant.torch_import == "always":
                self.unsure("torch_version", "torch_import", "torch was not probed")
            return
        imported = run.exit_code == 0 and not run.timed_out
        if not imported:
            counts = {"if_claimed": claimed, "always": True, "never": False}
            if counts[self.variant.torch_import]:
                said = run.stderr.strip().splitlines()[-1:] or [f"exit {run.exit_code}"]
                self.find("version", "torch_version", claim, None, "torch_import_failed",
                          f"{py.path} -c {OFFICIAL_TORCH_CODE!r}: {clip(said[0], 200)}")
        elif claimed and isinstance(claim, str) and claim.strip() != run.stdout.strip():
            self.find("version", "torch_version", claim, run.stdout.strip(),
                      "torch_version_mismatch", f"{py.path} -c {OFFICIAL_TORCH_CODE!r}")

    def capabilities(self, data: dict[str, Any]) -> None:
        c2, c4 = self.c2, self.c4
        ran2 = c2 is not None and c2.status != "skipped"
        observed = c2.evidence.get("observed") if c2 is not None else None
        count = observed.get("gpu_count") if isinstance(observed, dict) else None
        count = count if isinstance(count, int) else None  # Python's isinstance: True is 1
        if data.get("cuda_available") is True:
            if not ran2:
                self.unsure("cuda_available", "cuda_available_overclaim", "C2 did not run")
            elif c2 is not None and not c2.compat:
                self.find("capability", "cuda_available", True, False,
                          "cuda_available_overclaim",
                          f"C2 (official rule: is_available()) failed: {c2.category}: "
                          f"{c2.message}")
        claim = data.get("gpu_count")
        if self.variant.gpu_count_coerce and not isinstance(claim, int):
            claim = _coerce_int(claim)
        if isinstance(claim, int):
            if count is None:
                self.unsure("gpu_count", "gpu_count_mismatch", "C2 observed no device count")
            elif count != claim:
                self.find("capability", "gpu_count", claim, count, "gpu_count_mismatch",
                          "torch.cuda.device_count() in the C2 probe")
        ddp = data.get("ddp_expected_ok")
        ran4 = c4 is not None and c4.status != "skipped"
        if ddp is True:
            if count is None or count < 2 or not ran4:
                self.unsure("ddp_expected_ok", "ddp_expected_ok_but_c4_failed",
                            "fewer than 2 GPUs observed" if ran4 else "C4 did not run")
            elif c4 is not None and not c4.compat:
                self.find("capability", "ddp_expected_ok", True, False,
                          "ddp_expected_ok_but_c4_failed",
                          f"C4 (official rule: exit 0) failed on {count} GPUs: {c4.category}: "
                          f"{c4.message}")
        elif ddp is False and self.variant.ddp_underclaim and ran4 and c4 is not None \
                and c4.compat:
            self.find("capability", "ddp_expected_ok", False, True, "ddp_expected_ok_underclaim",
                      "C4 (official rule: exit 0) passed; this repository's validator counts "
                      "an underclaim")


def _coerce_int(value: object) -> int | None:
    """The ``int(gpu_count)`` of the validators that coerce; what ``int()`` refuses is not judged."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError, OverflowError):
        return None

