"""C5: the agent's self-report, as a typed model, and the audit of its claims.

The report is hostile input (an agent wrote it, possibly to look good), so it
is read with a size bound and validated with pydantic: one model gives the
types, the nullability ("null means not verified") and field-precise error
messages, and it keeps unknown keys as the official schema allows
(``additionalProperties: true``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The nine keys the official harness requires, in its order.
REQUIRED_KEYS = ("python_path", "python_version", "torch_version", "cuda_available",
                 "gpu_count", "ddp_expected_ok", "env_tool", "env_name", "notes")
#: Reports larger than this are refused unread: no agent needs a megabyte to say nine things.
MAX_REPORT_BYTES = 1 << 20


class AgentReport(BaseModel):
    """``/opt/scimlopsbench/report.json``: what the agent says it built."""

    model_config = ConfigDict(extra="allow", strict=True)

    python_path: str = Field(min_length=1)
    python_version: str | None
    torch_version: str | None
    cuda_available: bool | None
    gpu_count: int | None = Field(ge=0)
    ddp_expected_ok: bool | None
    env_tool: Literal["conda", "uv", "pip", "poetry", "venv", "none"]
    env_name: str | None
    notes: str | None
    dataset_hf_id: str | None = None
    model_hf_id: str | None = None


@dataclass
class ReportLoad:
    """The result of reading a report: a model, or the category and reason it is unusable."""

    source: str
    report: AgentReport | None = None
    category: str | None = None  # missing_report | invalid_report
    message: str = ""

    @property
    def python(self) -> str | None:
        return self.report.python_path if self.report else None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def load_report(raw: bytes | None, *, source: str) -> ReportLoad:
    """Parse and validate a report; never raises, whatever the bytes are."""
    if raw is None:
        return ReportLoad(source, category="missing_report", message=f"no report at {source}")
    if len(raw) > MAX_REPORT_BYTES:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is larger than {MAX_REPORT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is not UTF-8 ({exc.reason} at byte "
                                  f"{exc.start})")
    except (ValueError, RecursionError) as exc:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is not JSON: {str(exc)[:200]}")
    if not isinstance(data, dict):
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is a JSON {type(data).__name__}, "
                                  "not an object")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} lacks required key(s): {', '.join(missing)}")
    try:
        report = AgentReport.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5])
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is invalid: {problems}")
    except (RecursionError, OverflowError, ValueError) as exc:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is invalid: {str(exc)[:200]}")
    return ReportLoad(source, report=report)
