"""C2 and C3 of real repositories on a GPU machine with no Docker, beside the official stages.

    python tests/realruns/gpu_repos.py OUT PACKS BUNDLES OWNER/NAME ... [--budget-s S]

For each repository, in order, until ``--budget-s`` seconds have passed:

1. its checkout at the pinned commit, from ``PACKS/<owner>+<name>.pack``
   (``gpu_pack.py``), linked at ``/data/project/repo`` for the stand-in makers;
2. its row's stand-in assets (``table.py``'s ``standin``), made by the
   repository's own code under this machine's ``python3`` (``docker_local.py``
   stands in for ``docker run``), into one asset cache;
3. pytest-reb C2 and C3 through its ``repos/`` module and ``--reb-host=local://``,
   strict, then ``--reb-compat``;
4. the official bundle (``BUNDLES/scripts/<owner>@<name>/benchmark_scripts``,
   from the release) copied into the checkout, with a report of this
   machine's interpreter (``SCIMLOPSBENCH_REPORT``): its ``prepare`` (no network there),
   ``cuda`` and ``single_gpu`` stages, each verdict read from its results.json.

Each record (outcomes without output tails, the official verdicts, what the
stand-in step said) is appended to ``OUT/repos.jsonl`` as soon as it exists.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import gpu_pack  # noqa: E402
from official import stage_verdict  # noqa: E402
from table import find  # noqa: E402

WORK = Path("/tmp/reb-real")
ASSETS = WORK / "assets"
REPORT = WORK / "report.json"  # named by SCIMLOPSBENCH_REPORT, as the bundle's runner reads
OFFICIAL_STAGES = {"prepare": (["bash", "benchmark_scripts/prepare_assets.sh"], 120),
                   "cuda": (["python3", "benchmark_scripts/check_cuda_available.py"], 120),
                   "single_gpu": (["bash", "benchmark_scripts/run_single_gpu_entrypoint.sh"],
                                  300)}
#: The stage time limits scaled down so one hang costs at most this share of a call.
TIMEOUT_SCALE = "0.3"


def module_of(repo: str) -> Path:
    return next(ROOT.glob(f"repos/test_{repo.replace('/', '__').replace('-', '_')}.py"))


def plugin_option() -> list[str]:
    from importlib.metadata import entry_points

    installed = any(e.name == "reb" for e in entry_points(group="pytest11"))
    return [] if installed else ["-p", "pytest_reb.plugin.hooks"]


def docker_on_path() -> None:
    """``docker`` on PATH is ``docker_local.py``, and the images' venv python is python3."""
    bindir = WORK / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    shim = bindir / "docker"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "docker_local.py"} "$@"\n')
    shim.chmod(0o755)
    os.environ["PATH"] = f"{bindir}:{os.environ['PATH']}"
    os.environ["REB_LOCAL_PYTHON"] = sys.executable


def standins(repo: str, checkout: Path) -> str:
    """The row's stand-ins made into ASSETS; what happened, in a line."""
    row = find(repo)
    if not row.standin:
        return "none"
    link = Path("/data/project/repo")
    if link.is_symlink():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(checkout)
    module_name, _, function = row.standin.rpartition(":")
    module = importlib.import_module(module_name or "standin")
    try:
        getattr(module, function)("local", ASSETS)
    except Exception as exc:  # a stand-in the machine cannot make: the stage says what lacks
        return f"{row.standin}: {type(exc).__name__}: {str(exc)[:300]}"
    return row.standin


