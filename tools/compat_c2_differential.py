"""Compat C2 against each bundle's official cuda stage: same interpreter, same record.

``--reb-compat`` passes C2 on what the official ``check_cuda_available.py``
trusts, ``torch.cuda.is_available()``, so a spoofed answer passes in both; and
the official validators read the cuda stage's ``observed`` block, so our
official-layout writer must write what the official stage writes.  This tool
runs, for every bundle and every stand-in interpreter (``compat_cases``:
CUDA builds with 1 and 2 devices, a CPU build, a patched ``is_available()``,
no torch, a torch that fails to import, a probe that printed success and then
exited 1, a torch whose import aborts the process or never returns, the
non-Python scripts, a file that is not executable, a folder, no such file,
and a report with no ``python_path``), the bundle's own ``run_all.sh`` with
every stage but ``cuda`` stubbed out (so its cuda check runs under the
interpreter, the timeout and the working directory its ``run_all.sh``
chooses), and pytest-reb's C2 probe under the same interpreter; it compares
the verdict as ``run_all.sh`` reads it (``results.json``: status, exit code),
the failure category, and the ``observed`` block's ``cuda_available`` and
``gpu_count`` (``absent`` where the block or the key is missing, ``nofile``
where no ``results.json`` was left, ``hang`` where the stage did not end in
``--hang-after`` seconds).

``python tools/compat_c2_differential.py --official DIR [--show K] [--python NAME]``.
The C1/C3/C4 verdicts are not run here: the official entrypoints need each
research repository, its assets and GPUs (docs/tiers.md, compat section).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from compat_cases import SCRIPTS, VENVS, Torch, build_interpreters  # noqa: E402
from compat_differential import load_repo  # noqa: E402

from pytest_reb.outcome import Outcome  # noqa: E402
from pytest_reb.pyramid.c2_cuda import parse  # noqa: E402
from pytest_reb.report.official import stage_results  # noqa: E402
from pytest_reb.rules.c2_compat import official_c2, situation  # noqa: E402
from pytest_reb.variants import C2Variant  # noqa: E402

#: The C5 stand-ins and more: success printed, then the process failed; an import that
#: kills the process, one that never returns.
C2_VENVS: dict[str, Torch | None] = {
    **VENVS,
    "exits1": Torch("2.4.0+cu124", True, 2, exit_after=1),
    "exits1_cpu": Torch("2.4.0", False, 0, cuda_build=None, exit_after=1),
    "spoof2": Torch("2.4.0", True, 2, cuda_build=None),  # is_available and device_count patched
    "aborts": Torch("2.4.0", True, 2, on_import="abort"),
    "hangs": Torch("2.4.0", True, 2, on_import="hang"),
}
#: The report that names no interpreter (the official checks' own fallbacks decide).
NO_PYTHON = "no python_path"
PROBE = ROOT / "pytest_reb" / "pyramid" / "probes" / "cuda_probe.py"
MEASURES = ("verdict", "category", "cuda_available", "gpu_count")
#: The stage scripts ``run_all.sh`` runs besides the cuda check: stubbed, each a success
#: that writes nothing, so only the cuda stage runs for real.
STUBS = {"run_pyright_missing_imports.sh": "#!/usr/bin/env bash\nexit 0\n",
         "prepare_assets.sh": "#!/usr/bin/env bash\nexit 0\n",
         "run_cpu_entrypoint.sh": "#!/usr/bin/env bash\nexit 0\n",
         "run_single_gpu_entrypoint.sh": "#!/usr/bin/env bash\nexit 0\n",
         "run_multi_gpu_entrypoint.sh": "#!/usr/bin/env bash\nexit 0\n",
         "measure_env_size.py": "raise SystemExit(0)\n",
         "validate_agent_report.py": "raise SystemExit(0)\n",
         "summarize_results.py": "raise SystemExit(0)\n"}
#: How long our probe may run here: a timeout is a timeout whatever its length.
PROBE_TIMEOUT = 20.0


def env_without_ours() -> dict[str, str]:
    """This process's environment, less what would leak pytest-reb into the interpreters."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "SCIMLOPSBENCH_PYTHON", "VIRTUAL_ENV")}


