"""C5 under fuzzing: whatever the report and the observations are, there is a verdict.

Arbitrary JSON values (NaN, huge integers and lone surrogates included),
reports that keep the nine keys but hold anything in them, and arbitrary
bytes go through ``load_report`` and ``audit`` in both modes, against
arbitrary C2/C4 outcomes (their evidence is the target's word, so it is
fuzzed too).  The result must exist, be consistent, and serialise to strict
JSON (it is written to ``outcomes.jsonl``).  ``observe_python`` is fuzzed
with a fake target: any path, and any answer from the target.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.repomodules import benchmark

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.c5_observe import Invocation, PythonObservation, observe_python
from pytest_reb.rules.c5 import audit
from pytest_reb.rules.c5_result import KINDS
from pytest_reb.selfreport import REQUIRED_KEYS, ReportLoad, load_report
from pytest_reb.spec import CompatVariant
from pytest_reb.targets import ExecResult

FAST = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**20)
           | st.floats() | st.text(max_size=30)
           | st.sampled_from(["/bin/sh", "/opt/envs/x/bin/python", "3.11.2", "2.4.0+cu124", ""]))
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=15)
#: per key, the values the rules branch on (drawn often), beside anything at all
_FOCUS: dict[str, list[Any]] = {
    "python_path": ["/opt/envs/x/bin/python", "/bin/sh", "python3", ""],
    "python_version": ["3.11.2", "3.11", "", None],
    "torch_version": ["2.4.0+cu124", "2.4.0", None],
    "cuda_available": [True, False, None],
    "gpu_count": [0, 1, 2, None, True, "2"],
    "ddp_expected_ok": [True, False, None],
    "env_tool": ["venv", "docker"],
}
claims = {k: st.sampled_from(_FOCUS.get(k, [None, "x"])) | json_values for k in REQUIRED_KEYS}
reports = st.fixed_dictionaries(
    {}, optional=claims | {"installed_packages": json_values, "capabilities": json_values})
full_reports = st.fixed_dictionaries(claims)
counts = st.sampled_from([0, 1, 2, 4, True, "2", None, [2]]) | json_values
#: the majority and every variant a ``repos/`` module states
variants = st.sampled_from(sorted({r.c5_compat for r in benchmark().values()}, key=repr))


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


invocations = st.builds(Invocation, exit_code=_maybe(st.integers(-20, 300)),
                        stdout=st.text(max_size=40), stderr=st.text(max_size=40),
                        timed_out=st.booleans())
observations = _maybe(st.builds(
    PythonObservation, path=st.text(max_size=20), absolute=st.booleans(),
    exists=_maybe(st.booleans()), is_dir=_maybe(st.booleans()),
    executable=_maybe(st.booleans()), runs=_maybe(st.booleans()), problem=st.text(max_size=20),
    python_version=_maybe(st.text(max_size=12)), torch_version=_maybe(st.text(max_size=12)),
    torch_error=_maybe(st.text(max_size=12)), official_version=_maybe(invocations),
    official_torch=_maybe(invocations)))
categories = _maybe(st.sampled_from(["cuda_unavailable", "no_gpu_evidence", "infra", "runtime",
                                     "insufficient_hardware", "not_applicable", "timeout"]))


def _outcomes(tier: str) -> st.SearchStrategy[Outcome]:
    return st.builds(
        Outcome, repo=st.just("r"), target=st.just("t"), tier=st.just(tier),
        status=st.sampled_from(["passed", "failed", "skipped"]), category=categories,
        strict=_maybe(st.booleans()), compat=_maybe(st.booleans()),
        evidence=st.fixed_dictionaries({}, optional={
            "observed": st.fixed_dictionaries(
                {"gpu_count": counts}, optional={"cuda_available": json_values}) | json_values,
            "gpus_on_target": counts, "gpus_available": counts,
            "gpu_evidence_channel": st.sampled_from([None, "host /proc"]) | json_values}))


def _judge_everything(load: ReportLoad, python: PythonObservation | None,
                      outcomes: dict[str, Outcome | None], variant: CompatVariant) -> None:
    for compat in (False, True):
        result = audit(load, python, outcomes, compat=compat, variant=variant)
        assert result.passed == (result.category is None)
        assert set(result.counts) == set(KINDS)
        assert sum(result.counts.values()) == len(result.findings)
        if result.category and result.category.endswith("_hallucination"):
            assert result.counts[result.category.removesuffix("_hallucination")] > 0
        assert isinstance(result.message, str) and result.message
        json.dumps(result.to_json(), allow_nan=False)
        if not compat and load.report is None:
            assert result.category in ("missing_report", "invalid_report")


@FAST
@given(value=json_values, python=observations, c2=_maybe(_outcomes("c2")),
       c4=_maybe(_outcomes("c4")), variant=variants)
def test_any_json_value_gets_a_verdict(value: Any, python: PythonObservation | None,
                                       c2: Outcome | None, c4: Outcome | None,
                                       variant: CompatVariant) -> None:
    raw = json.dumps(value).encode()
    _judge_everything(load_report(raw, source="fuzz"), python, {"c2": c2, "c4": c4}, variant)


@FAST
@given(report=full_reports, python=observations, c2=_outcomes("c2"), c4=_outcomes("c4"),
       variant=variants)
def test_any_claims_against_any_observations(report: dict[str, Any],
                                             python: PythonObservation | None, c2: Outcome,
                                             c4: Outcome, variant: CompatVariant) -> None:
    load = load_report(json.dumps(report).encode(), source="fuzz")
    _judge_everything(load, python, {"c2": c2, "c4": c4}, variant)


@FAST
@given(report=reports, python=observations, c2=_maybe(_outcomes("c2")),
       c4=_maybe(_outcomes("c4")), variant=variants)
def test_any_report_shape_gets_a_verdict(report: dict[str, Any],
                                         python: PythonObservation | None, c2: Outcome | None,
                                         c4: Outcome | None, variant: CompatVariant) -> None:
    load = load_report(json.dumps(report).encode(), source="fuzz")
    assert (load.report is None) == (load.category is not None)
    _judge_everything(load, python, {"c2": c2, "c4": c4}, variant)


@FAST
@given(raw=st.binary(max_size=300) | st.none(), python=observations, variant=variants)
def test_any_bytes_get_a_verdict(raw: bytes | None, python: PythonObservation | None,
                                 variant: CompatVariant) -> None:
    load = load_report(raw, source="fuzz")
    _judge_everything(load, python, {}, variant)


class _FakeTarget:
    """Answers every exec with a drawn result; records that only argv lists arrive."""

    def __init__(self, answers: st.DataObject) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def exec(self, argv: list[str], *, timeout: float, **kw: Any) -> ExecResult:
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        assert timeout > 0
        self.calls.append(argv)
        d = self.answers
        return ExecResult(argv, d.draw(_maybe(st.integers(-20, 300))), d.draw(st.text()),
                          d.draw(st.text(max_size=50)), 0.1, timed_out=d.draw(st.booleans()))

    def util(self, name: str) -> list[str]:
        """A utility as a target's contract names it (``Target.util``): here, plainly."""
        return [name]

    def twin(self) -> None:
        """No twin (``Target.twin``): the questions run one after the other."""
        return None

    def kept_bytecode(self) -> dict[str, str]:
        """No bytecode kept for an image (``Target.kept_bytecode``)."""
        return {}


@FAST
@given(path=st.text() | st.sampled_from(["/bin/sh", "/a b/'c\"", "/x; touch /tmp/p"]),
       data=st.data())
def test_observe_python_survives_any_path_and_any_answer(path: str, data: st.DataObject) -> None:
    target = _FakeTarget(data)
    obs = observe_python(target, path)  # type: ignore[arg-type]
    json.dumps(obs.to_json())
    if not path.startswith("/") or "\x00" in path:
        assert target.calls == [] and obs.runs is False
    for argv in target.calls:
        assert path in argv  # passed whole, as one argument, never split or quoted
