"""C0 time: pytest-reb's mounted pyright against the official pip-install-then-run, same image.

    python bench/c0_vs_official.py [--image reb-demo:missing-dep] [--runs 3] [--unbound]

pytest-reb: a hardened container without network, node and pyright mounted
read-only, pyright bound to the report's interpreter (the tier's ``probe``).
Official: a container on the host network, as the official harness ran
them (the host's CA bundle mounted, ``PIP_CERT`` set), ``<python> -m pip
install pyright[nodejs]==<ours>`` into the environment under test, then
``<python> -m pyright <targets> --pythonpath <python> --level error
--outputjson`` from the checkout, as the one bundle that bound pyright ran
it, so both do the same analysis; ``--unbound`` drops ``--pythonpath`` as
the other 43 bundles did (pyright then resolves against the ``python3`` on
PATH, which can skip whole packages and look faster).  Same targets; a
fresh container per run, as the official harness had one per job.

Wall time on a shared machine is noisy, so the CPU time the container's
processes used (Docker's cgroup accounting) is measured too.  Prints medians
of both and the ratios; removes every container it made.

pytest-reb's runs are cold: each keeps its C0 answers in a place of its own, so pyright
runs every time, as on an image verified for the first time.  A second row times C0 where the
image's answer is already kept (a second verification of the same image: no command
runs, ``c0_imports``'s kept answers).
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import docker

from pytest_reb.pyramid import c0_imports
from pytest_reb.pyramid.c0_imports import probe
from pytest_reb.pyramid.c0_pyright import SOURCE_RULE, missing_imports
from pytest_reb.pyramid.context import Context
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import load_report
from pytest_reb.spec import OFFICIAL_REPO_DIR, OFFICIAL_REPORT_PATH, Repo
from pytest_reb.targets import LABEL_OWNER, LABEL_RUN, DockerTarget, imagecache, owner_label

CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
#: The kinds of host cache the bench's C0 answers are kept under (``imagecache.folder``).
BENCH_KEPT = "c0-driver-bench"
RUN_ID = f"bench-c0-{secrets.token_hex(4)}"


def cpu_seconds(ctr: Any) -> float:
    """CPU time all processes of a container have used so far."""
    stats = ctr.stats(stream=False, one_shot=True)
    return float(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9


def ours(image: str, python: str | None, kept: str | None = None) -> dict[str, Any]:
    """One C0 run as the plugin does it: the probe's wall time and the container's CPU.
    ``kept`` names where the driver's answers are kept (default: a new place, a first C0);
    the bench removes its places at the end."""
    c0_imports.KEPT = kept or f"{BENCH_KEPT}-{secrets.token_hex(4)}"
    return _ours(image, python)


def _ours(image: str, python: str | None) -> dict[str, Any]:
    target = DockerTarget(image, run_id=RUN_ID, gpus=[])
    try:
        raw = target.read_file(OFFICIAL_REPORT_PATH)
        ctx = Context(repo=Repo("bench/c0", commit="0" * 40), target_name=image,
                      connect=lambda: target, options=RebOptions(python=python),
                      read_report=lambda _: load_report(raw, source=OFFICIAL_REPORT_PATH))
        ctr = target.container()  # the CPU profile's container
        cpu, start = cpu_seconds(ctr), time.monotonic()
        outcome = probe(ctx)
        wall, cpu = time.monotonic() - start, cpu_seconds(ctr) - cpu
    finally:
        target.close()
    ev = outcome.evidence
    if ev.get("pyright_version") is None:
        sys.exit(f"pytest-reb C0 did not run pyright: {outcome.category}: {outcome.message}")
    return {"wall": wall, "cpu": cpu, "install_wall": 0.0, "install_cpu": 0.0,
            "missing": len(ev.get("missing_official") or []),
            "strict": len(ev.get("missing_strict") or []), "python": ev["python"],
            "targets": ev["targets"], "selection": ev.get("selection"),
            "cached": bool(ev.get("cached"))}


def _exec(ctr: Any, argv: list[str], timeout: int) -> tuple[bytes, float, float]:
    """Run ``argv`` in the checkout; its output, wall seconds and the container's CPU seconds."""
    cpu, start = cpu_seconds(ctr), time.monotonic()
    res = ctr.exec_run(["timeout", "-k", "5", str(timeout), *argv], workdir=OFFICIAL_REPO_DIR,
                       demux=True)
    wall, cpu = time.monotonic() - start, cpu_seconds(ctr) - cpu
    out, err = res.output
    if res.exit_code not in (0, 1):
        sys.exit(f"official run failed ({res.exit_code}): {argv}\n{(err or b'').decode()[-2000:]}")
    return out or b"", wall, cpu


