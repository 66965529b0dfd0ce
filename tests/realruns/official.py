"""The official probe bundle of a repository, run on a real-run image the way its harness runs it.

    python tests/realruns/official.py OWNER/NAME IMAGE [RELEASE_GIT_DIR]

The harness copies ``scripts/<owner>@<repo>/benchmark_scripts/`` of the
release into ``/data/project/repo/benchmark_scripts/`` of the agent's container
and runs ``run_all.sh`` there (docs/reference: official-harness.md, section 2).
Here the bundle is taken from the fetched release with ``git archive`` into a
scratch folder (its code is never committed) and copied into a throwaway
container of the image, so the image itself stays as built.  The bundle
pip-installs pyright into the reported interpreter and its prepare stage
downloads assets, so that container has the default network with the host's
CA bundle mounted (the way pip reaches the index from a container here); the
hub is not reachable, and a prepare stage that needs it fails as it would
officially.  What is kept of each stage is its verdict and the figures the
official aggregation reads, nothing of its logs.

The bundle also relies on the official *base image* (official-harness.md,
section 11): a ``python`` on ``PATH`` (there, conda's base interpreter: the
helpers parse the report with it) and Node.js 20 (the ``pyright`` wrapper from
PyPI runs the Node CLI, and would otherwise download Node from a host that is
not reachable here).  The throwaway container gets both, never the image: a
``python`` that is an empty venv of the base's ``python3`` (conda's base has
pip; Debian's ``python3`` has none, and a bundle whose pyright stage runs in
its default ``--mode system`` pip-installs pyright into that ``python``: with
the bare ``python3`` the install fails and the stage records ``deps`` with no
count) and this host's Node.js 20, npm and git, mounted read-only.  Without them the
pyright stage writes no results (``python: command not found``), which is what
earlier runs recorded as ``invalid_json``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker

RELEASE = Path("/work/.mirror/No-518+ResearchEnvBench/repo")
REPO_DIR = "/data/project/repo"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
#: What the official base image has and the bundle uses: Node.js 20 and npm (from this host).
NODE = ("/usr/bin/node", "/usr/lib/node_modules/npm")
#: git, which the official base image installs (apt) and bundles call: yomitoku's
#: validate_agent_report.py runs ``git rev-parse HEAD`` outside any ``try``, so without git
#: it raised FileNotFoundError before writing its results (the hallucination stage
#: ``absent``).  This host's binary (Debian bookworm, as the project's base; it needs only
#: libc, zlib and pcre2, which the base has), mounted read-only.
GIT = "/usr/bin/git"
#: Host paths mounted read-only at the same place in the throwaway container.
MOUNTS = (CA_BUNDLE, *NODE, GIT)
#: The throwaway container's environment: the CA bundle for pip and Node, and git told to trust
#: the checkout (the official harness clones it as the user that runs the stages; here the
#: image's copy keeps its owner, and git would refuse a repository of another owner).
ENVIRONMENT = {"PIP_CERT": CA_BUNDLE, "SSL_CERT_FILE": CA_BUNDLE,
               "NODE_EXTRA_CA_CERTS": CA_BUNDLE, "REQUESTS_CA_BUNDLE": CA_BUNDLE,
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "GIT_CONFIG_COUNT": "1",
               "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
#: Where the stand-in for conda's base interpreter goes (an empty venv: its own pip, no packages).
BASE_PYTHON = "/opt/reb-official-base"
#: What the official base image has on PATH, made in the throwaway container only.
#: (``python`` execs the venv's: a link to it would not find the venv's pyvenv.cfg beside it.)
BASE_LINKS = (f"/usr/bin/python3 -m venv {BASE_PYTHON} && "
              f"printf '#!/bin/sh\\nexec {BASE_PYTHON}/bin/python \"$@\"\\n' "
              "> /usr/local/bin/python && chmod 755 /usr/local/bin/python && "
              "ln -sf /usr/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm")
STAGES = ("pyright", "prepare", "cpu", "cuda", "single_gpu", "multi_gpu", "env_size",
          "hallucination")
#: The orchestrator in the copied bundle.
RUN_ALL = f"{REPO_DIR}/benchmark_scripts/run_all.sh"
#: run_all.sh's own stage timeouts add up to more; this bounds one repository's turn (the
#: default of ``run``; build.py's ``--official-timeout`` for a large tree: sapiens's pyright
#: stage alone analyses over 3000 files).
WHOLE_TIMEOUT_S = 1500
#: The official rule's name of an unresolved import (official-harness.md section 7.1, step 5):
#: the text of pyright's message up to the first dot or quote.
MISSING_NAME = re.compile(r'Import "([^."]+)')


def pyright_missing(output: Any) -> list[str] | None:
    """The names the official rule takes from pyright's own ``reportMissingImports``
    diagnostics in ``pyright_output.json``, or None where it holds none.  Kept beside the
    bundle's count because a bundle's copy of the rule can be broken: four bundles' regex
    (Auto1111SDK, LMCache, torchft, vllm-omni) is over-escaped and matches no message, so
    their count is 0 whatever pyright found (docs/real-runs.md, Departures)."""
    diagnostics = output.get("generalDiagnostics") if isinstance(output, dict) else None
    if not isinstance(diagnostics, list):
        return None
    return sorted({m.group(1) for d in diagnostics
                   if isinstance(d, dict) and d.get("rule") == "reportMissingImports"
                   and (m := MISSING_NAME.search(str(d.get("message", ""))))})


def bundle(repo: str, release: Path, dest: Path) -> Path:
    """The release's bundle for ``repo``, extracted under ``dest``/benchmark_scripts."""
    owner, name = repo.split("/")
    prefix = f"scripts/{owner}@{name}/benchmark_scripts"
    archive = subprocess.run(["git", "-C", str(release), "archive", "HEAD", prefix],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest), "--strip-components=2"], input=archive,
                   check=True)
    return dest / "benchmark_scripts"