def official(scripts: Path, scratch: Path, python: str | None, hang_after: float) -> dict[str, Any]:
    """The bundle's cuda stage as its ``run_all.sh`` runs and reads it (the report names
    ``python``; None: a report without ``python_path``)."""
    checkout = Path(tempfile.mkdtemp(dir=scratch)) / "repo"
    shutil.copytree(scripts, checkout / "benchmark_scripts")
    for name, body in STUBS.items():
        if (checkout / "benchmark_scripts" / name).exists():
            (checkout / "benchmark_scripts" / name).write_text(body)
    report = checkout.parent / "report.json"
    report.write_text(json.dumps({} if python is None else {"python_path": python}))
    env = {**env_without_ours(), "SCIMLOPSBENCH_REPORT": str(report)}
    try:
        with subprocess.Popen(["bash", "benchmark_scripts/run_all.sh"], cwd=checkout, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) as proc:
            try:
                proc.wait(timeout=hang_after)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)  # the run's own process group, the check's child too
                return {"verdict": "hang", "category": "hang", "cuda_available": "hang",
                        "gpu_count": "hang"}
        try:
            data = json.loads((checkout / "build_output" / "cuda" / "results.json").read_text())
        except FileNotFoundError:
            data = "nofile"
        except ValueError:
            data = None
    finally:
        shutil.rmtree(checkout.parent, ignore_errors=True)
    return view(data)


def view(data: object) -> dict[str, Any]:
    """Verdict (``read_stage_outcome`` of ``run_all.sh``), category and the observed pair.

    The block is read where the bundle's check puts it: at the top, or (one
    bundle) under ``meta``; our writer puts it in both.
    """
    if data == "nofile":
        return dict.fromkeys(MEASURES, "nofile")
    if not isinstance(data, dict):
        return {"verdict": "failure", "category": None, "cuda_available": None,
                "gpu_count": None}
    status = str(data.get("status", "failure"))
    try:
        exit_code = int(data.get("exit_code", 1))
    except (TypeError, ValueError):
        exit_code = 1
    verdict = ("skipped" if status == "skipped" else
               "failure" if status == "failure" or exit_code == 1 else "success")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    observed = data.get("observed", meta.get("observed"))
    observed = observed if isinstance(observed, dict) else {}
    return {"verdict": verdict,
            "category": data.get("failure_category") if verdict == "failure" else None,
            "cuda_available": observed.get("cuda_available", "absent"),
            "gpu_count": observed.get("gpu_count", "absent")}


def probe(python: str | None) -> dict[str, Any]:
    """pytest-reb's C2 probe under an interpreter: what the tier sees of it."""
    if python is None:
        return {"obs": None, "exit_code": None, "how": "no_python"}
    try:
        res = subprocess.run([python, str(PROBE)], env=env_without_ours(), capture_output=True,
                             text=True, timeout=PROBE_TIMEOUT)
        code, out, err, late = res.returncode, res.stdout, res.stderr, False
    except subprocess.TimeoutExpired:
        code, out, err, late = None, "", "", True
    except OSError as exc:  # what the targets report of an interpreter that cannot start
        code, out, err, late = 127, "", f"cannot start: {exc}", False
    how = situation(python=True, exit_code=code, timed_out=late, stdout=out, stderr=err)
    if how == "not_executable" and Path(python).is_dir():
        how = "directory"
    return {"obs": parse(out), "exit_code": code, "how": how}


