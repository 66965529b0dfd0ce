"""The agent's self-report, ``/opt/scimlopsbench/report.json``, as a typed model.

The report is hostile input (an agent wrote it, possibly to look good), so it
is read with a size bound and validated with pydantic: one model gives the
types, the nullability ("null means not verified") and field-precise error
messages, and it keeps unknown keys as the official schema allows
(``additionalProperties: true``).  pydantic rather than jsonschema because the
model is also the typed object the strict rules read, and its errors name the
field.  The raw JSON is kept beside the model, because the official rules
(compat) judge whatever object they were given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

#: The nine keys the official harness requires, in its order.
REQUIRED_KEYS = ("python_path", "python_version", "torch_version", "cuda_available",
                 "gpu_count", "ddp_expected_ok", "env_tool", "env_name", "notes")
#: Reports larger than this are refused unread: no agent needs a megabyte to say nine things.
MAX_REPORT_BYTES = 1 << 20
#: Longer paths cannot name a file (PATH_MAX); they are not passed to the target at all.
MAX_PATH_CHARS = 4096


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
    installed_packages: list[dict[str, Any]] | None = None
    capabilities: dict[str, Any] | None = None
    artifacts: dict[str, Any] | None = None

    @field_validator("python_path")
    @classmethod
    def _a_path(cls, value: str) -> str:
        """A NUL or a lone surrogate cannot be in a path, and neither can be passed to exec."""
        if "\x00" in value:
            raise ValueError("contains a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("is not valid Unicode (lone surrogate)") from None
        return value


@dataclass
class ReportLoad:
    """The result of reading a report: a model, or the category and reason it is unusable.

    ``data`` keeps the parsed JSON even when it does not validate: the official
    rules (compat) judge whatever object they were given.
    """

    source: str
    report: AgentReport | None = None
    category: str | None = None  # missing_report | invalid_report
    message: str = ""
    data: Any = None
    parsed: bool = False  # the bytes were JSON (``data`` may still be null or not an object)

    @property
    def python(self) -> str | None:
        return self.report.python_path if self.report else None

    @property
    def claimed_python(self) -> str | None:
        """The raw ``python_path``, validated or not, when it is a non-empty string."""
        value = self.data.get("python_path") if isinstance(self.data, dict) else None
        return value if isinstance(value, str) and value else None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def show_input(value: object) -> str:
    """A short, safe rendering of an offending value (it may be huge or deeply nested)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return num(value)
    if isinstance(value, str):
        return clip(json.dumps(value), 60)
    if isinstance(value, list | dict):
        kind = "array" if isinstance(value, list) else "object"
        return f"a JSON {kind} of {len(value)} item(s)"
    return type(value).__name__


def load_report(raw: bytes | None, *, source: str) -> ReportLoad:
    """Parse and validate a report; never raises, whatever the bytes are."""
    if raw is None:
        return ReportLoad(source, category="missing_report", message=f"no report at {source}")
    if len(raw) > MAX_REPORT_BYTES:
        return ReportLoad(source, category="invalid_report",
                          message=f"report at {source} is larger than {MAX_REPORT_BYTES} bytes "
                                  "(refused unread)")
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
        return ReportLoad(source, category="invalid_report", data=data, parsed=True,
                          message=f"report at {source} is a JSON {_json_type(data)}, "
                                  "not an object")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return ReportLoad(source, category="invalid_report", data=data, parsed=True,
                          message=f"report at {source} lacks required key(s): {', '.join(missing)}")
    try:
        report = AgentReport.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} "
            f"(got {show_input(err.get('input'))})" for err in exc.errors()[:5])
        return ReportLoad(source, category="invalid_report", data=data, parsed=True,
                          message=f"report at {source} is invalid: {problems}")
    except (RecursionError, OverflowError, ValueError) as exc:
        return ReportLoad(source, category="invalid_report", data=data, parsed=True,
                          message=f"report at {source} is invalid: {str(exc)[:200]}")
    return ReportLoad(source, report=report, data=data, parsed=True)


def _json_type(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def num(value: float) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value) if abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"