def stage_verdict(data: dict[str, Any]) -> dict[str, Any]:
    """What M5 reads of one stage: status, exit code, category, C0 metrics, C5 counts."""
    kept = {k: data.get(k) for k in ("status", "exit_code", "failure_category", "skip_reason")}
    # the pyright stage's results.json has the counts at its top level; its analysis.json
    # (merged in by ``run``) under "metrics", with the names in "missing_packages"
    metrics = {**data, **(data.get("metrics") or {})}
    for key in ("missing_packages_count", "total_imported_packages_count"):
        # top-level or inside ``metrics``, as M5 reads them (official-harness.md, section 6)
        if key in data or key in metrics:
            kept[key] = data.get(key, metrics.get(key))
    if isinstance(data.get("missing_packages"), list):
        kept["missing_packages"] = sorted(data["missing_packages"])
    # what the pyright stage analysed (analysis.json's meta, pyright's own summary): the
    # cause of a count unlike ours is usually there (its targets, a project file, no files)
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    targets = meta.get("targets")
    if targets:  # a list, or one string of names (VoxCPM's bundle: "src scripts")
        kept["targets"] = targets.split() if isinstance(targets, str) else list(targets)
    if meta.get("decision_reason"):
        kept["decision_reason"] = meta["decision_reason"]
    if isinstance(data.get("pyright_missing"), list):
        kept["pyright_missing"] = data["pyright_missing"]
    summary = data.get("pyright_summary")
    if isinstance(summary, dict):
        kept["pyright_summary"] = {k: summary[k] for k in ("filesAnalyzed", "errorCount")
                                   if k in summary}
    halluc = data.get("hallucinations")
    if isinstance(halluc, dict):
        kept["hallucinations"] = {k: (v or {}).get("count") for k, v in halluc.items()
                                  if isinstance(v, dict)}
    return kept


def analysis(container: Any, stage: str) -> dict[str, Any]:
    """The pyright stage's analysis.json (the missing packages by name, and the metrics), or
    nothing: the other stages write none, and a broken one adds nothing to results.json."""
    if stage != "pyright":
        return {}
    read = container.exec_run(["cat", f"{REPO_DIR}/build_output/pyright/analysis.json"])
    try:
        data = json.loads(read.output) if read.exit_code == 0 else {}
    except json.JSONDecodeError:
        return {}
    kept = {k: data[k] for k in ("missing_packages", "metrics", "meta") if k in data}
    read = container.exec_run(["cat", f"{REPO_DIR}/build_output/pyright/pyright_output.json"])
    try:
        out = json.loads(read.output) if read.exit_code == 0 else {}
    except json.JSONDecodeError:
        out = {}
    if isinstance(out, dict) and isinstance(out.get("summary"), dict):
        kept["pyright_summary"] = out["summary"]
    names = pyright_missing(out)
    if names is not None:
        kept["pyright_missing"] = names
    return kept


@contextlib.contextmanager
def container(repo: str, image: str, release: Path = RELEASE,
              labels: dict[str, str] | None = None) -> Iterator[Any]:
    """A started throwaway container of ``image`` as the official harness prepares one: the
    release's bundle for ``repo`` copied into the checkout, and the official base's ``python``,
    Node.js, npm and git (above); removed on every exit.  ``run`` runs run_all.sh in it, and
    so does ``bench/vs_official.py``, which times its stages."""
    client = docker.from_env()
    with tempfile.TemporaryDirectory() as scratch:
        scripts = bundle(repo, release, Path(scratch))
        ctr = client.containers.create(
            image, ["sleep", "infinity"], entrypoint=[], working_dir=REPO_DIR,
            volumes={path: {"bind": path, "mode": "ro"} for path in MOUNTS},
            environment=ENVIRONMENT,
            labels={"reb.realruns": "official", **(labels or {})})
        try:
            ctr.start()
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                tar.add(scripts, arcname="benchmark_scripts")
            ctr.put_archive(REPO_DIR, buf.getvalue())
            made = ctr.exec_run(["bash", "-c", BASE_LINKS])
            if made.exit_code != 0:
                raise SystemExit("the official base's python and npm could not be made: "
                                 + made.output.decode(errors="replace")[-500:])
            yield ctr
        finally:
            ctr.remove(force=True, v=True)


def verdicts(ctr: Any) -> dict[str, Any]:
    """Per stage, what its ``build_output/<stage>/results.json`` (and analysis) says."""
    stages: dict[str, Any] = {}
    for stage in STAGES:
        read = ctr.exec_run(["cat", f"{REPO_DIR}/build_output/{stage}/results.json"])
        try:
            stages[stage] = stage_verdict({**json.loads(read.output), **analysis(ctr, stage)}) \
                if read.exit_code == 0 else {"status": "absent"}
        except json.JSONDecodeError:
            stages[stage] = {"status": "invalid_json"}
    return stages


def run(repo: str, image: str, release: Path = RELEASE,
        timeout_s: int = WHOLE_TIMEOUT_S) -> dict[str, Any]:
    """run_all.sh in a throwaway container of ``image``, for ``timeout_s`` at most; per stage
    its verdict."""
    with container(repo, image, release) as ctr:
        code, out = ctr.exec_run(["timeout", str(timeout_s), "bash", RUN_ALL])
        tail = [ln for ln in out.decode(errors="replace").splitlines()
                if ln.startswith("[run_all]")]
        stages = verdicts(ctr)
    return {"run_all_exit": code, "run_all_lines": tail, "stages": stages}


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(run(args[0], args[1], Path(args[2]) if len(args) > 2 else RELEASE),
                     indent=1))
