"""C2 and C3 of real repositories on a GPU machine with no Docker, beside the official stages.

    python tests/realruns/gpu_repos.py OUT PACKS BUNDLES OWNER/NAME ... [--budget-s S]
                                       [--wheels POOL] [--jobs N] [--no-compat-run]

For each repository, until ``--budget-s`` seconds have passed (``--jobs``
repositories at a time, each in a process of its own):

1. its checkout at the pinned commit, from ``PACKS/<owner>+<name>.pack``
   (``gpu_pack.py``), linked at ``/data/project/repo`` for the stand-in makers;
2. its environment: with ``--wheels``, a venv of its own whose one ``.pth`` path
   line adds this machine's site folder (torch and the rest), with the row's
   requirements installed from ``POOL`` (``gpu_wheels.py``: ``<slug>.req``; if pip
   cannot resolve them offline, the wheels of ``<slug>.files`` without their
   dependencies), and the checkout itself where the row installs it; without
   it, this machine's ``python3``;
3. its row's stand-in assets (``table.py``'s ``standin``), made by the
   repository's own code under that interpreter (``docker_local.py`` stands in
   for ``docker run``; files a stand-in reads from another repository at a
   commit come from the packs of ``PACKS/mirror``), into one asset cache, one
   repository at a time;
4. pytest-reb C2 and C3 through its ``repos/`` module and ``--reb-host=local://``
   (each outcome holds both verdicts of its observation); after the official
   stages, unless ``--no-compat-run``, the whole run again with ``--reb-compat``;
5. the official bundle (``BUNDLES/scripts/<owner>@<name>/benchmark_scripts``,
   from the release) copied into the checkout, with a report of that
   interpreter (``SCIMLOPSBENCH_REPORT``): its ``prepare`` (no network there),
   ``cuda`` and ``single_gpu`` stages, each verdict read from its results.json.
   They hold the GPU's lease (``pytest_reb.targets.lease``) as pytest-reb's
   stages do, so no two GPU stages of parallel jobs overlap and each stage's
   GPU activity is its own.

Each record (outcomes, a failure's with the last of its output tails, the official
verdicts, what the stand-in step said) is appended to ``OUT/repos.jsonl`` as soon as it exists.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import site
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from filelock import FileLock

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
import docker_local  # noqa: E402
import gpu_pack  # noqa: E402
from gpu_wheels import holds_numpy1  # noqa: E402
from official import stage_verdict  # noqa: E402
from table import find  # noqa: E402

from pytest_reb.plugin import load_args  # noqa: E402

WORK = Path("/tmp/reb-real")
ASSETS = WORK / "assets"
#: Held while stand-ins are made: their ``docker run`` links fixed paths (/data/project/repo).
STANDIN_LOCK = WORK / "standin.lock"
OFFICIAL_STAGES = {"prepare": (["bash", "benchmark_scripts/prepare_assets.sh"], 120),
                   "cuda": (["python3", "benchmark_scripts/check_cuda_available.py"], 120),
                   "single_gpu": (["bash", "benchmark_scripts/run_single_gpu_entrypoint.sh"],
                                  300)}
#: The stage time limits scaled down so one hang costs at most this share of a call.
TIMEOUT_SCALE = "0.3"
#: How much of a failed outcome's output tails the record keeps.
TAIL_CHARS = 1500
#: pytest-reb's own options for every run here (``--reb-trust-hook`` for the machine's hooks):
#: not ``PYTEST_ADDOPTS``, which every pytest the stages start (a repository's own test
#: nodes, an official stage's) would read as unknown options.
PYTEST_ARGS = "REB_GPU_PYTEST_ARGS"


def module_of(repo: str) -> Path:
    return next(ROOT.glob(f"repos/test_{repo.replace('/', '__').replace('-', '_')}.py"))


def docker_on_path() -> None:
    """``docker`` on PATH is ``docker_local.py``, and the images' venv python is python3."""
    bindir = WORK / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    shim = bindir / "docker"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE / "docker_local.py"} "$@"\n')
    shim.chmod(0o755)
    os.environ["PATH"] = f"{bindir}:{os.environ['PATH']}"
    os.environ["REB_LOCAL_PYTHON"] = sys.executable


