"""Strict C3 of every honest workload and both attacks, on a GPU machine with no Docker.

    python tests/gpu/run_family.py OUT [NAME ...] [--budget-s S]

Makes a git checkout of ``workloads/`` in a scratch folder, then for each
workload (all of ``workloads_repo.WORKLOADS`` then ``ATTACKS`` when no NAME is
given) runs pytest-reb's C3 through ``--reb-host=local://`` under the machine's
``python3``, each run in a process of its own with a time limit.  After every
run the outcome (without output tails) is appended to ``OUT/family.jsonl``, so
a run that hangs loses only itself; none starts after ``--budget-s`` seconds.
The attacks are installed just before their run and removed right after
(``attacks.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from workloads_repo import ATTACKS, WORKLOADS  # noqa: E402

from pytest_reb.plugin import load_args  # noqa: E402

LIMIT_S = 150


def checkout(dest: Path) -> Path:
    """``workloads/`` as a git checkout of one commit (the integrity verdict reads git)."""
    shutil.copytree(HERE / "workloads", dest)
    git = ["git", "-C", str(dest), "-c", "user.name=reb", "-c", "user.email=reb@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "workloads"], check=True)
    return dest


def run_one(name: str, repo_dir: Path, runs: Path) -> list[dict]:
    """One workload's C3 run; its outcomes, tails dropped."""
    outdir = runs / name
    argv = [sys.executable, "-m", "pytest", *load_args(), "-p", "no:cacheprovider",
            "--noconftest", "--rootdir", str(ROOT), "--reb-host=local://",
            "--reb-python", sys.executable, "--reb-repo-dir", str(repo_dir),
            "--reb-outdir", str(outdir), "--reb-allow-commit-mismatch", "-m", "c3", "-q",
            str(HERE / "workloads_repo.py")]
    env = {**os.environ, "REB_WORKLOAD": name}
    attack = name.removeprefix("attack_") if name in ATTACKS else None
    if attack:
        subprocess.run([sys.executable, str(HERE / "attacks.py"), "install", attack], check=True)
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=LIMIT_S)
        print(proc.stdout[-1500:], proc.stderr[-1500:], flush=True)
    except subprocess.TimeoutExpired:
        return [{"repo": f"reb/workload-{name}", "tier": "c3", "status": "driver_timeout"}]
    finally:
        if attack:
            subprocess.run([sys.executable, str(HERE / "attacks.py"), "remove", attack],
                           check=True)
    found = []
    for path in outdir.glob("*/outcomes.jsonl"):
        for line in path.read_text().splitlines():
            o = json.loads(line)
            found.append({k: v for k, v in o.items() if k not in ("stdout_tail", "stderr_tail")})
    return found or [{"repo": f"reb/workload-{name}", "tier": "c3", "status": "no_outcome",
                      "pytest_exit": proc.returncode}]


def main() -> None:
    args = sys.argv[1:]
    budget = float(args.pop(args.index("--budget-s") + 1)) if "--budget-s" in args else 1e9
    if "--budget-s" in args:
        args.remove("--budget-s")
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    names = args[1:] or [*WORKLOADS, *ATTACKS]
    start = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="reb-family-"))
    repo_dir = checkout(scratch / "checkout")
    with (out / "family.jsonl").open("a") as sink:
        for name in names:
            if time.monotonic() - start > budget:
                sink.write(json.dumps({"workload": name, "skipped": "out of time"}) + "\n")
                continue
            for o in run_one(name, repo_dir, scratch / "runs"):
                o["workload"] = name
                sink.write(json.dumps(o) + "\n")
                sink.flush()
                print("==", name, o.get("status"), o.get("category"), "strict", o.get("strict"),
                      "compat", o.get("compat"), (o.get("message") or "")[:200], flush=True)


if __name__ == "__main__":
    main()
