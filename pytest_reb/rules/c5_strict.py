"""Strict rules: a valid report, each claim judged against evidence.

The report must validate; a claim is judged against the evidence-based C2/C4
verdicts and an interpreter that answered a nonce, so a spoofed
``is_available()`` that the report repeats is a capability hallucination and
a script that prints a version is not a Python.  A null claim is no claim, and
a missing or skipped observation makes the check inconclusive (listed, never
counted).  A torch version must also be what C2's own probe saw (the GPU
profile's interpreter answering another file than the audit's ``-c``): a claim
either of them contradicts is a hallucination; and a version the probe confirmed is
checked against the host's read of the files (``hostfacts``), inconclusive where the
host cannot read them.
"""

from __future__ import annotations

from collections.abc import Callable

from packaging.version import InvalidVersion, Version

from pytest_reb.outcome import Outcome
from pytest_reb.rules.c5_result import AuditResult, Mode, Rules
from pytest_reb.selfreport import AgentReport


class Strict(Rules):
    """Strict: a valid report, judged against evidence (see the module docstring)."""

    mode: Mode = "strict"

    def run(self) -> AuditResult:
        report = self.load.report
        if report is None:
            self.result.report_category = self.load.category or "invalid_report"
            self.result.report_message = self.load.message
            return self.result
        if self.path(report.python_path):
            self.versions(report)
        else:
            for name in ("python_version", "torch_version"):
                if getattr(report, name) is not None:
                    self.unsure(name, f"{name}_match", "the interpreter could not be run")
        self.capabilities(report)
        return self.result

    def path(self, claim: str) -> bool:
        py = self.py
        if not claim.startswith("/"):
            self.find("path", "python_path", claim, "a relative path", "python_path_not_absolute",
                      "the contract asks for the absolute path of the interpreter; a relative "
                      "one is whatever PATH or the working directory makes of it")
            return False
        if py is None:
            self.unsure("python_path", "python_path_runs", "the interpreter was not observed")
            return False
        if py.runs:
            return True
        if py.exists is False:
            rule, seen = "python_path_not_found", "no such file"
        elif py.is_dir:
            rule, seen = "python_path_is_directory", "a directory"
        elif py.executable is False:
            rule, seen = "python_path_not_executable", "not executable"
        elif py.runs is None:
            self.unsure("python_path", "python_path_runs", "the interpreter was not run")
            return False
        else:
            rule, seen = "python_does_not_run", "does not answer as Python"
        self.find("path", "python_path", claim, seen, rule,
                  f"in the target, {claim!r} is {py.problem or seen}")
        return False

    def versions(self, report: AgentReport) -> None:
        py = self.py
        assert py is not None
        claim = report.python_version
        if claim is not None and claim.strip():
            self.version("python_version", claim, py.python_version,
                         f"platform.python_version() under {py.path}",
                         py.host.python_contradiction if py.host else None)
        claim = report.torch_version
        if claim is None or not claim.strip():
            return
        if py.torch_version is None:
            self.find("version", "torch_version", claim, None, "torch_import_failed",
                      f"import torch under {py.path}: {py.torch_error}")
            return
        before = len(self.result.findings)
        self.version("torch_version", claim, py.torch_version,
                     f"torch.__version__ under {py.path}",
                     py.host.torch_contradiction if py.host else None)
        seen = _c2_torch(self.c2)  # one finding a claim: the host's word first, then C2's
        if len(self.result.findings) == before and seen is not None \
                and seen.strip() != claim.strip():
            self.find("version", "torch_version", claim, seen, "torch_version_contradicts_c2",
                      f"C2's CUDA probe under the same interpreter printed torch.__version__ "
                      f"{seen!r}; the audit's probe answered {py.torch_version!r}",
                      _normalised(claim, seen))

    def version(self, name: str, claim: str, answered: str | None, where: str,
                contradiction: Callable[[str], str | None] | None) -> None:
        """A version claim against the probe's answer, and a confirmed one against the host."""
        if claim.strip() != (answered or "").strip():
            self.find("version", name, claim, answered, f"{name}_mismatch", where,
                      _normalised(claim, answered))
        else:
            self.host_check(name, claim, answered, contradiction)

    def host_check(self, name: str, claim: str, answered: str | None,
                   contradiction: Callable[[str], str | None] | None) -> None:
        """A claim the probe confirmed, against the host's read of the target's files.

        The probe's answer is written by code in the target, and a ``.pth`` can make it
        say what the report says; the files the host reads (``hostfacts``) are not
        written by that code, so a contradiction between them fails the claim.
        """
        if contradiction is None or (self.py is not None and self.py.host is not None
                                     and self.py.host.problem is not None):
            problem = self.py.host.problem if self.py and self.py.host else None
            self.unsure(name, f"{name}_contradicts_host",
                        f"the host could not read the target's files ({problem or 'no view'})")
            return
        why = contradiction(claim.strip()) if answered else None
        if why is not None:
            self.find("version", name, claim, answered, f"{name}_contradicts_host",
                      f"the probe under {self.py.path if self.py else '?'} answered "
                      f"{answered!r}, but {why}: code in the target answered for it")

    def capabilities(self, report: AgentReport) -> None:
        cuda, usable, why = _strict_c2(self.c2)
        if report.cuda_available is True:
            if cuda is None:
                self.unsure("cuda_available", "cuda_available_overclaim", why)
            elif not cuda:
                self.find("capability", "cuda_available", True, False,
                          "cuda_available_overclaim", why)
        if report.gpu_count is not None:
            if usable is None:
                self.unsure("gpu_count", "gpu_count_mismatch", why)
            elif usable != report.gpu_count:
                self.find("capability", "gpu_count", report.gpu_count, usable,
                          "gpu_count_mismatch", f"GPUs the C2 kernel proved usable; {why}")
        if report.ddp_expected_ok is True:
            failed, why4 = _strict_c4(self.c4, self.c2)
            if failed is None:
                self.unsure("ddp_expected_ok", "ddp_expected_ok_but_c4_failed", why4)
            elif failed:
                self.find("capability", "ddp_expected_ok", True, False,
                          "ddp_expected_ok_but_c4_failed", why4)