def official(client: Any, image: str, python: str, targets: list[str],
             bind: bool) -> dict[str, Any]:
    """One C0 run the official way: install pyright into the environment, then run it."""
    ctr = client.containers.run(
        image, entrypoint=["sleep"], command=["infinity"], detach=True, init=True,
        network_mode="host",  # as the official harness ran its containers
        labels={LABEL_RUN: RUN_ID, LABEL_OWNER: owner_label()},
        volumes={CA_BUNDLE: {"bind": CA_BUNDLE, "mode": "ro"}},
        environment={"PIP_CERT": CA_BUNDLE, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                     "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        _, install_wall, install_cpu = _exec(ctr, [
            python, "-m", "pip", "install", "-q", f"pyright[nodejs]=={version('pyright')}"], 900)
        binding = ["--pythonpath", python] if bind else []
        out, wall, cpu = _exec(ctr, [python, "-m", "pyright", *targets, *binding,
                                     "--level", "error", "--outputjson"], 900)
    finally:
        ctr.remove(force=True)
    return {"wall": install_wall + wall, "cpu": install_cpu + cpu, "install_wall": install_wall,
            "install_cpu": install_cpu, "missing": len(missing_imports(data := json.loads(out))),
            "strict": len(missing_imports(data) | missing_imports(data, SOURCE_RULE))}


def official_targets(run: dict[str, Any]) -> list[str]:
    """The official command's targets: the project file, or the selected paths."""
    if run["selection"] in ("pyrightconfig.json", "pyproject.toml"):
        return ["--project", run["selection"]]
    return list(run["targets"])


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def timed(label: str, fn: Callable[[], dict[str, Any]], runs: int) -> list[dict[str, Any]]:
    out = []
    for i in range(runs):
        out.append(fn())
        print(f"  {label} run {i + 1}: {out[-1]['wall']:.1f}s wall, {out[-1]['cpu']:.1f}s CPU",
              file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default=None,
                        help="default: the demo's missing-dep image, built on first use")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=None, help="default: the report's python_path")
    parser.add_argument("--unbound", action="store_true",
                        help="run the official pyright without --pythonpath (43 of 44 bundles)")
    args = parser.parse_args(argv)
    if args.image is None:
        from common import demo_images

        [args.image] = demo_images("missing-dep")
    client = docker.from_env()
    try:
        mine = timed("pytest-reb", lambda: ours(args.image, args.python), args.runs)
        python, targets = mine[0]["python"], official_targets(mine[0])
        theirs = timed("official", lambda: official(client, args.image, python, targets,
                                                    not args.unbound), args.runs)
        kept = f"{BENCH_KEPT}-kept"
        ours(args.image, args.python, kept)  # the first C0 of the image keeps its answer
        again = timed("pytest-reb, kept", lambda: ours(args.image, args.python, kept),
                      args.runs)
        assert all(r["cached"] for r in again) and not any(r["cached"] for r in mine)
    finally:
        for place in imagecache.folder("").glob(f"{BENCH_KEPT}-*"):
            shutil.rmtree(place, ignore_errors=True)
        for ctr in client.containers.list(all=True, filters={"label": f"{LABEL_RUN}={RUN_ID}"}):
            ctr.remove(force=True)
    way = "official: pip install + run" + ("" if args.unbound else " (bound)")
    print(f"C0 on {args.image}: {python}, targets {' '.join(targets)}; "
          f"medians of {args.runs} runs")
    print(f"| {'way':<36} | {'wall s':>7} | {'CPU s':>6} | {'of it pip install (wall/CPU)':>28} "
          f"| {'missing (official count)':>24} | {'missing + stub-only':>19} |")
    print(f"|{'-' * 38}|{'-' * 9}|{'-' * 8}|{'-' * 30}|{'-' * 26}|{'-' * 21}|")
    for name, runs in (("pytest-reb C0 (mounted, bound)", mine), (way, theirs),
                       ("pytest-reb C0, the answer kept", again)):
        install = f"{median(runs, 'install_wall'):.1f} / {median(runs, 'install_cpu'):.1f}"
        print(f"| {name:<36} | {median(runs, 'wall'):>7.1f} | {median(runs, 'cpu'):>6.1f} | "
              f"{install:>28} | {runs[0]['missing']:>24} | {runs[0]['strict']:>19} |")
    print("the official count is reportMissingImports only: a missing package with typeshed "
          "stubs (the missing-dep image's PyYAML) is reportMissingModuleSource, a warning that "
          "the official --level error drops, so the official way sees 0 on this image; the last "
          "column is pytest-reb's strict count (that rule pinned to error, and stub-only "
          "packages of the environment) and, officially, what the same command printed of both "
          "rules")
    print(f"official / pytest-reb: {median(theirs, 'wall') / median(mine, 'wall'):.1f}x wall, "
          f"{median(theirs, 'cpu') / median(mine, 'cpu'):.1f}x CPU; with the image's answer "
          f"kept {median(theirs, 'wall') / max(median(again, 'wall'), 1e-3):.0f}x wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
