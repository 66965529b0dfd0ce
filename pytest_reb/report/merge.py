"""``reb merge``: the runs of several shards joined into one run, as if it had been one.

Each machine of a sharded benchmark (``--reb-shard I/N``) writes its own run
folder.  Merging reads every folder's ``outcomes.jsonl`` (the latest outcome
of each key, as ``--reb-resume`` does), refuses what cannot be one run, and
writes ``outcomes.jsonl`` and ``summary.json`` into a new run folder through
the same ``summary.build`` a single run uses.

Refused, with the runs and keys named:

* strict and compat runs together: their verdicts answer different questions;
* one key with different verdicts in two runs (a pair run on two shards that
  disagree): which one is true is not the merge's to decide.  The same key
  with the same verdict (a shard given twice, a rerun) is kept once.

"Identical to a single run" is what ``comparable`` keeps: statuses,
categories, both verdicts, messages, short evidence, per-agent and total
tallies.  It drops what two runs of the same work never share: run ids,
when the summary was written, durations, and the pids of GPU holders.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.report import summary

OUTCOMES = "outcomes.jsonl"
SUMMARY = "summary.json"

#: Summary keys whose values differ between two runs of the same work.
VOLATILE = frozenset({"run_id", "written", "duration", "mean_duration"})


class MergeError(ValueError):
    """Runs that cannot be joined into one, with what to do about it."""


@dataclass(frozen=True)
class RunFolder:
    """One run's folder as ``reb merge`` reads it."""

    path: Path
    mode: str | None  # "strict", "compat", or None when nothing shows it
    outcomes: dict[str, Outcome]


def read_run(path: Path) -> RunFolder:
    """The latest outcome of each key in ``path/outcomes.jsonl``, and the run's mode."""
    log = path / OUTCOMES
    if not log.is_file():
        raise MergeError(f"{path}: no {OUTCOMES} here (not a pytest-reb run folder)")
    outcomes = OutcomeLog(log).latest()
    return RunFolder(path, run_mode(path, outcomes.values()), outcomes)


def run_mode(path: Path, outcomes: Iterable[Outcome]) -> str | None:
    """The mode ``summary.json`` names, else the one the outcomes show.

    A killed run has no summary; an outcome whose two verdicts differ shows
    which verdict its status followed.  Where they never differ the mode
    changed nothing, and None says so.
    """
    try:
        mode = json.loads((path / SUMMARY).read_text(encoding="utf-8")).get("mode")
    except (OSError, ValueError, AttributeError):
        mode = None
    if mode in ("strict", "compat"):
        return str(mode)
    for o in outcomes:
        if o.status != "skipped" and None not in (o.strict, o.compat) and o.strict != o.compat:
            return "strict" if (o.status == "passed") == o.strict else "compat"
    return None


def verdict(o: Outcome) -> dict[str, Any]:
    """What two runs must agree on about one key; timings and captured output may differ."""
    return {"status": o.status, "category": o.category, "strict": o.strict,
            "compat": o.compat, "agent": o.agent, "findings": o.findings}


def _describe(o: Outcome) -> str:
    return o.status + (f" ({o.category})" if o.category else "")


def merge(paths: Sequence[Path]) -> tuple[list[Outcome], str]:
    """The outcomes of all runs, one per key and sorted by key, and their common mode."""
    resolved = [p.resolve() for p in paths]
    twice = sorted({str(p) for p in paths if resolved.count(p.resolve()) > 1})
    if twice:
        raise MergeError(f"run folder(s) named twice: {', '.join(twice)}")
    runs = [read_run(p) for p in paths]
    modes = {r.mode for r in runs if r.mode}
    if len(modes) > 1:
        listed = ", ".join(f"{r.path} ({r.mode or 'either'})" for r in runs)
        raise MergeError(f"cannot merge strict and compat runs: {listed}; rerun the odd ones "
                         "in the other mode (--reb-compat), or merge each mode apart")
    merged: dict[str, Outcome] = {}
    source: dict[str, Path] = {}
    conflicts: list[str] = []
    for run in runs:
        for key, o in run.outcomes.items():
            seen = merged.get(key)
            if seen is not None and verdict(seen) != verdict(o):
                conflicts.append(f"{key}: {source[key]} has {_describe(seen)}, "
                                 f"{run.path} has {_describe(o)}")
            elif seen is None or o.started > seen.started:
                merged[key], source[key] = o, run.path
    if conflicts:
        raise MergeError(f"{len(conflicts)} outcome(s) differ between runs (a pair ran on two "
                         "shards; rerun it once, or leave one run out):\n  "
                         + "\n  ".join(conflicts))
    return [merged[k] for k in sorted(merged)], modes.pop() if modes else "strict"


def write(paths: Sequence[Path], out: Path) -> dict[str, Any]:
    """Merge ``paths`` into the new run folder ``out``; returns its summary."""
    if out.resolve() in {p.resolve() for p in paths}:
        raise MergeError(f"--out {out} is one of the runs; give a new folder")
    if (out / OUTCOMES).exists():
        raise MergeError(f"--out {out} already holds a run; give a new folder")
    outcomes, mode = merge(paths)
    if not outcomes:  # what `reb table` would refuse: say so before writing an empty run
        raise MergeError(f"no valid outcome in {', '.join(str(p) for p in paths)}")
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(o.to_json(), sort_keys=True) + "\n" for o in outcomes)
    _write_atomic(out / OUTCOMES, lines)
    data = summary.build(outcomes, run_id=out.name, compat=mode == "compat")
    _write_atomic(out / SUMMARY, json.dumps(data, indent=2, sort_keys=True))
    return data


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- comparing runs


def comparable(data: Any) -> Any:
    """A summary without what differs between two runs of the same work.

    ``VOLATILE`` keys go at every depth; ``gpu_holders`` (pid -> GPUs) keeps
    only the GPU sets held, sorted; ``targets`` becomes a mapping by target
    and repository so a difference is named, not numbered.
    """
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key in VOLATILE:
                continue
            if key == "gpu_holders" and isinstance(value, dict):
                out[key] = sorted(sorted(v) if isinstance(v, list) else v for v in value.values())
            elif key == "targets" and isinstance(value, list):
                out[key] = {f"{t.get('target')} ({t.get('repo')})": comparable(t)
                            for t in value if isinstance(t, dict)}
            else:
                out[key] = comparable(value)
        return out
    if isinstance(data, list):
        return [comparable(v) for v in data]
    return data


def summary_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Every place two summaries differ once ``comparable``; empty when they are the same run."""
    diffs: list[str] = []
    _diff(comparable(a), comparable(b), "", diffs)
    return diffs


def _diff(a: Any, b: Any, where: str, diffs: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            here = f"{where}.{key}" if where else str(key)
            if key not in a:
                diffs.append(f"{here}: only in the second")
            elif key not in b:
                diffs.append(f"{here}: only in the first")
            else:
                _diff(a[key], b[key], here, diffs)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{where}[{i}]", diffs)
    elif a != b:
        diffs.append(f"{where}: {a!r} != {b!r}")