def mirrors(folder: Path) -> None:
    """The packs of ``folder`` (``gpu_pack.py pack``, repositories a stand-in reads files of
    at a commit) unpacked under ``WORK/mirror``, the stand-ins' ``REB_MIRROR``."""
    home = WORK / "mirror"
    for pack_file in sorted(folder.glob("*.pack")):
        dest = home / pack_file.stem / "repo"
        if not (dest / ".git").is_dir():
            gpu_pack.unpack(pack_file, dest)
    os.environ["REB_MIRROR"] = str(home)


def append(out: Path, record: dict[str, Any]) -> None:
    """``record`` as one line of ``OUT/repos.jsonl``, under a lock: jobs write it side by side."""
    with FileLock(str(out / "repos.lock")), (out / "repos.jsonl").open("a") as sink:
        sink.write(json.dumps(record) + "\n")


def environment(repo: str, checkout: Path, pool: Path | None) -> tuple[str, str]:
    """The interpreter ``repo`` runs under, and how it was made, in a line."""
    if pool is None:
        return sys.executable, "this machine's python3"
    slug = repo.replace("/", "+")
    venv = WORK / slug / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    site_dir = Path(subprocess.run([str(python), "-c", "import sysconfig;"
                                    "print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    (site_dir / "reb_machine_site.pth").write_text(
        "".join(f"{d}\n" for d in site.getsitepackages()))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
           "--no-index", "--no-compile", "--disable-pip-version-check"]
    req, files = pool / f"{slug}.req", pool / f"{slug}.files"
    how = "venv over this machine's site folder"
    if req.exists():
        done = subprocess.run([*pip, "--find-links", str(pool), "-r", str(req)],
                              capture_output=True, text=True)
        how += "; " + (f"{req.name} resolved offline" if done.returncode == 0 else
                       f"{req.name} unresolved ({done.stderr.strip().splitlines()[-1:]})")
        if done.returncode != 0 and files.exists():
            wheels = [str(pool / n) for n in files.read_text().split() if (pool / n).exists()]
            forced = subprocess.run([*pip, "--no-deps", *wheels], capture_output=True, text=True)
            how += f"; {len(wheels)} wheels of {files.name} --no-deps" + (
                "" if forced.returncode == 0 else f" failed: {forced.stderr[-300:]}")
        if "# install_repo" in req.read_text():
            copy = WORK / slug / "install-copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(checkout, copy, ignore=shutil.ignore_patterns(".git"))
            done = subprocess.run([*pip, "--no-deps", "--no-build-isolation", str(copy)],
                                  capture_output=True, text=True)
            how += "; checkout installed" if done.returncode == 0 else (
                f"; checkout not installed: {done.stderr.strip().splitlines()[-1:]}")
        lines = [ln.strip() for ln in req.read_text().splitlines()]
        if holds_numpy1([ln for ln in lines if ln and not ln.startswith("#")]):
            os.environ.update(NUMPY1_ENV)  # this process runs this row alone
            how += "; " + " ".join(f"{k}={v}" for k, v in NUMPY1_ENV.items())
    else:
        how += "; no requirements in the pool"
    return str(python), how


#: Where a row holds numpy below 2: transformers imports the JAX and TensorFlow it finds, and
#: the machine's are built for NumPy 2 (ml-mdm's stand-in maker stopped in ``jaxlib``); no row
#: asks for either, so transformers is told to leave them alone.
NUMPY1_ENV = {"USE_FLAX": "0", "USE_TF": "0"}


def standins(repo: str, checkout: Path, python: str) -> str:
    """The row's stand-ins made into ASSETS under ``python``; what happened, in a line."""
    row = find(repo)
    if not row.standin:
        return "none"
    os.environ["REB_LOCAL_PYTHON"] = python
    with FileLock(str(STANDIN_LOCK)):
        return _standins(row, checkout)


def _standins(row: Any, checkout: Path) -> str:
    docker_local.link(str(checkout), "/data/project/repo")
    module_name, _, function = row.standin.rpartition(":")
    module = importlib.import_module(module_name or "standin")
    try:
        getattr(module, function)("local", ASSETS)
    except Exception as exc:  # a stand-in the machine cannot make: the stage says what lacks
        said = getattr(exc, "stderr", None) or getattr(exc, "output", None) or ""
        if isinstance(said, bytes):
            said = said.decode("utf-8", "replace")
        tail = " | ".join(line for line in str(said).strip().splitlines()[-3:])
        return f"{row.standin}: {type(exc).__name__}: {str(exc)[:200]}" + (
            f" ... {tail[-400:]}" if tail else "")
    return row.standin


def ours(repo: str, checkout: Path, python: str, compat: bool) -> list[dict[str, Any]]:
    """pytest-reb C2 and C3 of ``repo`` under ``python``; its outcomes as ``slim`` keeps them."""
    outdir = WORK / "runs" / repo.replace("/", "+") / ("compat" if compat else "strict")
    argv = [sys.executable, "-m", "pytest", *load_args(), "-p", "no:cacheprovider",
            "--rootdir", str(ROOT), "--reb-host=local://", "--reb-python", python,
            "--reb-repo-dir", str(checkout), "--reb-assets", str(ASSETS),
            "--reb-outdir", str(outdir), f"--reb-timeout-scale={TIMEOUT_SCALE}",
            "-m", "c2 or c3", "-q", "-rA", *os.environ.get(PYTEST_ARGS, "").split(),
            str(module_of(repo)),
            *(["--reb-compat"] if compat else [])]
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=420)
        print(done.stdout[-2500:], done.stderr[-1000:], sep="\n", flush=True)
    except subprocess.TimeoutExpired:
        return [{"repo": repo, "tier": "c3", "status": "driver_timeout"}]
    found = [json.loads(line) for p in outdir.glob("*/outcomes.jsonl")
             for line in p.read_text().splitlines() if line]
    return [slim(o) for o in found] or [{"repo": repo, "status": "no_outcome",
                                         "pytest_exit": done.returncode}]


