"""The compat C5 audit against the official validators: same inputs, compare every count.

``--reb-compat`` exists so that numbers can be set beside the paper's, so its
C5 audit must count what each of the 44 official ``validate_agent_report.py``
scripts counts.  This tool generates cases for every bundle (a report with
every field varied, or no report, or not an object; stage results written by
pytest-reb's official-layout writer for varied C1-C4 outcomes; real
interpreters: venvs with a stand-in ``torch`` of a chosen version, scripts,
directories, relative and padded paths), runs each through the bundle's
official validator as ``run_all.sh`` runs it (the checkout as working
directory, ``SCIMLOPSBENCH_REPORT`` set) and through pytest-reb's compat audit
(``observe_python`` on this machine, ``audit`` with the module's
``Repo.c5_compat``), and prints the agreement per count and on pass/fail, per
bundle and overall.

It needs the official release, which is never part of this project:
``python tools/compat_differential.py --official DIR`` where ``DIR`` is a
checkout of it (``DIR/scripts/<owner>@<repo>/benchmark_scripts``).  ``--dump``
writes every case with both results and our observations, ``--replay`` judges
a dump again with the current rules (no official run), ``--fit`` proposes per
bundle the variant that agrees best (a development aid, read against the
official script before a module states it), and ``--table`` writes the cases
that agree, and the declared departures, as the table of
``tests/test_audit_compat_cases.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import typing
from collections import Counter, defaultdict
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_reb.outcome import Outcome  # noqa: E402
from pytest_reb.pyramid.c5_observe import Invocation, PythonObservation, observe_python  # noqa: E402
from pytest_reb.report.official import STAGES, stage_results  # noqa: E402
from pytest_reb.rules.c5 import audit  # noqa: E402
from pytest_reb.rules.c5_compat import compat_path  # noqa: E402
from pytest_reb.selfreport import load_report  # noqa: E402
from pytest_reb.spec import CompatVariant, Repo  # noqa: E402
from pytest_reb.targets import LocalTarget  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from compat_cases import BASE_PYTHON, WORK, Case, build_interpreters, cases  # noqa: E402

KINDS = ("path", "version", "capability")
#: What a case is compared on: the three counts and the verdict.
MEASURES = (*KINDS, "passed")
#: Variants that read the path otherwise: which other interpreter paths a case needs observed.
STRIP = CompatVariant(strip_path=True)
TEXT = CompatVariant(strip_path=True, path_text=True)
MAJORITY = CompatVariant()
#: The values ``--fit`` tries for each field of ``CompatVariant`` (a set of failure
#: categories is not tried: it is read from the script).
CHOICES: dict[str, tuple[Any, ...]] = {
    f.name: ((1, 2) if f.name.endswith("_weight") else
             (0, 1, 2) if f.type == "int" else
             (None, 0) if f.type == "int | None" else
             (False, True) if f.type == "bool" else
             () if f.type.startswith("frozenset") else
             tuple(typing.get_args(typing.get_type_hints(CompatVariant)[f.name])))
    for f in dataclasses.fields(CompatVariant)}

# --------------------------------------------------------------------------- running


def outcome(tier: str, fields: Mapping[str, Any]) -> Outcome:
    """The ``Outcome`` of a case's tier (the writer's and the audit's input)."""
    return Outcome(repo="diff/case", target="local://", tier=tier, **fields)


