"""The CPU pyramid against the official bundle's corresponding stages, same image, tier by tier.

    python bench/vs_official.py --release DIR [--bundle OWNER@REPO] [--image TAG] [--repeat N]

``--release`` is a checkout (or bare git directory) of the official release;
nothing of it is part of this repository.  Its ``scripts/<bundle>/benchmark_scripts``
is copied into the checkout of a fresh container of the image, as its harness
copied it, and the stages that correspond to a tier are run one after another
the way ``run_all.sh`` runs them (from the checkout, ``|| true``): pyright/C0,
cpu/C1, cuda/C2, env_size and hallucination/C5.  The container is on the host
network, as the official ones were (the pyright stage pip-installs pyright).
The bundle's cpu stage runs its own repository's entrypoint, so it is timed
only when the image is that repository (``--cpu-is-own``); on the demo it is
``n/a``, never another repository's work passed off as the demo's.  The demo
image has no ``python`` on PATH, which the bundles call: the official side
links it to ``python3`` first (outside the timed stages).

pytest-reb runs the same tiers (``-m "c0 or c1 or c2 or c5"``) on the same
image.  Rounds interleave, order alternating.  Wall is per stage and tier;
CPU is the containers' own (cgroup v1 ``cpuacct``) per stage on the official
side, per run on ours (one container serves every tier), plus pytest's.

Every tier's time is accounted for (issue 31 item 2): the test's call time,
the outcome's duration, and each command the tier sent by name (fakes scan,
extension sweep, env-size walk, ...); what is left is host side (witness
build, integrity, fixtures).  The bench prints that split from the last round.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import DEMO_MODULE, bench_labels, demo_images, machine, measure, median, table

CHECKOUT = "/data/project/repo"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # the official containers had the host's
CGROUP = Path("/sys/fs/cgroup/cpuacct/docker")
TIERS = ("c0", "c1", "c2", "c5")
#: (official stage, tier, argv after ``cd`` to the checkout); ``{py}`` is the report's python.
STAGES = (("pyright", "c0", ["bash", "benchmark_scripts/run_pyright_missing_imports.sh",
                             "--repo", CHECKOUT]),
          ("cpu", "c1", ["bash", "benchmark_scripts/run_cpu_entrypoint.sh"]),
          ("cuda", "c2", ["{py}", "benchmark_scripts/check_cuda_available.py"]),
          ("env_size", "c5", ["python", "benchmark_scripts/measure_env_size.py"]),
          ("hallucination", "c5", ["python", "benchmark_scripts/validate_agent_report.py"]))
#: What a tier's command is, by the file it runs (item 2's names).
COMMAND_NAMES = {"fakes_probe.py": "fakes scan", "ext_probe.py": "extension sweep",
                 "env_size_probe.py": "env-size walk", "cuda_probe.py": "CUDA probe",
                 "node": "pyright", "busybox": "file tests and output folder"}
RECORDER = '''
import json, os
from pytest_reb import targets as target

_exec = target.DockerTarget._exec

def _recorded(self, argv, *, timeout, env, cwd, devices):
    res = _exec(self, argv, timeout=timeout, env=env, cwd=cwd, devices=devices)
    with open(os.environ["REB_BENCH_RECORD"], "a") as fh:
        fh.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                             "argv": argv[:3], "duration": res.duration}) + "\\n")
    return res

target.DockerTarget._exec = _recorded

def pytest_runtest_logreport(report):
    if report.when == "call":
        with open(os.environ["REB_BENCH_RECORD"], "a") as fh:
            fh.write(json.dumps({"call": report.nodeid, "duration": report.duration}) + "\\n")
'''


def container_cpu(cid: str) -> float | None:
    """CPU seconds the container's processes have used (cgroup v1), None where unreadable."""
    try:
        return int((CGROUP / cid / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None


def bundle_tar(release: Path, bundle: str) -> bytes:
    """``benchmark_scripts/`` of the bundle as a tar rooted at the checkout."""
    prefix = f"scripts/{bundle}/"
    src = io.BytesIO()
    if (release / "scripts").is_dir():
        with tarfile.open(fileobj=src, mode="w") as tar:
            tar.add(release / prefix / "benchmark_scripts", arcname=prefix + "benchmark_scripts")
    else:  # a bare git directory (what ``fetch`` brings)
        src.write(subprocess.run(["git", f"--git-dir={release}", "archive", "HEAD",
                                  prefix + "benchmark_scripts"], capture_output=True,
                                 check=True).stdout)
    src.seek(0)
    out = io.BytesIO()
    with tarfile.open(fileobj=src) as tin, tarfile.open(fileobj=out, mode="w") as tout:
        for member in tin.getmembers():
            if not member.name.startswith(prefix):
                continue
            data = tin.extractfile(member) if member.isfile() else None
            member.name = member.name[len(prefix):]
            tout.addfile(member, data)
    return out.getvalue()


def official(image: str, tar: bytes, label: str, python: str, cpu_own: bool
             ) -> dict[str, tuple[float, float, str] | None]:
    """One fresh container, the corresponding stages in run_all.sh's order: (wall, CPU, the
    status its ``build_output/<stage>/results.json`` gives) each."""
    import docker

    client = docker.from_env()
    ctr = client.containers.run(image, ["infinity"], entrypoint="sleep", detach=True,
                                network_mode="host", labels=dict([label.split("=", 1)]),
                                volumes={CA_BUNDLE: {"bind": CA_BUNDLE, "mode": "ro"}},
                                environment={"PIP_CERT": CA_BUNDLE,
                                             "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    out: dict[str, tuple[float, float, str] | None] = {}
    try:
        ctr.put_archive(CHECKOUT, tar)
        ctr.exec_run(["sh", "-c", "command -v python || ln -s \"$(command -v python3)\" "
                      "/usr/local/bin/python"])
        for stage, _, argv in STAGES:
            if stage == "cpu" and not cpu_own:
                out[stage] = None
                continue
            argv = [python if a == "{py}" else a for a in argv]
            before = container_cpu(ctr.id) or 0.0
            start = time.perf_counter()
            subprocess.run(["docker", "exec", "-w", CHECKOUT, ctr.id, *argv],
                           capture_output=True)
            wall = time.perf_counter() - start
            cpu = (container_cpu(ctr.id) or 0.0) - before
            res = ctr.exec_run(["cat", f"{CHECKOUT}/build_output/{stage}/results.json"])
            try:
                status = str(json.loads(res.output).get("status", "?"))
            except ValueError:
                status = "no results.json"
            out[stage] = (wall, cpu, status)
    finally:
        ctr.remove(force=True)
    return out


class CgroupMeter:
    """The CPU of every container with the label, polled while they live (ours are removed
    at the end of the run, and their cgroup with them)."""

    def __init__(self, label: str) -> None:
        self.label, self.seen = label, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        key, value = self.label.split("=", 1)
        while not self._stop.is_set():
            for cid in subprocess.run(["docker", "ps", "-q", "--no-trunc", "--filter",
                                       f"label={key}={value}"], capture_output=True,
                                      text=True).stdout.split():
                cpu = container_cpu(cid)
                if cpu is not None:
                    self.seen[cid] = max(cpu, self.seen.get(cid, 0.0))
            self._stop.wait(0.3)

    def __enter__(self) -> CgroupMeter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def ours(image: str, where: Path, tag: str, label: str) -> dict[str, Any]:
    """One pytest-reb run of the CPU pyramid: per-tier call times, commands, outcomes, CPU."""
    log = where / f"{tag}.jsonl"
    outdir = where / tag
    cmd = [sys.executable, "-m", "pytest", "--rootdir", str(where), "-p", "no:cacheprovider",
           "-p", "no:hypothesispytest", "-q", "--reb-image", image, "--reb-outdir", str(outdir),
           "-m", " or ".join(TIERS), "test_demo__tinynet.py"]
    with CgroupMeter(label) as meter:
        wall, host_cpu = measure(cmd, cwd=where, env={"REB_BENCH_RECORD": str(log)})
    calls: dict[str, float] = {}
    commands: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        if "call" in rec:
            calls[_tier(rec["call"])] = rec["duration"]
        else:
            commands[_tier(rec["test"])][_name(rec["argv"])] += rec["duration"]
    [path] = outdir.glob("*/outcomes.jsonl")
    durations = {}
    for line in path.read_text().splitlines():
        o = json.loads(line)
        durations[o["tier"]] = o.get("duration") or 0.0
    return {"wall": wall, "cpu": sum(meter.seen.values()) + host_cpu, "calls": calls,
            "commands": commands, "durations": durations}


def _tier(nodeid: str) -> str:
    for tier, word in (("c0", "c0_"), ("c1", "c1_"), ("c2", "c2_"), ("c5", "c5_")):
        if f"test_{word}" in nodeid:
            return tier
    return "other"


def _name(argv: list[str]) -> str:
    for part in argv[:3]:
        base = part.rsplit("/", 1)[-1]
        if base in COMMAND_NAMES:
            return COMMAND_NAMES[base]
    if len(argv) > 1 and argv[1] == "-c":
        return "interpreter probe (strict + official questions)"
    return "the tier's own command"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, required=True)
    parser.add_argument("--bundle", default="DepthAnything@Depth-Anything-V2")
    parser.add_argument("--image")
    parser.add_argument("--cpu-is-own", action="store_true",
                        help="the image is the bundle's repository: time its cpu stage too")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    image = args.image or demo_images("good")[0]
    tar = bundle_tar(args.release, args.bundle)
    python = "/opt/envs/tinynet/bin/python"
    off: list[dict[str, tuple[float, float, str] | None]] = []
    mine: list[dict[str, Any]] = []
    with bench_labels() as label, tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        (where / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
        (where / "conftest.py").write_text(RECORDER)
        for i in range(args.repeat):
            for side in (("ours", "official") if i % 2 == 0 else ("official", "ours")):
                if side == "ours":
                    mine.append(ours(image, where, f"run{i}", label))
                else:
                    off.append(official(image, tar, label, python, args.cpu_is_own))
    print(f"pytest-reb vs the official bundle {args.bundle} on {image}, {args.repeat} "
          f"interleaved rounds; {machine()}")
    rows = []
    for stage, tier, _ in STAGES:
        walls = [r[stage][0] for r in off if r[stage] is not None]
        cpus = [r[stage][1] for r in off if r[stage] is not None]
        said = sorted({r[stage][2] for r in off if r[stage] is not None}) or ["not run"]
        rows.append((f"official {stage} / {tier.upper()}", median(walls) if walls else "n/a",
                     median(cpus) if cpus else "n/a", ", ".join(said)))
    rows += [(f"pytest-reb {t.upper()} (call)", median([m["calls"].get(t, 0.0) for m in mine]),
              "", "") for t in TIERS]
    print(table(["stage / tier", "wall s", "container CPU s", "status"], rows))
    ours_tiers = {t: median([m["calls"].get(t, 0.0) for m in mine]) for t in TIERS}
    comparable = [(tier, stage) for stage, tier, _ in STAGES
                  if all(r[stage] is not None for r in off)]
    off_sum = median([sum(r[s][0] for _, s in comparable) for r in off])
    ours_sum = sum(ours_tiers[t] for t in {t for t, _ in comparable})
    print(f"\ncorresponding stages ({', '.join(s for _, s in comparable)}): official "
          f"{off_sum:.1f} s wall, pytest-reb's tiers {ours_sum:.1f} s: {off_sum / ours_sum:.2f}x "
          "(a stage whose status is failure may have stopped before its work; see its row)")
    print(f"pytest-reb whole run: wall {median([m['wall'] for m in mine]):.1f} s, CPU "
          f"{median([m['cpu'] for m in mine]):.1f} s (containers + pytest)")
    last = mine[-1]
    split = []
    for t in TIERS:
        named = last["commands"].get(t, {})
        call = last["calls"].get(t, 0.0)
        parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(named.items(), key=lambda kv: -kv[1]))
        split.append((t.upper(), call, last["durations"].get(t, 0.0),
                      call - sum(named.values()), parts))
    print("\nwhere each tier's time goes (last round; C5's call also runs C2 when -m c5 alone)")
    print(table(["tier", "call s", "outcome s", "host side s", "commands s"], split))
    return 0


if __name__ == "__main__":
    sys.exit(main())