def slim(outcome: dict[str, Any]) -> dict[str, Any]:
    """``outcome`` for the record: a pass without its output tails, anything else with their
    last lines (what a stand-in or an environment lacked is read there)."""
    kept = {k: v for k, v in outcome.items() if k not in ("stdout_tail", "stderr_tail")}
    if outcome.get("status") != "passed":
        for key in ("stdout_tail", "stderr_tail"):
            if outcome.get(key):
                kept[key] = str(outcome[key])[-TAIL_CHARS:]
    return kept


def official(repo: str, checkout: Path, bundles: Path, python: str) -> dict[str, Any]:
    """The official prepare, cuda and single_gpu stages in the checkout under ``python``
    (GPU stages under the GPU's lease); their verdicts."""
    from pytest_reb.evidence.gpu_use import host_gpus
    from pytest_reb.targets.lease import GpuLeases

    owner, name = repo.split("/")
    src = bundles / "scripts" / f"{owner}@{name}" / "benchmark_scripts"
    if not src.is_dir():
        return {stage: {"status": "absent", "why": f"no bundle at {src}"}
                for stage in OFFICIAL_STAGES}
    shutil.copytree(src, checkout / "benchmark_scripts", dirs_exist_ok=True)
    report = WORK / repo.replace("/", "+") / "report.json"  # SCIMLOPSBENCH_REPORT
    report.parent.mkdir(parents=True, exist_ok=True)
    facts = json.loads(subprocess.run([python, "-c", (
        "import json, platform, torch; print(json.dumps({'python_version': "
        "platform.python_version(), 'torch_version': torch.__version__, 'cuda_available': "
        "torch.cuda.is_available(), 'gpu_count': torch.cuda.device_count()}))")],
        capture_output=True, text=True, check=True).stdout)
    report.write_text(json.dumps({
        "python_path": python, **facts, "ddp_expected_ok": None, "env_tool": "venv",
        "env_name": None, "notes": "the GPU machine's python3, with the row's packages "
                                   "(gpu_repos.py)"}))
    env = {**os.environ, "SCIMLOPSBENCH_PYTHON": python, "SCIMLOPSBENCH_REPORT": str(report)}
    verdicts: dict[str, Any] = {}
    leases = GpuLeases(host_gpus())
    for stage, (argv, limit) in OFFICIAL_STAGES.items():
        hold = leases.hold(1) if stage != "prepare" else contextlib.nullcontext([])
        with hold, contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(["timeout", str(limit), *argv], cwd=checkout, env=env,
                           capture_output=True, timeout=limit + 30)
        results = checkout / "build_output" / stage / "results.json"
        try:
            verdicts[stage] = stage_verdict(json.loads(results.read_text()))
        except (OSError, ValueError):
            verdicts[stage] = {"status": "absent"}
    return verdicts


