"""The audit's result: findings, inconclusive checks, and the verdict they make.

Shared by both rule sets, so a strict and a compat audit of the same report
are recorded, counted and described the same way.  ``Rules`` is the common
base that builds one ``AuditResult``: every value that goes into a finding is
clipped and made JSON-safe here, once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pytest_reb.selfreport import ReportLoad, clip, num, show_input

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome
    from pytest_reb.rules.c5_evidence import PythonObservation

Kind = Literal["path", "version", "capability"]
KINDS: tuple[Kind, ...] = ("path", "version", "capability")
Mode = Literal["strict", "compat"]



@dataclass(frozen=True)
class Finding:
    """One contradicted claim: which field, what was claimed and seen, by which rule, and why."""

    kind: Kind
    field: str
    claim: Any
    observed: Any
    rule: str
    evidence: str
    normalised: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        text = (f"{self.field} claims {_show(self.claim)}, observed {_show(self.observed)} "
                f"[{self.rule}]: {self.evidence}")
        return text + (f" (normalised: {self.normalised})" if self.normalised else "")


@dataclass(frozen=True)
class Inconclusive:
    """A claim that could not be judged, and why (never counted)."""

    field: str
    rule: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditResult:
    """The audit in one mode: findings, inconclusive checks, or why the report is unusable."""

    mode: Mode
    findings: list[Finding] = field(default_factory=list)
    inconclusive: list[Inconclusive] = field(default_factory=list)
    report_category: str | None = None  # missing_report | invalid_report
    report_message: str = ""

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(f.kind == k for f in self.findings) for k in KINDS}

    @property
    def passed(self) -> bool:
        return self.report_category is None and not self.findings

    @property
    def category(self) -> str | None:
        """The report's own problem, else the first kind found, in path/version/capability order."""
        if self.report_category:
            return self.report_category
        kind = next((k for k in KINDS if self.counts[k]), None)
        return f"{kind}_hallucination" if kind else None

    @property
    def message(self) -> str:
        if self.report_category:
            extra = "".join(f"; counted as {f.kind} hallucination ({f.rule})"
                            for f in self.findings)
            return self.report_message + extra
        if self.findings:
            c = self.counts
            head = (f"{len(self.findings)} hallucination(s) (path {c['path']}, version "
                    f"{c['version']}, capability {c['capability']}): ")
            return head + "; ".join(f.describe() for f in self.findings)
        text = "the report validates and no claim is contradicted"
        if self.inconclusive:
            text += "; inconclusive: " + "; ".join(
                f"{i.field} ({i.reason})" for i in self.inconclusive)
        return text

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "passed": self.passed, "category": self.category,
                "counts": self.counts, "findings": [f.to_json() for f in self.findings],
                "inconclusive": [i.to_json() for i in self.inconclusive]}


class Rules:
    """What both modes share: the result being built, and the two helpers that add to it."""

    mode: Mode

    def __init__(self, load: ReportLoad, python: PythonObservation | None,
                 outcomes: Mapping[str, Outcome | None]) -> None:
        self.load = load
        self.py = python
        self.c2 = outcomes.get("c2")
        self.c4 = outcomes.get("c4")
        self.result = AuditResult(self.mode)

    def find(self, kind: Kind, name: str, claim: object, observed: object, rule: str,
             evidence: str, normalised: str | None = None) -> None:
        self.result.findings.append(Finding(kind, name, jsonable(claim), jsonable(observed),
                                            rule, clip(evidence, 600), normalised))

    def unsure(self, name: str, rule: str, reason: str) -> None:
        self.result.inconclusive.append(Inconclusive(name, rule, clip(reason, 300)))


def jsonable(value: object) -> Any:
    """A bounded, JSON-safe copy of a claim or observation for the outcome record."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else num(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clip(value, 200)
    return show_input(value)


def _show(value: object) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)

