"""One builder for the rows of ``table.py``: the image, pytest-reb on it, the outcomes kept.

    python tests/realruns/build.py OWNER/NAME [--mirror /work/.mirror] [--keep]

For one row: the checkout at the pinned commit (from the session's ``fetch``
mirror, ``MIRROR/owner+name/repo``), the wheels downloaded on the host (the
only step with network), an image ``reb-real:<slug>`` committed from a
container with its network off, on a base that holds the row's exact torch
pins (``reb-real-base:<pins>``, made once per machine from the project's
Debian base and kept: ``docker rmi`` it to free the disk), with one venv
``/opt/envs/research``, the checkout at /data/project/repo and a report.json
written *inside* the image by probing the venv, so it claims only what it
observed, then C0, C1 and C5 strict and
compat, and the official bundle's run_all.sh (``official.py``), whose
verdicts go to ``tests/data/realruns/<slug>.json`` for the replay test.
The image and the wheels are removed afterwards (the disk is shared) unless
``--keep``.  The repository's code stays under the
git-ignored ``.cache/realruns/``.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import official
import standin
from realenv import RealEnv
from table import find

from pytest_reb.loop.images import LABEL_PYTHON, ensure_base_image
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


#: The engine's answer to a commit of a multi-GB layer takes minutes on a loaded machine;
#: docker-py's default of 60 s raised ReadTimeout while the engine went on and tagged the image.
ENGINE_TIMEOUT_S = 1800

#: One venv for every row, on a base that already holds its torch (below).
VENV = "/opt/envs/research"


#: The packages a base holds, when the row pins them exactly: the large, shared part of an image.
BASE_FAMILY = ("torch==", "torchvision==", "torchaudio==")


def flavour(row: RealEnv) -> tuple[str, ...]:
    """The row's exact torch-family pins: its base image (rows with the same pins share it)."""
    return tuple(p for p in row.packages if p.startswith(BASE_FAMILY))


def image_python() -> str:
    """The base image's Python version (its label): the wheels are chosen for it, not for this
    host's interpreter (Debian's 3.11.2 there; a wheel that requires 3.11.5 must not come)."""
    client = docker.from_env()
    return client.images.get(ensure_base_image(client)).labels[LABEL_PYTHON]