def one(repo: str, out: Path, packs: Path, bundles: Path, pool: Path | None,
        deadline: float, compat_run: bool = True) -> None:
    """Every step for ``repo``, each record appended to ``OUT/repos.jsonl`` as it exists."""
    slug = repo.replace("/", "+")
    checkout = gpu_pack.unpack(packs / f"{slug}.pack", WORK / slug / "repo")
    python, how = environment(repo, checkout, pool)
    record: dict[str, Any] = {"repo": repo, "environment": how,
                              "standin": standins(repo, checkout, python)}
    record["strict"] = ours(repo, checkout, python, compat=False)
    append(out, {**record, "part": "strict"})
    if time.time() < deadline:
        append(out, {"repo": repo, "part": "official",
              "official": official(repo, checkout, bundles, python)})
    # Each outcome of the strict run holds the compat verdict of the same observation
    # (``Outcome.compat``); the ``--reb-compat`` run is the whole compat mode, when time allows.
    if compat_run and time.time() < deadline:
        record["compat"] = ours(repo, checkout, python, compat=True)
        append(out, {"repo": repo, "part": "compat", "compat": record["compat"]})
    print("==", repo, [(o.get("tier"), o.get("status"), o.get("category"))
                       for o in record["strict"]], "|", how, flush=True)


def main() -> None:
    args = sys.argv[1:]
    budget = float(gpu_pack.option(args, "--budget-s", "540") or 540)
    pool_arg = gpu_pack.option(args, "--wheels", None)
    jobs = int(gpu_pack.option(args, "--jobs", "1") or 1)
    compat_run = "--no-compat-run" not in args
    if not compat_run:
        args.remove("--no-compat-run")
    deadline = float(gpu_pack.option(args, "--deadline", "0") or 0) or time.time() + budget
    out, packs, bundles, *repos = args
    Path(out).mkdir(parents=True, exist_ok=True)
    docker_on_path()
    ASSETS.mkdir(parents=True, exist_ok=True)
    mirrors(Path(packs) / "mirror")
    pool = Path(pool_arg) if pool_arg else None
    if len(repos) == 1:
        one(repos[0], Path(out), Path(packs), Path(bundles), pool, deadline, compat_run)
        return

    def child(repo: str) -> None:
        """``repo`` in a process of its own (the stand-ins' environment is per process)."""
        if time.time() > deadline:
            append(Path(out), {"repo": repo, "skipped": "out of this call's time"})
            return
        argv = [sys.executable, __file__, out, packs, bundles, repo, "--deadline",
                str(deadline), *(["--wheels", str(pool)] if pool else []),
                *([] if compat_run else ["--no-compat-run"])]
        subprocess.run(argv, check=False)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as workers:
        list(workers.map(child, repos))


if __name__ == "__main__":
    main()
