"""C5: the agent's self-report, as a typed model, and the audit of its claims.

The report is hostile input (an agent wrote it, possibly to look good), so it
is read with a size bound and validated with pydantic: one model gives the
types, the nullability ("null means not verified") and field-precise error
messages, and it keeps unknown keys as the official schema allows
(``additionalProperties: true``).  pydantic rather than jsonschema because the
model is also the typed object the rules read, and its errors name the field.

The rules are written once, as the pure function ``audit``, in two modes:

* strict (default): the report must validate; a claim is judged against the
  evidence-based C2/C4 verdicts and an interpreter that answered a nonce, so a
  spoofed ``is_available()`` that the report repeats is a capability
  hallucination and a script that prints a version is not a Python.
* compat: the official majority algorithm (reference §8.2) on the raw JSON,
  with ``isinstance`` semantics and the per-repository variants of
  ``COMPAT_VARIANTS``; the §8.3 bundle bugs are not reproduced.

In both, a null claim is no claim, and a missing or skipped observation makes
the check inconclusive (listed, never counted).
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    from pytest_reb.outcome import Outcome
    from pytest_reb.target import Target

#: The nine keys the official harness requires, in its order.
REQUIRED_KEYS = ("python_path", "python_version", "torch_version", "cuda_available",
                 "gpu_count", "ddp_expected_ok", "env_tool", "env_name", "notes")
#: Reports larger than this are refused unread: no agent needs a megabyte to say nine things.
MAX_REPORT_BYTES = 1 << 20
#: Longer paths cannot name a file (PATH_MAX); they are not passed to the target at all.
MAX_PATH_CHARS = 4096

Kind = Literal["path", "version", "capability"]
KINDS: tuple[Kind, ...] = ("path", "version", "capability")
Mode = Literal["strict", "compat"]


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


def _show_input(value: object) -> str:
    """A short, safe rendering of an offending value (it may be huge or deeply nested)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return _num(value)
    if isinstance(value, str):
        return _clip(json.dumps(value), 60)
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
        return ReportLoad(source, category="invalid_report", data=data,
                          message=f"report at {source} is a JSON {_json_type(data)}, "
                                  "not an object")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        return ReportLoad(source, category="invalid_report", data=data,
                          message=f"report at {source} lacks required key(s): {', '.join(missing)}")
    try:
        report = AgentReport.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} "
            f"(got {_show_input(err.get('input'))})" for err in exc.errors()[:5])
        return ReportLoad(source, category="invalid_report", data=data,
                          message=f"report at {source} is invalid: {problems}")
    except (RecursionError, OverflowError, ValueError) as exc:
        return ReportLoad(source, category="invalid_report", data=data,
                          message=f"report at {source} is invalid: {str(exc)[:200]}")
    return ReportLoad(source, report=report, data=data)