def download(packages: tuple[str, ...], dest: Path, *, skip: set[str] = frozenset(),
             sdists: tuple[str, ...] = ()) -> set[str]:
    """The wheels of ``packages`` into ``dest`` (the only step with network; PyPI only), less
    the files named in ``skip`` (already in the base); returns the file names kept.

    ``sdists`` are pure-Python packages PyPI has as source only (hydra-core's
    ``antlr4-python3-runtime==4.9.*``): built into wheels here first, where the download
    below finds them, since it takes wheels only (chosen for the image's Python)."""
    dest.mkdir(parents=True, exist_ok=True)
    if sdists:
        built = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "pip", "wheel", "-q",
                                "--no-deps", "-w", str(dest), *sdists],
                               capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit(f"pip wheel {' '.join(sdists)} failed:\n{built.stderr[-3000:]}")
    done = subprocess.run(["nice", "-n", "19", sys.executable, "-m", "pip", "download", "-q",
                           "--only-binary=:all:", "--python-version", image_python(),
                           "--find-links", str(dest), "-d", str(dest), *packages],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pip download {' '.join(packages)} failed:\n{done.stderr[-3000:]}")
    for wheel in dest.iterdir():
        if wheel.name in skip:
            wheel.unlink()
    return {w.name for w in dest.iterdir()}


def commit(image: str, script: str, tag: str, context: Path, *,
           changes: tuple[str, ...] = (), network: bool = False) -> None:
    """Run ``script`` (bash) in a container of ``image`` with the network off (on only for a
    row's ``debian`` packages: ``apt``) and ``context`` read-only at ``/mnt``, then commit it as
    ``tag``: an agent's way of building, and no build cache or context copy is left on the
    engine (the disk is shared).  ``/mnt`` exists in the base, so the mount leaves no mount
    point behind in the image."""
    client = docker.from_env(timeout=ENGINE_TIMEOUT_S)
    container = client.containers.run(
        image, ["bash", "-euo", "pipefail", "-c", script], detach=True,
        network_mode="bridge" if network else "none",
        # a Mount, not ``volumes=``: docker-py's volumes also go into the container's config,
        # and a commit would make them the image's VOLUMEs
        mounts=[docker.types.Mount("/mnt", str(context), type="bind", read_only=True)],
        labels={"reb.realruns": "build"},
        # the lowest CPU weight: a build shares the machine with the suite and benches
        cpu_shares=2)
    try:
        status = container.wait()["StatusCode"]
        if status != 0:
            raise SystemExit(f"building {tag} failed (exit {status}):\n"
                             + container.logs(tail=40).decode(errors="replace"))
        container.commit(*tag.split(":"), changes=list(changes))
    finally:
        container.remove(force=True, v=True)


def pip_install(packages: tuple[str, ...] | list[str]) -> str:
    wanted = " ".join(repr(p) for p in packages)
    return (f"{VENV}/bin/pip install --no-index --find-links /mnt/wheels --no-cache-dir "
            f"--no-compile --disable-pip-version-check --quiet {wanted}")


#: The label a base carries: the wheel files it was made from (a row's wheelhouse leaves them
#: out).  On the image, not in a file beside the checkout, so worktrees and parallel builders
#: of one machine share a base.
WHEELS_LABEL = "reb.realruns.wheels"


def base_image(pins: tuple[str, ...]) -> tuple[str, set[str]]:
    """The venv with ``pins`` on the project's Debian base, made once per machine; returns its
    tag and the wheel files it was made from.  Builders running side by side wait on one lock
    per base instead of each downloading and committing the same gigabytes."""
    name = "-".join(p.replace("==", "") for p in pins) or "bare"
    tag = f"reb-real-base:{name}"
    client = docker.from_env()
    with open(f"/tmp/reb-realruns-base-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            labels = client.images.get(tag).labels or {}
            if WHEELS_LABEL in labels:
                return tag, set(labels[WHEELS_LABEL].split())
        except docker.errors.ImageNotFound:
            pass
        scratch = Path(tempfile.mkdtemp(prefix=f"reb-realruns-base-{name}-"))
        try:
            files = download(pins, scratch / "wheels") if pins else set()
            script = f"python3 -m venv {VENV}" + (f" && {pip_install(pins)}" if pins else "")
            commit(ensure_base_image(client), script, tag, scratch,
                   changes=(f"LABEL {WHEELS_LABEL}={shlex.quote(' '.join(sorted(files)))}",))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return tag, files


def fetch_debs(names: tuple[str, ...], dest: Path) -> None:
    """The ``.deb`` files of ``names`` into ``dest``, by apt on the host (Debian bookworm, the
    base image's suite; the second step with network)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    done = subprocess.run(["apt-get", "download", "-q", *names], cwd=dest,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"apt-get download {' '.join(names)} failed:\n{done.stderr[-3000:]}")


def notes(row: RealEnv) -> str:
    left = "; ".join(f"not installed: {k} ({why})" for k, why in row.left_out.items())
    own = "; the checkout installed with pip --no-deps from a copy" if row.install_repo else ""
    if row.debs:
        own += f"; the Debian packages {' '.join(row.debs)} installed with dpkg"

    if row.debian:
        own += f"; Debian packages installed with apt-get first: {' '.join(row.debian)}"
    return (f"venv; pip install {' '.join(row.packages)} from a local wheelhouse, built with "
            f"the network off ({row.source}){own}. {left}. Built on a machine without a GPU: "
            "the CUDA fields are what torch said there; DDP not checked.")


def scm_version(checkout: Path) -> str:
    """The version setuptools-scm would give ``checkout`` (its default scheme: the tag, or past
    it the next patch release's ``.devN+g<sha>``), read here with git: a checkout installed
    in the image, which has no git program, would fail setuptools-scm's own lookup."""
    done = subprocess.run(["git", "-C", str(checkout), "describe", "--tags", "--long"],
                          capture_output=True, text=True)
    sha = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short=7", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.strip()
    tag, _, rest = done.stdout.strip().rpartition("-")[0].rpartition("-") if done.returncode \
        == 0 else ("", "", "")
    tag = tag.removeprefix("v")
    parts = tag.split(".")
    if not tag or not all(p.isdigit() for p in parts):
        return f"0.0.0+g{sha}"
    if rest == "0":
        return tag
    parts[-1] = str(int(parts[-1]) + 1)
    return f"{'.'.join(parts)}.dev{rest}+g{sha}"


def build(row: RealEnv, mirror: Path) -> tuple[str, Path]:
    """Build ``reb-real:<slug>`` on its torch base; returns the tag and the context folder."""
    context = WORK / slug(row.repo)
    owner, name = row.repo.split("/")
    standin.checkout(str(mirror / f"{owner}+{name}" / "repo"), row.commit, context / "repo")
    base, in_base = base_image(flavour(row))
    if row.debian:
        base = apt(base, row, context)
    extra = ("setuptools", "wheel") if row.install_repo else ()
    shutil.rmtree(context / "wheels", ignore_errors=True)
    download((*row.packages, *extra), context / "wheels", skip=in_base, sdists=row.sdists)
    (context / "report_probe.py").write_text(REPORT_PROBE)
    script = [pip_install([*row.packages, *extra])]
    if row.debs:
        fetch_debs(row.debs, context / "debs")
        # --force-depends: the packages named, not their whole closure (libglx0's GLX vendor,
        # mesa with LLVM, is left out: nothing here draws with OpenGL)
        script.insert(0, "dpkg -i --force-depends /mnt/debs/*.deb >/dev/null")
    if row.install_repo:
        # setuptools-scm reads the version from git, and the image has no git program
        scm = f"SETUPTOOLS_SCM_PRETEND_VERSION={shlex.quote(scm_version(context / 'repo'))} "
        script.append(f"cp -r /mnt/repo /tmp/repo-build && {scm}{VENV}/bin/pip install "
                      "--no-index --no-deps --no-build-isolation --no-cache-dir --quiet "
                      "/tmp/repo-build && rm -rf /tmp/repo-build")
    script += [f"mkdir -p {REPO_DIR} {os.path.dirname(REPORT)}",
               f"cp -a /mnt/repo/. {REPO_DIR}/",
               *(f"VENV={VENV} REPO={REPO_DIR} && {step}" for step in row.after),
               f"{VENV}/bin/python /mnt/report_probe.py {VENV}/bin/python {row.env} "
               f"{shlex.quote(notes(row))} > {REPORT}"]
    tag = f"reb-real:{slug(row.repo).replace('__', '.')}"
    commit(base, " && ".join(script), tag, context, changes=(f"WORKDIR {REPO_DIR}",))
    return tag, context


def apt_tag(base: str, packages: tuple[str, ...]) -> str:
    """The tag of ``base`` with ``packages``: one per base and package set, so the rows that
    need the same system libraries (F5-TTS and SenseVoice: FFmpeg's) share it."""
    import hashlib

    digest = hashlib.sha256(" ".join(sorted(packages)).encode()).hexdigest()[:12]
    return f"reb-real-apt:{base.split(':', 1)[1]}-{digest}"


def apt(base: str, row: RealEnv, context: Path) -> str:
    """``base`` with the row's Debian packages (``apt-get``, the network on: Debian's archive is
    the one registry besides PyPI), made once per machine and kept as the bases are (``docker
    rmi`` it to free the disk); apt's lists and downloads are not kept."""
    tag = apt_tag(base, row.debian)
    client = docker.from_env()
    with open(f"/tmp/reb-realruns-{tag.replace(':', '-')}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            client.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        wanted = " ".join(shlex.quote(p) for p in row.debian)
        commit(base, "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && "
               f"apt-get install -y -qq --no-install-recommends {wanted} >/dev/null && "
               "apt-get clean && rm -rf /var/lib/apt/lists/*", tag, context, network=True)
    return tag


def mismatch(row: RealEnv) -> list[str]:
    """``--reb-allow-commit-mismatch`` where the row's commit is not the module's pin (the pin
    is not public: docs/real-runs.md), so the tiers verify the checkout instead of refusing
    it; every outcome still says so (``head_moved``, ``unverifiable``)."""
    pinned = standin.load_repo(module_of(row.repo)).commit
    return [] if row.commit == pinned else ["--reb-allow-commit-mismatch"]


def run_tiers(row: RealEnv, tag: str, context: Path, *, compat: bool,
              timeout_scale: float = 1.0) -> list[dict[str, Any]]:
    """pytest-reb C0, C1 and C5 on ``tag``; the outcomes it wrote, trimmed to the verdicts."""
    outdir = context / ("reports-compat" if compat else "reports-strict")
    shutil.rmtree(outdir, ignore_errors=True)
    argv = [sys.executable, "-m", "pytest", str(module_of(row.repo)), "--reb-image", tag,
            "-m", TIERS, "--reb-outdir", str(outdir), "--reb-assets", str(WORK / "assets"),
            f"--reb-timeout-scale={timeout_scale:g}", *mismatch(row),
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


def record(row: RealEnv, tag: str, context: Path, timeout_scale: float = 1.0,
           official_timeout: int = official.WHOLE_TIMEOUT_S) -> Path:
    image = docker.from_env().images.get(tag)
    report = json.loads(subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "--entrypoint", "cat", tag, REPORT],
        check=True, capture_output=True, text=True).stdout)
    data = {"repo": row.repo, "commit": row.commit, "image_mib": image.attrs["Size"] >> 20,
            "packages": list(row.packages), "left_out": row.left_out, "report": report,
            "strict": run_tiers(row, tag, context, compat=False, timeout_scale=timeout_scale),
            "compat": run_tiers(row, tag, context, compat=True, timeout_scale=timeout_scale),
            "official": official.run(row.repo, tag, timeout_s=official_timeout)}
    data["figures"] = {mode: figures(data[mode]) for mode in ("strict", "compat")}
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"{slug(row.repo)}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def make_standin(name: str, tag: str) -> None:
    """The row's stand-in: ``function`` of ``standin.py``, or ``module:function`` of another
    module beside it (one per batch of rows, so parallel work on rows never edits one file)."""
    module_name, _, function = name.rpartition(":")
    module = importlib.import_module(module_name) if module_name else standin
    getattr(module, function)(tag, WORK / "assets")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--keep", action="store_true", help="keep the image and the context")
    parser.add_argument("--reuse", action="store_true",
                        help="take the row's image left by an earlier --keep instead of "
                             "building it again (a stand-in fixed after the build)")
    parser.add_argument("--timeout-scale", type=float, default=3.0,
                        help="--reb-timeout-scale for the tiers (default 3: four batches shared "
                             "a 2-core machine, where SocialED's pyright took 418 s of C0's 600 "
                             "and a large tree's ran past it)")
    parser.add_argument("--official-timeout", type=int, default=official.WHOLE_TIMEOUT_S,
                        help="seconds the official run_all.sh may take (default "
                             f"{official.WHOLE_TIMEOUT_S}; its pyright stage has no limit of "
                             "its own, and over sapiens's 3331 files it takes tens of minutes)")
    args = parser.parse_args()
    if args.official_timeout <= 0:
        parser.error("--official-timeout must be above 0")
    if args.timeout_scale <= 0:
        parser.error("--timeout-scale must be above 0")
    row = find(args.repo)
    tag = f"reb-real:{slug(row.repo).replace('__', '.')}"
    if args.reuse:
        docker.from_env().images.get(tag)  # ImageNotFound: nothing to reuse
        context = WORK / slug(row.repo)
    else:
        tag, context = build(row, args.mirror)
    try:
        if row.standin:
            make_standin(row.standin, tag)
        print("recorded", record(row, tag, context, args.timeout_scale, args.official_timeout))
    finally:
        if not args.keep:
            subprocess.run(["docker", "rmi", "-f", tag], check=False, capture_output=True)
            shutil.rmtree(context / "wheels", ignore_errors=True)
            shutil.rmtree(context / "debs", ignore_errors=True)


if __name__ == "__main__":
    main()
