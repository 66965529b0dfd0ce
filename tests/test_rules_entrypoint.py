"""How C1, C3 and C4 are decided (``rules/entrypoint_stage.decide``), over evidence records.

Two tables: the outcomes of recorded real runs (``tests/data/realruns``: C1 on
real repositories; ``tests/data/gpu/h200-outcomes.json``: C3/C4 of an honest
network and its fakes on an H200), rebuilt as the record their stage gathered,
must decide as they were recorded; and hand-made rows, one per rule and per
order of blame, including the hostile ones (a silent CPU fallback, a startup
hook doing the GPU work, an edited checkout).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.outcomes import exec_result

from pytest_reb.rules.decision import Mode
from pytest_reb.rules.entrypoint_stage import EntrypointEvidence, GpuNeed, decide
from pytest_reb.spec import Run
from pytest_reb.targets import ExecResult

DATA = Path(__file__).parent / "data"
RUN = Run(["{python}", "train.py"], timeout=600)
#: GPU counters of a GPU that did real work, and of one that held a bare context.
BUSY = {"0": {"interval_s": 9.9, "gpm": {"sm_active_ms": 0.0095}},
        "1": {"interval_s": 9.9, "gpm": {"sm_active_ms": 0.012}}}
IDLE = {"0": {"interval_s": 9.9, "gpm": {"sm_active_ms": 0.0000028}}}


def recorded_rows() -> list[tuple[str, Mode, dict[str, Any]]]:
    """(id, mode, outcome) of every recorded C1/C3/C4 outcome whose stage ran its command."""
    rows: list[tuple[str, Mode, dict[str, Any]]] = []
    for path in sorted((DATA / "realruns").glob("*.json")):
        data = json.loads(path.read_text())
        for mode in ("strict", "compat"):
            rows += [(f"{path.stem}-{o['tier']}-{mode}", mode, o) for o in data[mode]
                     if o["tier"] in ("c1", "c3", "c4") and o["exit_code"] is not None]
    gpu = json.loads((DATA / "gpu" / "h200-outcomes.json").read_text())["outcomes"]
    rows += [(f"h200-{o['repo']}-{o['tier']}", "strict", {"exit_code": 0, **o}) for o in gpu
             if o["tier"] in ("c3", "c4") and o["category"] != "insufficient_hardware"
             and "loop100" not in o["repo"]]  # loop100 was judged by an earlier floor
    return rows


def as_evidence(o: dict[str, Any]) -> EntrypointEvidence:
    """The record the stage gathered, rebuilt from what its outcome kept (no output tails)."""
    ev = o["evidence"]
    res = ExecResult(o.get("command") or ["x"], o["exit_code"], "", "", o.get("duration", 1.0),
                     timed_out=bool(o.get("timed_out")),
                     gpu_holders={int(p): g for p, g in ev.get("gpu_holders", {}).items()},
                     gpu_compute=ev.get("gpu_compute") or {},
                     gpu_evidence_channel=ev.get("gpu_evidence_channel"))
    gpu = None if o["tier"] == "c1" else GpuNeed(1 if o["tier"] == "c3" else 2)
    return EntrypointEvidence(
        tier=o["tier"], profile="cpu" if o["tier"] == "c1" else "gpu", run=RUN, res=res,
        tampered=o["message"] if "not the pinned commit" in o["message"] else None, gpu=gpu)


ROWS = recorded_rows()


def test_there_are_recorded_rows_of_each_kind() -> None:
    seen = {(o["tier"], o["status"]) for _, _, o in ROWS}
    assert {("c1", "passed"), ("c1", "failed"), ("c3", "passed"), ("c3", "failed")} <= seen


@pytest.mark.parametrize(("mode", "o"), [(m, o) for _, m, o in ROWS], ids=[i for i, _, _ in ROWS])
def test_recorded_runs_decide_as_recorded(mode: Mode, o: dict[str, Any]) -> None:
    got = decide(as_evidence(o), mode)
    assert (got.strict, got.compat) == (o["strict"], o["compat"])
    assert ("passed" if got.passed else "failed") == o["status"]
    if o["exit_code"] == 0:  # a failed run's category is read from its output, not kept
        assert got.category == o["category"], got.message


def ev(res: ExecResult, *, tier: str = "c3", need: int | None = 1, one_process: bool = False,
       run: Run = RUN, **kw: Any) -> EntrypointEvidence:
    gpu = None if need is None else GpuNeed(need, one_process)
    return EntrypointEvidence(tier=tier, profile="cpu" if need is None else "gpu", run=run,
                              res=res, gpu=gpu, **kw)


HOOK = "the GPU work was launched by sitecustomize.py, not by the entrypoint's code"
#: (id, evidence, strict, compat, strict's category, a word of strict's message)
CASES: list[tuple[str, EntrypointEvidence, bool, bool, str | None, str]] = [
    ("c1-exit-0", ev(exec_result(), tier="c1", need=None), True, True, None, "no GPU visible"),
    ("c1-exit-1", ev(exec_result(rc=1, err="ModuleNotFoundError: No module named 'x'"),
                     tier="c1", need=None), False, False, "deps", "No module named"),
    ("timed-out", ev(exec_result(rc=-9, timed_out=True), tier="c1", need=None),
     False, False, "timeout", "timed out"),
    ("log-marker-missing", ev(exec_result(out="done"), tier="c1", need=None,
                              run=Run(["x"], expect_log=("epoch 1",))),
     False, False, "runtime", "epoch 1"),
    ("setup-failed", ev(exec_result(rc=2), tier="c1", need=None,
                        early=("deps", "setup step `pip` failed")),
     False, False, "deps", "setup step"),
    ("edited-checkout", ev(exec_result({1: [0]}, gpu_compute=BUSY), tampered="modified x.py"),
     False, True, "integrity", "modified x.py"),
    ("edited-and-failed", ev(exec_result(rc=1, err="boom"), tampered="modified x.py"),
     False, False, "runtime", "also, modified x.py"),
    ("witness-not-run", ev(exec_result({1: [0]}, gpu_compute=BUSY),
                           witness="no process reached train.py"),
     False, True, "entrypoint_not_run", "exit 0, but no process reached"),
    ("silent-cpu-fallback", ev(exec_result({}, gpu_compute=BUSY)),
     False, True, "no_gpu_evidence", "silent CPU fallback"),
    ("bare-context", ev(exec_result({1: [0]}, gpu_compute=IDLE)),
     False, True, "no_gpu_compute", "did real work"),
    ("startup-hook-did-the-work", ev(exec_result({1: [0]}, gpu_compute=BUSY), attribution=HOOK),
     False, True, "gpu_work_not_entrypoint", "sitecustomize.py"),
    ("witness-blamed-before-gpu", ev(exec_result({}, gpu_compute=BUSY), witness="no record",
                                     attribution=HOOK),
     False, True, "entrypoint_not_run", "no record"),
    ("c3-honest", ev(exec_result({1: [0]}, gpu_compute=BUSY)), True, True, None, "computed"),
    ("c4-one-rank", ev(exec_result({1: [0], 2: [0]}, gpu_compute=BUSY), tier="c4", need=2),
     False, True, "no_gpu_evidence", "only 1 process"),
    ("c4-two-ranks", ev(exec_result({1: [0], 2: [1]}, gpu_compute=BUSY), tier="c4", need=2),
     True, True, None, "GPU(s) 0, 1"),
    ("c4-device-map", ev(exec_result({1: [0, 1]}, gpu_compute=BUSY), tier="c4", need=2,
                         one_process=True), True, True, None, "computed"),
]


@pytest.mark.parametrize(("evidence", "strict", "compat", "category", "word"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_rule_in_its_order_of_blame(evidence: EntrypointEvidence, strict: bool,
                                         compat: bool, category: str | None, word: str) -> None:
    got = decide(evidence, "strict")
    assert (got.strict, got.compat, got.category) == (strict, compat, category)
    assert word in got.message
    assert not (strict and got.diagnosis)  # a pass has nothing to diagnose


@pytest.mark.parametrize(("evidence", "strict", "compat", "category", "word"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_compat_passes_what_exits_0_and_keeps_strict_reason(
        evidence: EntrypointEvidence, strict: bool, compat: bool, category: str | None,
        word: str) -> None:
    got = decide(evidence, "compat")
    assert (got.strict, got.compat, got.passed) == (strict, compat, compat)
    assert got.category == (None if compat else category)
    assert word in got.message  # a compat pass strict refuses still says why
    assert not (compat and got.diagnosis)
