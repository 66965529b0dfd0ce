"""One builder for the rows of ``table.py``: the image, pytest-reb on it, the outcomes kept.

    python tests/realruns/build.py OWNER/NAME [--mirror /work/.mirror] [--keep]

For one row: the checkout at the pinned commit (from the session's ``fetch``
mirror, ``MIRROR/owner+name/repo``), the wheels downloaded on the host (the
only step with network), an image ``reb-real:<slug>`` built with its network
off from the project's Debian base (a venv under /opt/envs, the checkout at
/data/project/repo, a report.json written *inside* the image by probing the
venv, so it claims only what it observed), then C0, C1 and C5 strict and
compat, and the official bundle's run_all.sh (``official.py``), whose
verdicts go to ``tests/data/realruns/<slug>.json`` for the replay test.
The image and the wheels are removed afterwards (the disk is shared) unless
``--keep``.  The repository's code stays under the
git-ignored ``.cache/realruns/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import official
import standin
from table import RealEnv, find

from pytest_reb.images import ensure_base_image
from pytest_reb.outcome import Outcome
from pytest_reb.report import summary, table

ROOT = standin.ROOT
WORK = ROOT / ".cache" / "realruns"
DATA = ROOT / "tests" / "data" / "realruns"
REPO_DIR = "/data/project/repo"
REPORT = "/opt/scimlopsbench/report.json"
TIERS = "c0 or c1 or c5"
#: What the outcome record keeps of the evidence: enough to read the verdict, no code or logs.
EVIDENCE_KEYS = ("missing", "missing_strict", "missing_official", "imports_total",
                 "missing_count", "counts", "env_size", "assets")

#: Run inside the image at build time: the report states what the venv shows, nothing more.
REPORT_PROBE = """
import json, sys
python, env, notes = sys.argv[1:4]
report = {"python_path": python, "python_version": sys.version.split()[0],
          "torch_version": None, "cuda_available": None, "gpu_count": None,
          "ddp_expected_ok": None, "env_tool": "venv", "env_name": env, "notes": notes}
try:
    import torch
except ImportError:
    pass
else:
    report.update(torch_version=torch.__version__, cuda_available=torch.cuda.is_available(),
                  gpu_count=torch.cuda.device_count())
print(json.dumps(report, indent=2))
"""


def slug(repo: str) -> str:
    return repo.replace("/", "__").lower()


def module_of(repo: str) -> Path:
    owner, name = repo.split("/")
    clean = "".join(c if c.isalnum() else "_" for c in f"{owner}__{name}")
    return ROOT / "repos" / f"test_{clean}.py"


def wheels(row: RealEnv, dest: Path) -> None:
    """The row's wheels (and setuptools/wheel for the checkout's own build) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    extra = ("setuptools", "wheel") if row.install_repo else ()
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
                    "-d", str(dest), *row.packages, *extra], check=True)


def notes(row: RealEnv) -> str:
    left = "; ".join(f"not installed: {k} ({why})" for k, why in row.left_out.items())
    own = "; the checkout installed with pip --no-deps from a copy" if row.install_repo else ""
    return (f"venv; pip install {' '.join(row.packages)} from a local wheelhouse, built with "
            f"the network off ({row.source}){own}. {left}. Built on a machine without a GPU: "
            "the CUDA fields are what torch said there; DDP not checked.")


def dockerfile(row: RealEnv, base: str) -> str:
    env_dir = f"/opt/envs/{row.env}"
    wanted = " ".join(repr(p) for p in row.packages)
    own = ""
    if row.install_repo:
        wanted += " setuptools wheel"
        own = (f" \\\n && cp -r /tmp/repo /tmp/repo-build && {env_dir}/bin/pip install --no-index"
               f" --no-deps --no-build-isolation --no-cache-dir --quiet /tmp/repo-build")
    return f"""\
FROM {base} AS env
COPY wheels/ /tmp/wheels/
COPY repo/ /tmp/repo/
RUN python3 -m venv {env_dir} \\
 && {env_dir}/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir --no-compile \\
      --disable-pip-version-check --quiet {wanted}{own}
COPY report_probe.py /tmp/report_probe.py
RUN mkdir -p {os.path.dirname(REPORT)} && {env_dir}/bin/python /tmp/report_probe.py \\
      {env_dir}/bin/python {row.env} {json.dumps(notes(row))} > /tmp/report.json

FROM {base}
COPY --from=env {env_dir} {env_dir}
COPY --from=env /tmp/report.json {REPORT}
COPY repo/ {REPO_DIR}/
WORKDIR {REPO_DIR}
"""