def official(case: Case, checkout: Path, report: Path) -> dict[str, Any]:
    """Run the bundle's validator on the case; its counts and verdict as M5 reads them.

    Where the bundle's cuda check never ends on this interpreter (``compat_c2``'s
    ``hang``, read from its ``run_all.sh`` by ``compat_c2_differential``), the
    official run stops there and its validator never runs: nothing is counted.
    """
    cuda = case.stages.get("c2", {}).get("evidence", {}).get("official_cuda", {})
    if cuda.get("hangs"):
        return {"crashed": True, "rc": None, **dict.fromkeys(KINDS, 0), "passed": False}
    out = checkout / "build_output"
    shutil.rmtree(out, ignore_errors=True)
    for tier, fields in case.stages.items():
        data = stage_results(outcome(tier, fields), "compat")
        if data is None:
            continue  # the official stage leaves no results.json: neither does our writer
        path = out / STAGES[tier] / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    report.unlink(missing_ok=True)
    if case.report is not None:
        report.write_text(case.report)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCIMLOPSBENCH_PYTHON")}
    env["SCIMLOPSBENCH_REPORT"] = str(report)
    proc = subprocess.run([BASE_PYTHON, "benchmark_scripts/validate_agent_report.py"],
                          cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
    try:
        data = json.loads((out / "hallucination" / "results.json").read_text())
    except (OSError, ValueError):
        data = None
    result: dict[str, Any] = {"crashed": data is None, "rc": proc.returncode}
    halls = data.get("hallucinations") if isinstance(data, dict) else None
    for kind in KINDS:
        block = halls.get(kind) if isinstance(halls, dict) else None
        value = block.get("count") if isinstance(block, dict) else 0
        result[kind] = value if isinstance(value, int) else 0
    result["passed"] = isinstance(data, dict) and data.get("status") == "success"
    if data is None:
        result["stderr"] = proc.stderr[-300:]
    return result


_OBSERVED: dict[tuple[str, str], PythonObservation] = {}


def observations(case: Case, checkout: Path) -> dict[str, PythonObservation]:
    """The interpreter as claimed and as stripped, observed here (each path once per run)."""
    load = load_report(case.report.encode() if case.report is not None else None, source="r")
    paths = {compat_path(load.data, v) for v in (STRIP, TEXT, MAJORITY)} - {None}
    found = {}
    for path in sorted(p for p in paths if p is not None):
        key = (path, str(checkout))
        if key not in _OBSERVED:
            _OBSERVED[key] = observe_python(LocalTarget(gpus=[]), path, checkout=str(checkout))
        found[path] = _OBSERVED[key]
    return found


def judge(report: str | None, stages: Mapping[str, Mapping[str, Any]], variant: CompatVariant,
          seen: Mapping[str, PythonObservation]) -> dict[str, Any]:
    """pytest-reb's compat audit of a case, on the interpreters observed for it."""
    load = load_report(report.encode() if report is not None else None, source="report.json")
    path = compat_path(load.data, variant)
    python = seen.get(path) if path is not None else None
    outcomes = {t: outcome(t, f) for t, f in stages.items()}
    result = audit(load, python, outcomes, compat=True, variant=variant)
    return {**result.counts, "passed": result.passed,
            "rules": sorted(f.rule for f in result.findings) + (  # and where it stops, why
                [str(result.report_message)] if result.report_category == "unknown" else [])}


def observation_of(data: Mapping[str, Any]) -> PythonObservation:
    """A ``PythonObservation`` back from its JSON (as dumped and as the test table holds it)."""
    fields = dict(data)
    for key in ("official_version", "official_torch", "official_torch_json"):
        if isinstance(fields.get(key), dict):
            fields[key] = Invocation(**fields[key])
    return PythonObservation(**fields)


def rejudge(rows: list[dict[str, Any]], variants: Mapping[str, CompatVariant]) -> None:
    """Judge dumped cases again with the current rules and ``variants`` (bundle -> variant)."""
    for row in rows:
        seen = {p: observation_of(o) for p, o in row["observations"].items()}
        case = row["case"]
        row["ours"] = judge(case["report"], case["stages"], variants[case["bundle"]], seen)


def agreement(rows: list[dict[str, Any]], variant: CompatVariant) -> int:
    """How many measures of ``rows`` (one bundle's) the audit under ``variant`` gets right."""
    good = 0
    for row in rows:
        seen = {p: observation_of(o) for p, o in row["observations"].items()}
        case = row["case"]
        mine = judge(case["report"], case["stages"], variant, seen)
        good += sum(mine[m] == row["official"][m] for m in MEASURES)
    return good


def fit(rows: list[dict[str, Any]], start: CompatVariant) -> CompatVariant:
    """The variant closest to one bundle's validator: one field at a time, while it improves.

    A development aid: what it proposes is read against the official script
    before a ``repos/`` module states it.
    """
    found = [_descend(rows, s) for s in {start, MAJORITY}]
    return max(found, key=lambda f: (f[1], f[0] == start))[0]


def _descend(rows: list[dict[str, Any]], start: CompatVariant) -> tuple[CompatVariant, int]:
    best, score = start, agreement(rows, start)
    improved = True
    while improved:
        improved = False
        for f in dataclasses.fields(CompatVariant):
            for value in CHOICES[f.name]:
                if getattr(best, f.name) == value:
                    continue
                trial = dataclasses.replace(best, **{f.name: value})
                s = agreement(rows, trial)
                if s > score:
                    best, score, improved = trial, s, True
    return best, score


def load_repo(bundle: str) -> Repo:
    """The ``repos/`` module of a bundle (``owner@name``)."""
    owner, name = bundle.split("@", 1)
    stem = "test_" + "__".join(p.replace("-", "_").replace(".", "_") for p in (owner, name))
    path = ROOT / "repos" / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(f"_reb_diff.{stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.repo  # type: ignore[no-any-return]


def checkout_of(scratch: Path, work: Path, official_dir: Path, bundle: str) -> Path:
    """A checkout holding the bundle's scripts and the relative interpreter, made once."""
    checkout = scratch / "checkouts" / bundle
    if not checkout.exists():
        shutil.copytree(official_dir / "scripts" / bundle / "benchmark_scripts",
                        checkout / "benchmark_scripts")
        (checkout / ".venv").symlink_to(work / "venv" / "cu2")
    return checkout


def run_chunk(args: tuple[list[Case], str, str]) -> list[dict[str, Any]]:
    """One worker's cases (each worker has its own checkouts and report file)."""
    chunk, work_s, official_s = args
    work, official_dir = Path(work_s), Path(official_s)
    rows = []
    scratch = Path(tempfile.mkdtemp(dir=work))
    for case in chunk:
        checkout = checkout_of(scratch, work, official_dir, case.bundle)
        repo = load_repo(case.bundle)
        theirs = official(case, checkout, scratch / "report.json")
        seen = observations(case, checkout)
        rows.append({"case": case.__dict__, "official": theirs,
                     "ours": judge(case.report, case.stages, repo.c5_compat, seen),
                     "observations": {p: o.to_json() for p, o in seen.items()}})
    return rows


# --------------------------------------------------------------------------- figures


#: Official bugs compat does not reproduce: bundle -> (the tiers whose exit code 0 the
#: bug reads as 1, why it is not reproduced).  Listed in docs/tiers.md's compat section.
DEPARTURES: dict[str, tuple[tuple[str, ...], str]] = {
    "NVIDIA@kvpress": (("c2", "c4"), "int(exit_code or 1) reads a successful cuda or "
                       "multi_gpu stage as failed: every true cuda_available claim, and every "
                       "ddp_expected_ok claim on >= 2 GPUs, is counted"),
    "GeeeekExplorer@nano-vllm": (("c4",), "int(exit_code or 1) reads a successful multi_gpu "
                                 "stage as failed: every ddp_expected_ok claim on >= 2 GPUs "
                                 "is counted"),
}


def departure(row: Mapping[str, Any]) -> str | None:
    """The declared departure a disagreement is, or None.

    A case is one when ours and the official counts differ, and the official
    counts are what compat gives once the bug's misreading is applied to the
    stages (their success turned into failure).
    """
    case = row["case"]
    declared = DEPARTURES.get(case["bundle"])
    if declared is None or all(row["official"][m] == row["ours"][m] for m in MEASURES):
        return None
    tiers, why = declared
    stages = {t: ({**f, "status": "failed", "category": "unknown", "compat": False}
                  if t in tiers and f.get("status") == "passed" else f)
              for t, f in case["stages"].items()}
    seen = {p: observation_of(o) for p, o in row["observations"].items()}
    buggy = judge(case["report"], stages, load_repo(case["bundle"]).c5_compat, seen)
    return f"{case['bundle']}: {why}" if all(
        buggy[m] == row["official"][m] for m in MEASURES) else None


def table(rows: list[dict[str, Any]], per_bundle: int) -> dict[str, Any]:
    """The test table: per bundle, up to ``per_bundle`` agreeing cases, departures too.

    A bundle's cases are taken greedily by what they add (a rule the audit
    applied or where it stops first; then an interpreter, a count not yet pinned),
    so a rule that fires seldom is pinned too.  A disagreement is a figure,
    not a test: the table pins what agrees.
    """
    picked: list[dict[str, Any]] = []
    for bundle in sorted({r["case"]["bundle"] for r in rows}):
        repo = load_repo(bundle).name
        mine = [(i, r, departure(r)) for i, r in
                enumerate(r for r in rows if r["case"]["bundle"] == bundle)]
        chosen = [e for e in mine if e[2] is not None]
        left = [e for e in mine if e[2] is None and
                all(e[1]["official"][m] == e[1]["ours"][m] for m in MEASURES)]
        covered: set[str] = set()
        for _ in range(per_bundle):
            best = max(left, key=lambda e: tuple(len(part - covered)
                                                  for part in _behaviour(e[1])), default=None)
            if best is None:
                break
            chosen.append(best)
            left.remove(best)
            covered |= set().union(*_behaviour(best[1]))
        for i, row, why in sorted(chosen, key=lambda e: e[0]):
            case, theirs = row["case"], row["official"]
            picked.append({"bundle": bundle, "repo": repo, "id": i, "label": case["label"],
                           "report": case["report"], "stages": case["stages"],
                           "observations": row["observations"],
                           "official": {m: theirs[m] for m in MEASURES},
                           **({"departure": why} if why else {})})
    return {"source": "tools/compat_differential.py --table against the official "
                      "validate_agent_report.py of each bundle (No-518/ResearchEnvBench 7db4ca7)",
            "cases": picked}


def _behaviour(row: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """What a case exercised: first the audit's rules (and why it stops), then the rest."""
    theirs = row["official"]
    return set(row["ours"]["rules"]), {f"stopped={theirs['crashed']}", row["case"]["label"],
                                       *(f"{m}={theirs[m]}" for m in MEASURES),
                                       *row["case"]["stages"]}


def figures(rows: list[dict[str, Any]]) -> str:
    """Agreement per measure, per bundle and overall; declared departures apart."""
    per: dict[str, Counter[str]] = defaultdict(Counter)
    departures: Counter[str] = Counter()
    for row in rows:
        bundle = row["case"]["bundle"]
        why = departure(row)
        if why is not None:
            departures[why] += 1
            continue
        per[bundle]["cases"] += 1
        for m in MEASURES:
            per[bundle][m] += row["official"][m] == row["ours"][m]
        per[bundle]["all"] += all(row["official"][m] == row["ours"][m] for m in MEASURES)
    lines = [f"{'bundle':44} {'cases':>5} " + " ".join(f"{m:>10}" for m in (*MEASURES, "all"))]
    total: Counter[str] = Counter()
    for bundle in sorted(per):
        c = per[bundle]
        total.update(c)
        lines.append(f"{bundle:44} {c['cases']:5} " + " ".join(
            f"{100 * c[m] / c['cases']:9.1f}%" for m in (*MEASURES, "all")))
    n = total["cases"] or 1
    lines.append(f"{'overall (' + str(len(per)) + ' bundles)':44} {total['cases']:5} " + " ".join(
        f"{100 * total[m] / n:9.1f}%" for m in (*MEASURES, "all")))
    crashed = sum(r["official"]["crashed"] for r in rows)
    lines.append(f"official validator wrote no results in {crashed} case(s) "
                 "(counted as M5 reads them: 0, failure)")
    lines.append(f"declared departures, left out of the figures: {sum(departures.values())}")
    lines.extend(f"  {n:5}  {why}" for why, n in sorted(departures.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--official", type=Path,
                        help="a checkout of the official release (holds scripts/)")
    parser.add_argument("--cases", type=int, default=2640, help="how many cases (all bundles)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    parser.add_argument("--bundle", action="append", help="only these bundles (owner@name)")
    parser.add_argument("--dump", type=Path, help="write every case and both results as JSON")
    parser.add_argument("--replay", type=Path,
                        help="judge a --dump again with the current rules (no official run)")
    parser.add_argument("--fit", action="store_true",
                        help="propose, per bundle, the variant that agrees best (development aid)")
    parser.add_argument("--table", type=Path,
                        help="write the test table (tests/data/compat_cases.json) from the cases")
    parser.add_argument("--show", type=int, default=0, help="print this many disagreements")
    args = parser.parse_args(argv)
    if args.replay:
        rows = json.loads(args.replay.read_text())
        bundles = sorted({r["case"]["bundle"] for r in rows})
        rejudge(rows, {b: load_repo(b).c5_compat for b in bundles})
    elif args.official:
        rows = run_official(args)
    else:
        parser.error("give --official DIR (or --replay DUMP)")
    print(figures(rows))
    wrong = [r for r in rows if departure(r) is None and
             any(r["official"][m] != r["ours"][m] for m in MEASURES)]
    for row in wrong[: args.show]:
        print(json.dumps({k: row[k] for k in ("case", "official", "ours")}))
    if args.fit:
        for bundle in sorted({r["case"]["bundle"] for r in rows}):
            mine = [r for r in rows if r["case"]["bundle"] == bundle and departure(r) is None]
            stated = load_repo(bundle).c5_compat
            best = fit(mine, stated)
            if best != stated:
                changes = {f.name: getattr(best, f.name) for f in dataclasses.fields(best)
                           if getattr(best, f.name) != getattr(MAJORITY, f.name)}
                print(f"fit {bundle}: {agreement(mine, stated)} -> {agreement(mine, best)} "
                      f"of {len(mine) * len(MEASURES)}: CompatVariant({changes})")
    if args.dump:
        args.dump.write_text(json.dumps(rows, indent=1))
    if args.table:
        args.table.write_text(json.dumps(table(rows, 8), indent=1, sort_keys=True) + "\n")
    return 0


def run_official(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Generate the cases and run each through the official validator and through compat."""
    scripts = args.official / "scripts"
    bundles = sorted(p.parent.parent.name
                     for p in scripts.glob("*/benchmark_scripts/validate_agent_report.py"))
    if args.bundle:
        bundles = [b for b in bundles if b in args.bundle]
    if not bundles:
        raise SystemExit(f"no bundles under {scripts}")
    with tempfile.TemporaryDirectory(prefix="reb-compat-diff-") as tmp:
        work = Path(tmp)
        interp = build_interpreters(work)
        todo = list(cases(bundles, args.cases, args.seed, interp,
                          {b: load_repo(b).c2_compat for b in bundles}))
        chunks = [todo[i::args.workers] for i in range(args.workers)]
        with ProcessPoolExecutor(args.workers) as pool:
            rows = [r for part in pool.map(run_chunk, [(c, tmp, str(args.official))
                                                       for c in chunks]) for r in part]
    # This run's folder would differ in every run: name it as one absolute path instead.
    return json.loads(json.dumps(rows).replace(tmp, WORK))


if __name__ == "__main__":
    raise SystemExit(main())