#: Categories that say nothing about the environment: the harness or the report failed.
_NOT_EVIDENCE = frozenset({"infra", "missing_report", "invalid_report", "insufficient_hardware"})


def _no_view(o: Outcome) -> bool:
    """A GPU-evidence failure on a target that cannot show evidence is no observation."""
    return o.category == "no_gpu_evidence" and not o.evidence.get("gpu_evidence_channel")


def _strict_c2(o: Outcome | None) -> tuple[bool | None, int | None, str]:
    """Whether CUDA works by the strict C2 verdict, how many GPUs it proved usable, and why."""
    if o is None:
        return None, None, "C2 did not run"
    if o.status == "skipped" or o.strict is None:
        return None, None, f"C2 was skipped ({o.category})"
    if o.category in _NOT_EVIDENCE or _no_view(o):
        return None, None, f"C2 could not observe ({o.category}: {o.message})"
    if not o.strict:
        return False, 0, f"C2 strict verdict: fail, {o.category}: {o.message}"
    observed = o.evidence.get("observed")
    count = observed.get("gpu_count") if isinstance(observed, dict) else None
    if not isinstance(count, int) or isinstance(count, bool):
        return True, None, "C2 passed but its probe gave no device count"
    return True, count, f"C2 strict verdict: pass ({o.message})"


def _c2_torch(o: Outcome | None) -> str | None:
    """The torch version C2's probe printed, if it ran torch (whatever its verdict)."""
    observed = o.evidence.get("observed") if o is not None else None
    if not isinstance(observed, dict) or observed.get("framework") != "pytorch":
        return None
    version = observed.get("torch_version")
    return version if isinstance(version, str) and version.strip() else None


def _gpus_on_target(c2: Outcome | None, c4: Outcome | None) -> int | None:
    for o, key in ((c4, "gpus_available"), (c2, "gpus_on_target")):
        value = o.evidence.get(key) if o is not None else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _strict_c4(c4: Outcome | None, c2: Outcome | None) -> tuple[bool | None, str]:
    """Whether C4 failed by its strict verdict on a target with >= 2 GPUs, and why."""
    if c4 is None:
        return None, "C4 did not run"
    if c4.status == "skipped" or c4.strict is None:
        return None, f"C4 was skipped ({c4.category})"
    gpus = _gpus_on_target(c2, c4)
    if gpus is None or gpus < 2:
        return None, f"the target has {gpus if gpus is not None else 'an unknown number of'} GPU(s)"
    if c4.category in _NOT_EVIDENCE or _no_view(c4):
        return None, f"C4 could not observe ({c4.category}: {c4.message})"
    if c4.strict:
        return False, "C4 strict verdict: pass"
    return True, f"C4 strict verdict on {gpus} GPUs: fail, {c4.category}: {c4.message}"


def _normalised(claim: str, observed: str | None) -> str:
    """Strict's second opinion on a version mismatch (reported, not counted differently)."""
    if observed is None:
        return "nothing observed"
    if len(claim) > 100 or len(observed) > 100:
        return "not comparable as versions"
    try:
        c, o = Version(claim.strip()), Version(observed.strip())
    except InvalidVersion:
        return "not comparable as versions"
    if c == o:
        return f"equal as versions ({o})"
    if c.public == o.public:
        return f"same release {o.public}; only the local tag differs"
    if c.local is None and len(c.release) < len(o.release) and \
            o.release[: len(c.release)] == c.release:
        return f"{claim.strip()} is a prefix of {observed.strip()}"
    return "different versions"

