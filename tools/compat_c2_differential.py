"""Compat C2 against each bundle's official cuda stage: same interpreter, same verdict.

``--reb-compat`` passes C2 on what the official ``check_cuda_available.py``
trusts, ``torch.cuda.is_available()``, so a spoofed answer passes in both; and
the official validators read the cuda stage's ``observed`` block, so our
official-layout writer must write what the official stage writes.  This tool
runs, for every bundle and every stand-in interpreter (``compat_cases``:
CUDA builds with 1 and 2 devices, a CPU build, a patched ``is_available()``,
no torch, a torch that fails to import, a probe that printed success and then
exited 1, and the non-Python scripts), the bundle's official cuda check as
``run_all.sh`` runs it and pytest-reb's C2 probe, and compares the verdict as
``run_all.sh`` reads it (``results.json``: status, exit code) and the
``observed`` block's ``cuda_available`` and ``gpu_count``.

``python tools/compat_c2_differential.py --official DIR [--show K]``.  The
C1/C3/C4 verdicts are not run here: the official entrypoints need each
research repository, its assets and GPUs (docs/tiers.md, compat section).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
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
from pytest_reb.rules.c2_compat import C2Variant, official_c2  # noqa: E402

#: The C5 stand-ins and two more: success printed, then the process failed.
C2_VENVS: dict[str, Torch | None] = {
    **VENVS,
    "exits1": Torch("2.4.0+cu124", True, 2, exit_after=1),
    "exits1_cpu": Torch("2.4.0", False, 0, cuda_build=None, exit_after=1),
    "spoof2": Torch("2.4.0", True, 2, cuda_build=None),  # is_available and device_count patched
}
PROBE = ROOT / "pytest_reb" / "pyramid" / "probes" / "cuda_probe.py"
MEASURES = ("verdict", "cuda_available", "gpu_count")


def env_without_ours() -> dict[str, str]:
    """This process's environment, less what would leak pytest-reb into the interpreters."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCIMLOPSBENCH_PYTHON")}


def official(checkout: Path, python: str) -> dict[str, Any]:
    """The bundle's cuda stage as ``run_all.sh`` runs and reads it (the report names ``python``)."""
    out = checkout / "build_output" / "cuda"
    shutil.rmtree(out, ignore_errors=True)
    report = checkout / "report.json"  # some checks take the interpreter from the report
    report.write_text(json.dumps({"python_path": python}))
    env = {**env_without_ours(), "SCIMLOPSBENCH_PYTHON": python,
           "SCIMLOPSBENCH_REPORT": str(report)}
    # run_all.sh goes on whatever the exit: the stage is what results.json says, or failure
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([python, "benchmark_scripts/check_cuda_available.py"], cwd=checkout,
                       env=env, capture_output=True, text=True, timeout=120)
    try:
        data = json.loads((out / "results.json").read_text())
    except (OSError, ValueError):
        data = None
    return view(data)


def view(data: object) -> dict[str, Any]:
    """Verdict (``read_stage_outcome`` of ``run_all.sh``) and the observed pair.

    The block is read where the bundle's check puts it: at the top, or (one
    bundle) under ``meta``; our writer puts it in both.
    """
    if not isinstance(data, dict):
        return {"verdict": "failure", "cuda_available": None, "gpu_count": None}
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
    return {"verdict": verdict, "cuda_available": observed.get("cuda_available"),
            "gpu_count": observed.get("gpu_count")}


def probe(python: str) -> tuple[dict[str, Any] | None, int | None]:
    """pytest-reb's C2 probe under an interpreter: its JSON line and exit status."""
    try:
        res = subprocess.run([python, str(PROBE)], env=env_without_ours(), capture_output=True,
                             text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None, None
    return parse(res.stdout), res.returncode


def ours(seen: tuple[dict[str, Any] | None, int | None], variant: C2Variant) -> dict[str, Any]:
    """The probe's evidence judged by the bundle's ``c2_compat`` and written as compat does."""
    obs, exit_code = seen
    official = official_c2(obs, exit_code, variant)
    o = Outcome(repo="diff/case", target="local://", tier="c2",
                status="passed" if official.passed else "failed", compat=official.passed,
                evidence={"observed": obs, "official_cuda": {
                    "written": official.written, "observed": official.observed}})
    return view(stage_results(o, "compat"))


def run(official_dir: Path) -> list[dict[str, Any]]:
    """Every bundle's cuda check and ours, under every stand-in interpreter."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="reb-c2-diff-") as tmp:
        interp = build_interpreters(Path(tmp), C2_VENVS)
        seen = {name: probe(path) for name, path in interp.items()}
        for script in sorted((official_dir / "scripts").glob("*/benchmark_scripts")):
            bundle = script.parent.name
            checkout = Path(tmp) / "checkouts" / bundle
            shutil.copytree(script, checkout / "benchmark_scripts")
            variant = load_repo(bundle).c2_compat
            for name, path in interp.items():
                rows.append({"bundle": bundle, "python": name,
                             "official": official(checkout, path),
                             "ours": ours(seen[name], variant)})
    return rows


def same(row: dict[str, Any], measure: str) -> bool:
    """Agreement on one measure (a count of ``True`` is 1, as the validators read it)."""
    a, b = row["official"][measure], row["ours"][measure]
    return a == b and type(a) is type(b) if measure != "verdict" else a == b


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
    lines.append(f"interpreters: {', '.join([*C2_VENVS, *SCRIPTS, 'noexec', 'dir', 'missing'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--official", type=Path, required=True,
                        help="a checkout of the official release (holds scripts/)")
    parser.add_argument("--show", type=int, default=0, help="print this many disagreements")
    args = parser.parse_args(argv)
    rows = run(args.official)
    print(figures(rows))
    wrong = [r for r in rows if not all(same(r, m) for m in MEASURES)]
    for row in wrong[: args.show]:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