def ours(repo: str, checkout: Path, compat: bool) -> list[dict[str, Any]]:
    """pytest-reb C2 and C3 of ``repo``; its outcomes without output tails."""
    outdir = WORK / "runs" / repo.replace("/", "+") / ("compat" if compat else "strict")
    argv = [sys.executable, "-m", "pytest", *plugin_option(), "-p", "no:cacheprovider",
            "--rootdir", str(ROOT), "--reb-host=local://", "--reb-python", sys.executable,
            "--reb-repo-dir", str(checkout), "--reb-assets", str(ASSETS),
            "--reb-outdir", str(outdir), f"--reb-timeout-scale={TIMEOUT_SCALE}",
            "-m", "c2 or c3", "-q", "-rA", str(module_of(repo)),
            *(["--reb-compat"] if compat else [])]
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=420)
        print(done.stdout[-2500:], done.stderr[-1000:], sep="\n", flush=True)
    except subprocess.TimeoutExpired:
        return [{"repo": repo, "tier": "c3", "status": "driver_timeout"}]
    found = [json.loads(line) for p in outdir.glob("*/outcomes.jsonl")
             for line in p.read_text().splitlines() if line]
    return [{k: v for k, v in o.items() if k not in ("stdout_tail", "stderr_tail")}
            for o in found] or [{"repo": repo, "status": "no_outcome",
                                 "pytest_exit": done.returncode}]


def official(repo: str, checkout: Path, bundles: Path) -> dict[str, Any]:
    """The official prepare, cuda and single_gpu stages in the checkout; their verdicts."""
    owner, name = repo.split("/")
    src = bundles / "scripts" / f"{owner}@{name}" / "benchmark_scripts"
    shutil.copytree(src, checkout / "benchmark_scripts", dirs_exist_ok=True)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    import torch

    REPORT.write_text(json.dumps({
        "python_path": sys.executable, "python_version": platform.python_version(),
        "torch_version": torch.__version__, "cuda_available": torch.cuda.is_available(),
        "gpu_count": torch.cuda.device_count(), "ddp_expected_ok": None, "env_tool": "none",
        "env_name": None, "notes": "the GPU machine's own python3 (gpu_repos.py)"}))
    env = {**os.environ, "SCIMLOPSBENCH_PYTHON": sys.executable,
           "SCIMLOPSBENCH_REPORT": str(REPORT)}
    verdicts: dict[str, Any] = {}
    for stage, (argv, limit) in OFFICIAL_STAGES.items():
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(["timeout", str(limit), *argv], cwd=checkout, env=env,
                           capture_output=True, timeout=limit + 30)
        results = checkout / "build_output" / stage / "results.json"
        try:
            verdicts[stage] = stage_verdict(json.loads(results.read_text()))
        except (OSError, ValueError):
            verdicts[stage] = {"status": "absent"}
    return verdicts


def main() -> None:
    args = sys.argv[1:]
    budget = float(args.pop(args.index("--budget-s") + 1)) if "--budget-s" in args else 540
    if "--budget-s" in args:
        args.remove("--budget-s")
    out, packs, bundles, *repos = args
    start = time.monotonic()
    Path(out).mkdir(parents=True, exist_ok=True)
    docker_on_path()
    ASSETS.mkdir(parents=True, exist_ok=True)
    with (Path(out) / "repos.jsonl").open("a") as sink:
        def emit(record: dict[str, Any]) -> None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()

        for repo in repos:
            if time.monotonic() - start > budget:
                emit({"repo": repo, "skipped": "out of this call's time"})
                continue
            slug = repo.replace("/", "+")
            checkout = gpu_pack.unpack(Path(packs) / f"{slug}.pack", WORK / slug / "repo")
            record: dict[str, Any] = {"repo": repo, "standin": standins(repo, checkout)}
            record["strict"] = ours(repo, checkout, compat=False)
            emit({**record, "part": "strict"})
            if time.monotonic() - start < budget:
                record["compat"] = ours(repo, checkout, compat=True)
                emit({"repo": repo, "part": "compat", "compat": record["compat"]})
            if time.monotonic() - start < budget:
                emit({"repo": repo, "part": "official",
                      "official": official(repo, checkout, Path(bundles))})
            print("==", repo, [(o.get("tier"), o.get("status"), o.get("category"))
                               for o in record["strict"]], flush=True)


if __name__ == "__main__":
    main()