def ours(seen: dict[str, Any], variant: C2Variant) -> dict[str, Any]:
    """The probe's evidence judged by the bundle's ``c2_compat`` and written as compat does."""
    official = official_c2(seen["obs"], seen["exit_code"], variant, seen["how"])
    if official.hangs:
        return dict.fromkeys(MEASURES, "hang")
    o = Outcome(repo="diff/case", target="local://", tier="c2",
                status="passed" if official.passed else "failed", compat=official.passed,
                category=None if official.passed else "runtime",
                evidence={"observed": seen["obs"], "official_cuda": official.evidence()})
    data = stage_results(o, "compat")
    return view("nofile" if data is None else data)


def run(official_dir: Path, names: list[str] | None, workers: int,
        hang_after: float) -> list[dict[str, Any]]:
    """Every bundle's cuda stage and ours, under every stand-in interpreter."""
    with tempfile.TemporaryDirectory(prefix="reb-c2-diff-") as tmp:
        interp: dict[str, str | None] = {**build_interpreters(Path(tmp), C2_VENVS),
                                         NO_PYTHON: None}
        interp = {n: p for n, p in interp.items() if not names or n in names}
        with ThreadPoolExecutor(workers) as pool:
            seen = dict(zip(interp, pool.map(probe, interp.values()), strict=True))
            bundles = sorted((official_dir / "scripts").glob("*/benchmark_scripts"))
            jobs = [(b, n) for b in bundles for n in interp]
            theirs = pool.map(lambda j: official(j[0], Path(tmp), interp[j[1]], hang_after),
                              jobs)
            rows = [{"bundle": b.parent.name, "python": n, "official": t,
                     "ours": ours(seen[n], load_repo(b.parent.name).c2_compat)}
                    for (b, n), t in zip(jobs, theirs, strict=True)]
    for row in rows:  # our category of a probe that answered is our own, not compared
        if seen[row["python"]]["obs"] is not None:
            row["official"]["category"] = row["ours"]["category"] = "-"
    return rows


def same(row: dict[str, Any], measure: str) -> bool:
    """Agreement on one measure (a count of ``True`` is 1, as the validators read it)."""
    a, b = row["official"][measure], row["ours"][measure]
    return a == b and type(a) is type(b) if measure in ("cuda_available", "gpu_count") \
        else a == b


def figures(rows: list[dict[str, Any]]) -> str:
    """Agreement per measure, per bundle and overall."""
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        c = per[row["bundle"]]
        c["runs"] += 1
        for m in MEASURES:
            c[m] += same(row, m)
    lines = [f"{'bundle':44} {'runs':>4} " + " ".join(f"{m:>14}" for m in MEASURES)]
    total: Counter[str] = Counter()
    for bundle in sorted(per):
        c = per[bundle]
        total.update(c)
        if any(c[m] != c["runs"] for m in MEASURES):
            lines.append(f"{bundle:44} {c['runs']:4} " + " ".join(
                f"{100 * c[m] / c['runs']:13.1f}%" for m in MEASURES))
    n = total["runs"] or 1
    lines.append(f"{'overall (' + str(len(per)) + ' bundles)':44} {total['runs']:4} " + " ".join(
        f"{100 * total[m] / n:13.1f}%" for m in MEASURES))
    names = sorted({row["python"] for row in rows})
    lines.append(f"interpreters: {', '.join(names)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--official", type=Path, required=True,
                        help="a checkout of the official release (holds scripts/)")
    parser.add_argument("--python", action="append",
                        help=f"only these stand-ins (of {', '.join([*C2_VENVS, *SCRIPTS])}, "
                             f"noexec, dir, missing, {NO_PYTHON!r})")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--hang-after", type=float, default=300.0,
                        help="seconds after which a cuda stage counts as never ending")
    parser.add_argument("--dump", type=Path, help="write every run as JSON")
    parser.add_argument("--show", type=int, default=0, help="print this many disagreements")
    args = parser.parse_args(argv)
    rows = run(args.official, args.python, args.workers, args.hang_after)
    print(figures(rows))
    wrong = [r for r in rows if not all(same(r, m) for m in MEASURES)]
    for row in wrong[: args.show]:
        print(json.dumps(row))
    if args.dump:
        args.dump.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