def _json_type(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- observing python

#: Printed before each JSON line of the interpreter probe.
PYTHON_MARKER = "REB_PYTHON_PROBE"
#: The probe answers the nonce reversed, so a script that prints a canned version is caught.
#: Python 2 compatible on purpose: whatever the path names, it must get a fair question.
PYTHON_PROBE = r"""
import json, platform, sys
m = "REB_PYTHON_PROBE "
n = sys.argv[1][::-1]
sys.stdout.write(m + json.dumps({"nonce": n, "python_version": platform.python_version(),
                                 "executable": sys.executable}) + "\n")
sys.stdout.flush()
try:
    import torch
    r = {"nonce": n, "torch_version": str(torch.__version__)}
except BaseException as e:
    r = {"nonce": n, "torch_error": (type(e).__name__ + ": " + str(e))[:300]}
sys.stdout.write(m + json.dumps(r) + "\n")
sys.stdout.flush()
"""
#: The official validator's two questions, verbatim (compat judges their stdout).
OFFICIAL_VERSION_CODE = "import platform; print(platform.python_version())"
OFFICIAL_TORCH_CODE = "import torch; print(torch.__version__)"
PROBE_TIMEOUT = 60.0
VERSION_TIMEOUT = 30.0
TEST_TIMEOUT = 15.0


@dataclass
class Invocation:
    """One run of the claimed interpreter, as the host saw it (stdout clipped)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """The official success rule: exit 0, in time, something printed."""
        return self.exit_code == 0 and not self.timed_out and bool(self.stdout.strip())


@dataclass
class PythonObservation:
    """What the claimed interpreter is, seen from inside the target.

    ``exists``/``is_dir``/``executable`` are None when the target could not
    answer (no ``test`` binary); ``runs`` is the strict answer (the nonce
    came back), ``official_*`` are the compat answers.
    """

    path: str
    absolute: bool = True
    exists: bool | None = None
    is_dir: bool | None = None
    executable: bool | None = None
    runs: bool | None = None
    problem: str = ""
    python_version: str | None = None
    sys_executable: str | None = None
    torch_version: str | None = None
    torch_error: str | None = None
    official_version: Invocation | None = None
    official_torch: Invocation | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _path_problem(path: str) -> str | None:
    """Why ``path`` cannot be handed to exec at all, or None."""
    if not path.startswith("/"):
        return "not an absolute path"
    if len(path) > MAX_PATH_CHARS:
        return f"longer than any path can be ({MAX_PATH_CHARS} characters)"
    if "\x00" in path:
        return "not a path (it holds a NUL character)"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "not a path (it is not valid Unicode)"
    return None


def observe_python(target: Target, python_path: str, *, timeout_scale: float = 1.0,
                   cwd: str = "/") -> PythonObservation:
    """Ask the target what ``python_path`` is; argv lists only, no shell anywhere.

    ``cwd`` is ``/`` rather than the checkout, so a missing checkout cannot
    pass for a broken interpreter.
    """
    obs = PythonObservation(path=python_path[:MAX_PATH_CHARS])
    problem = _path_problem(python_path)
    if problem:
        obs.absolute = python_path.startswith("/")
        obs.exists = False if obs.absolute else None
        obs.runs = False
        obs.problem = problem
        return obs

    def test(flag: str) -> bool | None:
        res = target.exec(["test", flag, python_path], timeout=TEST_TIMEOUT * timeout_scale,
                          cwd=cwd)
        return {0: True, 1: False}.get(res.exit_code) if not res.timed_out else None

    obs.exists = test("-e")
    if obs.exists is False:
        obs.runs, obs.problem = False, "not there (no such file)"
        return obs
    obs.is_dir = test("-d")
    obs.executable = test("-x")
    if obs.is_dir:
        obs.runs, obs.problem = False, "a directory, not an interpreter"
    elif obs.executable is False:
        obs.runs, obs.problem = False, "not executable"
    else:
        _run_probe(obs, target, timeout_scale, cwd)
    if obs.executable is not False:
        obs.official_version = _invoke(target, python_path, OFFICIAL_VERSION_CODE,
                                       VERSION_TIMEOUT * timeout_scale, cwd)
        if obs.official_version.ok:
            obs.official_torch = _invoke(target, python_path, OFFICIAL_TORCH_CODE,
                                         PROBE_TIMEOUT * timeout_scale, cwd)
    return obs


def _invoke(target: Target, python: str, code: str, timeout: float, cwd: str) -> Invocation:
    res = target.exec([python, "-c", code], timeout=timeout, cwd=cwd)
    return Invocation(res.exit_code, res.stdout[-2000:], res.stderr[-2000:], res.timed_out)


def _run_probe(obs: PythonObservation, target: Target, timeout_scale: float, cwd: str) -> None:
    """The strict question: run the nonce probe and read its (at most two) answers."""
    nonce = secrets.token_hex(8)
    res = target.exec([obs.path, "-c", PYTHON_PROBE, nonce],
                      timeout=PROBE_TIMEOUT * timeout_scale, cwd=cwd)
    head: dict[str, Any] | None = None
    tail: dict[str, Any] | None = None
    for line in res.stdout.splitlines():
        if not line.startswith(PYTHON_MARKER + " "):
            continue
        try:
            data = json.loads(line[len(PYTHON_MARKER) + 1:])
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("nonce") != nonce[::-1]:
            continue
        if head is None and isinstance(data.get("python_version"), str):
            head = data
        elif "torch_version" in data or "torch_error" in data:
            tail = data
    if head is None:
        obs.runs = False
        said = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["nothing"]
        how = "timed out" if res.timed_out else f"exit {res.exit_code}"
        obs.problem = (f"not a Python interpreter: it did not answer the probe ({how}; "
                       f"printed {_clip(said[0], 160)!r})")
        return
    obs.runs = True
    obs.python_version = _clip(head["python_version"], 100)
    obs.sys_executable = _clip(str(head.get("executable")), 300)
    if tail is not None and isinstance(tail.get("torch_version"), str):
        obs.torch_version = _clip(tail["torch_version"], 100)
    elif tail is not None:
        obs.torch_error = _clip(str(tail.get("torch_error")), 300)
    elif res.timed_out:
        obs.torch_error = "timed out importing torch"
    else:
        obs.torch_error = f"the interpreter exited {res.exit_code} while importing torch"


# --------------------------------------------------------------------------- compat variants


@dataclass(frozen=True)
class CompatVariant:
    """How one official validator departs from the majority algorithm (reference §8.2).

    ``torch_import``: when a failed ``import torch`` counts as a version
    hallucination: ``if_claimed`` (majority: only when ``torch_version`` is a
    non-empty string), ``always`` (even for ``torch_version: null``), ``never``.
    """

    missing_report_is_path: bool = False
    torch_import: Literal["if_claimed", "always", "never"] = "if_claimed"
    ddp_underclaim: bool = False
    gpu_count_coerce: bool = False


MAJORITY = CompatVariant()
_ALWAYS = CompatVariant(torch_import="always")
#: The validators that differ from the majority, by repository (all others: ``MAJORITY``).
#: nano-vllm's ddp-underclaim code is absent here because the official one can never fire;
#: long-context-attention and VisionMamba only log an underclaim.
COMPAT_VARIANTS: dict[str, CompatVariant] = {
    "Auto1111SDK/Auto1111SDK": _ALWAYS,
    "DepthAnything/Depth-Anything-V2": CompatVariant(ddp_underclaim=True),
    "FunAudioLLM/FunMusic": CompatVariant(torch_import="always", ddp_underclaim=True,
                                          gpu_count_coerce=True),
    "FunAudioLLM/SenseVoice": _ALWAYS,
    "GeeeekExplorer/nano-vllm": _ALWAYS,
    "HaozheLiu-ST/T-GATE": _ALWAYS,
    "InternLM/InternEvo": CompatVariant(torch_import="never"),
    "KRLabsOrg/LettuceDetect": _ALWAYS,
    "NVIDIA/kvpress": CompatVariant(missing_report_is_path=True),
    "NVlabs/Sana": CompatVariant(missing_report_is_path=True, torch_import="always"),
    "OpenBMB/VoxCPM": _ALWAYS,
    "ZhengYinan-AIR/Diffusion-Planner": _ALWAYS,
    "apple/ml-mdm": CompatVariant(ddp_underclaim=True),
    "emidan19/deep-tempest": _ALWAYS,
    "facebookresearch/large_concept_model": _ALWAYS,
    "feifeibear/long-context-attention": _ALWAYS,
    "flagos-ai/FlagGems": CompatVariant(missing_report_is_path=True, torch_import="always"),
    "kyegomez/MultiModalMamba": _ALWAYS,
    "kyegomez/VisionMamba": _ALWAYS,
    "lightly-ai/lightly-train": _ALWAYS,
    "meta-pytorch/torchft": _ALWAYS,
    "metavoiceio/metavoice-src": _ALWAYS,
    "microsoft/renderformer": CompatVariant(missing_report_is_path=True),
    "modelscope/ClearerVoice-Studio": _ALWAYS,
    "ogkalu2/comic-translate": CompatVariant(missing_report_is_path=True),
    "remsky/Kokoro-FastAPI": _ALWAYS,
    "rllm-team/rllm": CompatVariant(ddp_underclaim=True),
    "thu-pacman/chitu": CompatVariant(ddp_underclaim=True),
}
_VARIANTS_LOWER = {k.lower(): v for k, v in COMPAT_VARIANTS.items()}


def compat_variant(repo: str | None) -> CompatVariant:
    """The official validator's variant for ``repo`` (owner/name, any case)."""
    return _VARIANTS_LOWER.get((repo or "").lower(), MAJORITY)


# --------------------------------------------------------------------------- findings


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


def audit(load: ReportLoad, python: PythonObservation | None,
          outcomes: Mapping[str, Outcome | None], *, compat: bool,
          repo: str | None = None) -> AuditResult:
    """Judge the report's claims against what was observed; pure, and never raises.

    ``outcomes`` holds the C2 and C4 outcomes (absent or None: not observed).
    ``repo`` selects the official per-repository variant in compat mode.
    """
    if compat:
        return _Compat(load, python, outcomes, compat_variant(repo)).run()
    return _Strict(load, python, outcomes).run()


class _Rules:
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
        self.result.findings.append(Finding(kind, name, _jsonable(claim), _jsonable(observed),
                                            rule, _clip(evidence, 600), normalised))

    def unsure(self, name: str, rule: str, reason: str) -> None:
        self.result.inconclusive.append(Inconclusive(name, rule, _clip(reason, 300)))


class _Strict(_Rules):
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
        if claim is not None and claim.strip() and \
                claim.strip() != (py.python_version or "").strip():
            self.find("version", "python_version", claim, py.python_version,
                      "python_version_mismatch", f"platform.python_version() under {py.path}",
                      _normalised(claim, py.python_version))
        claim = report.torch_version
        if claim is None or not claim.strip():
            return
        if py.torch_version is None:
            self.find("version", "torch_version", claim, None, "torch_import_failed",
                      f"import torch under {py.path}: {py.torch_error}")
        elif claim.strip() != py.torch_version.strip():
            self.find("version", "torch_version", claim, py.torch_version,
                      "torch_version_mismatch", f"torch.__version__ under {py.path}",
                      _normalised(claim, py.torch_version))

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


class _Compat(_Rules):
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
                      f"{claim} -c {OFFICIAL_VERSION_CODE!r}: {how} {_clip(said[0], 160)!r}")
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
                          f"{py.path} -c {OFFICIAL_TORCH_CODE!r}: {_clip(said[0], 200)}")
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
    """FunMusic's ``int(gpu_count)``; what ``int()`` refuses is not judged."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError, OverflowError):
        return None


# --------------------------------------------------------------------------- helpers


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


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _num(value: float) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value) if abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"


def _jsonable(value: object) -> Any:
    """A bounded, JSON-safe copy of a claim or observation for the outcome record."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else _num(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _clip(value, 200)
    return _show_input(value)


def _show(value: object) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)