def build(row: RealEnv, mirror: Path) -> tuple[str, Path]:
    """Build ``reb-real:<slug>``; returns the tag and the context folder."""
    context = WORK / slug(row.repo)
    owner, name = row.repo.split("/")
    standin.checkout(str(mirror / f"{owner}+{name}" / "repo"), row.commit, context / "repo")
    wheels(row, context / "wheels")
    base = ensure_base_image(docker.from_env())
    (context / "report_probe.py").write_text(REPORT_PROBE)
    (context / "Dockerfile").write_text(dockerfile(row, base))
    tag = f"reb-real:{slug(row.repo).replace('__', '.')}"
    subprocess.run(["nice", "-n", "19", "docker", "build", "--network", "none", "-q", "-t", tag,
                    str(context)], check=True)
    return tag, context


def run_tiers(row: RealEnv, tag: str, context: Path, *, compat: bool) -> list[dict[str, Any]]:
    """pytest-reb C0, C1 and C5 on ``tag``; the outcomes it wrote, trimmed to the verdicts."""
    outdir = context / ("reports-compat" if compat else "reports-strict")
    shutil.rmtree(outdir, ignore_errors=True)
    argv = [sys.executable, "-m", "pytest", str(module_of(row.repo)), "--reb-image", tag,
            "-m", TIERS, "--reb-outdir", str(outdir), "--reb-assets", str(WORK / "assets"),
            "-p", "no:benchmark", "-q", "-rA", *(["--reb-compat"] if compat else [])]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["nice", "-n", "19", *argv], cwd=ROOT, env=env, text=True,
                          capture_output=True)
    print(done.stdout[-4000:], done.stderr[-2000:], sep="\n")
    logs = sorted(outdir.glob("*/outcomes.jsonl"))
    if not logs:
        raise SystemExit(f"pytest wrote no outcomes (exit {done.returncode})")
    return [trim(json.loads(line)) for line in logs[-1].read_text().splitlines() if line]


def trim(outcome: dict[str, Any]) -> dict[str, Any]:
    """The outcome without its output tails (the repository's text): the fields the summary
    and table read, and the evidence they count."""
    evidence = outcome.get("evidence") or {}
    kept = {k: v for k, v in outcome.items() if k not in ("evidence", "stdout_tail", "stderr_tail")}
    kept["evidence"] = {k: evidence[k] for k in EVIDENCE_KEYS if k in evidence}
    return kept


def figures(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """What summary and table made of the outcomes when they were recorded (the replay's key)."""
    loaded = [Outcome.from_json(o) for o in outcomes]
    totals = summary.tally(loaded)
    return {"verdicts": {o.tier: [o.status, o.category, o.strict, o.compat] for o in loaded},
            "totals": {t: {k: v for k, v in c.items() if k != "mean_duration"}
                       for t, c in totals.items()},
            "row": table.record(table.row_of("realrun", loaded, [], []))}


def record(row: RealEnv, tag: str, context: Path) -> Path:
    image = docker.from_env().images.get(tag)
    report = json.loads(subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "cat", tag, REPORT],
        check=True, capture_output=True, text=True).stdout)
    data = {"repo": row.repo, "commit": row.commit, "image_mib": image.attrs["Size"] >> 20,
            "packages": list(row.packages), "left_out": row.left_out, "report": report,
            "strict": run_tiers(row, tag, context, compat=False),
            "compat": run_tiers(row, tag, context, compat=True),
            "official": official.run(row.repo, tag)}
    data["figures"] = {mode: figures(data[mode]) for mode in ("strict", "compat")}
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{slug(row.repo)}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def remove_env_stage(row: RealEnv) -> None:
    """The build's untagged ``env`` stage (the classic builder keeps it): only ours, found by
    the venv its history creates, never another image."""
    client = docker.from_env()
    for image in client.images.list(filters={"dangling": True}):
        if any(f"/opt/envs/{row.env} " in (step.get("CreatedBy") or "")
               for step in image.history()):
            client.images.remove(image.id, force=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--keep", action="store_true", help="keep the image and the context")
    args = parser.parse_args()
    row = find(args.repo)
    tag, context = build(row, args.mirror)
    try:
        if row.standin:
            getattr(standin, row.standin)(tag, WORK / "assets")
        print("recorded", record(row, tag, context))
    finally:
        if not args.keep:
            subprocess.run(["docker", "rmi", "-f", tag], check=False, capture_output=True)
            remove_env_stage(row)
            shutil.rmtree(context / "wheels", ignore_errors=True)


if __name__ == "__main__":
    main()
