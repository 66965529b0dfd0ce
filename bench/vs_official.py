"""The CPU pyramid against the official bundle's corresponding stages, same images, tier by tier.

    python bench/vs_official.py [--release DIR] [--image TAG=OWNER/NAME ...] [--repeat N]

Subjects: the demo image (with ``--bundle``'s bundle, default Depth-Anything-V2's,
since the demo is none of the 44) and every ``--image TAG=OWNER/NAME``, an image of
one of the 44 built by ``tests/realruns/build.py OWNER/NAME --keep`` (default: the
two kept here, MultiModalMamba's and VisionMamba's, where they exist).

Official side: the bundle's ``run_all.sh`` of the release (``--release``, a checkout
or bare git directory; nothing of it is in this repository), unmodified, in the
throwaway container ``tests/realruns/official.py`` makes (the bundle copied into the
checkout as the harness copies it, the official base's ``python``, Node.js 20, npm and
git), so every stage runs as it runs there, the pyright stage's own pip install
included.  Each output line is stamped on arrival with the time and the container's
CPU (cgroup v1 ``cpuacct.usage``: every process of ``docker exec`` is in it), so a
stage's wall and CPU run from its header line to the next one.  The container's
processes are sampled from the host every 0.05 s (their command lines, from
``/proc``), which splits the pyright stage into pyright's pip install, npm fetching
its JS package, the analysis, and the rest (the bundles word their own log lines too
differently to split on them).  Stages without a tier (prepare, single_gpu, multi_gpu, summary) are
timed and shown, not compared; on the demo the cpu stage runs another repository's
entrypoint, so it is shown and not compared either.

pytest-reb side: ``pytest MODULE --reb-image TAG -m "c0 or c1 or c2 or c5"`` from the
checkout, with a recorder plugin (``-p recplug``) that writes each test's wall and
the pytest process's CPU, and each command a tier sent (fakes scan, extension sweep,
env-size walk, ...).  A sampler polls the cgroups of the run's containers (the
target's and its twin's, by the bench's label) every 0.1 s, so a tier's CPU is the
pytest process's plus its containers' between the test's start and end
(interpolated; a container's last 0.1 s before its removal can be missed).

Each pytest-reb run starts cold by default: its own ``XDG_CACHE_HOME``, so every reading
kept per image id (the checkout's commit, the integrity check before any command, the
environment's size, C2's extension sweep) is made again, as on an image verified for the
first time; the witness, built once per machine, is shared.  ``--warm`` keeps the
machine's cache, as a second verification of the same image reads it.  A cold run's
bytecode compile (``pytest_reb/targets/bytecode.py``, detached from the run) is waited for before
the next side starts; its CPU is in no side's figure.

Rounds interleave: per round and subject the sides alternate which goes first.
Prints per subject the stage/tier table (medians), the ratios official / pytest-reb of
the corresponding stages, wall and CPU, the split of each tier's time (last round),
and the same ratios over all subjects.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import (
    DEMO_MODULE,
    ROOT,
    bench_labels,
    demo_images,
    machine,
    measure,
    median,
    settle_bytecode,
    table,
)

sys.path.insert(0, str(ROOT / "tests" / "realruns"))
import official  # tests/realruns is not a package

CGROUP = Path("/sys/fs/cgroup/cpuacct/docker")
TIERS = ("c0", "c1", "c2", "c5")
#: The official stages in run_all.sh's order, and the tier each corresponds to (None: none).
STAGE_TIER = {"pyright": "c0", "prepare": None, "cpu": "c1", "cuda": "c2", "single_gpu": None,
              "multi_gpu": None, "env_size": "c5", "hallucination": "c5", "summary": None}
#: What a tier's command is, by the file it runs (issue 31's item 2).
COMMAND_NAMES = {"fakes_probe.py": "fakes scan", "ext_probe.py": "extension sweep",
                 "env_size_probe.py": "env-size walk", "cuda_probe.py": "CUDA probe",
                 "node": "pyright", "busybox": "file tests and output folder"}
#: The two images of the 44 kept on this machine for the bench (build.py ... --keep).
KEPT = {"reb-real:kyegomez.multimodalmamba": "kyegomez/MultiModalMamba",
        "reb-real:kyegomez.visionmamba": "kyegomez/VisionMamba"}
RECORDER = '''
"""The bench's recorder: per test its wall and this process's CPU, per command its time."""
import json, os, resource, threading, time

import pytest
from pytest_reb.targets import docker as _docker

_exec = _docker.DockerTarget._exec


def _write(rec):
    with open(os.environ["REB_BENCH_RECORD"], "a") as fh:
        fh.write(json.dumps(rec) + "\\n")


def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _recorded(self, argv, **kwargs):
    res = _exec(self, argv, **kwargs)
    _write({"test": os.environ.get("PYTEST_CURRENT_TEST", ""), "argv": list(argv[:3]),
            "duration": res.duration, "cpu": res.cpu_seconds,
            "thread": threading.current_thread().name})
    return res


_docker.DockerTarget._exec = _recorded


def pytest_sessionstart(session):
    _write({"session": "start", "t": time.time(), "cpu": _cpu()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t0, c0 = time.time(), _cpu()
    yield
    _write({"item": item.nodeid, "start": t0, "end": time.time(), "cpu": _cpu() - c0})


def pytest_runtest_logreport(report):
    _write({"phase": report.when, "nodeid": report.nodeid, "duration": report.duration})


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    _write({"session": "end", "t": time.time(), "cpu": _cpu()})
'''


@dataclass(frozen=True)
class Subject:
    """One image: the bundle run on it, the module pytest-reb runs, whether the bundle's cpu
    stage is this image's own entrypoint (and so corresponds to C1)."""

    image: str
    bundle: str
    module: Path
    cpu_own: bool
    assets: Path | None = None

    @property
    def name(self) -> str:
        return self.image if self.cpu_own else f"{self.image} (demo, {self.bundle}'s bundle)"


# -- the official side ---------------------------------------------------------------------

def container_cpu(cid: str) -> float | None:
    """CPU seconds the container's processes have used (cgroup v1), None where unreadable."""
    try:
        return int((CGROUP / cid / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None


#: A header of run_all.sh's ``run_stage``: each bundle spells it its own way
#: (``===== [cpu] =====``, ``===== stage: cpu =====``, ``[run_all] Running stage: cpu``).
HEADER = re.compile(r"=====|running stage", re.IGNORECASE)


def stage_spans(events: Sequence[tuple[float, float, str]], end: tuple[float, float]
                ) -> dict[str, tuple[float, float, float, float]]:
    """Per stage (start s, end s, CPU at start, CPU at end) from run_all.sh's stamped output
    lines ``(t, cpu, line)``: a stage starts at the first header line that names it and
    ends where the next stage starts, or at ``end`` (t, cpu) for the last.  A stage's own
    output naming another stage later is ignored (only header lines count, once each)."""
    starts: list[tuple[str, float, float]] = []
    seen: set[str] = set()
    for t, cpu, line in events:
        if not HEADER.search(line):
            continue
        for stage in STAGE_TIER:
            if stage not in seen and re.search(rf"(?<![\w-]){stage}(?![\w-])", line):
                seen.add(stage)
                starts.append((stage, t, cpu))
                break
    spans = {}
    for i, (stage, t, cpu) in enumerate(starts):
        t1, c1 = (starts[i + 1][1], starts[i + 1][2]) if i + 1 < len(starts) else end
        spans[stage] = (t, t1, cpu, c1)
    return spans


def classify(argv: Sequence[str]) -> str | None:
    """What a process of the pyright stage is doing, by its command line: pyright's own
    install (pip, or npm fetching its JS package on first run) or pyright's analysis."""
    names = [a.rsplit("/", 1)[-1] for a in argv]
    if ("install" in argv and any(n in ("pip", "pip3") for n in names)) or \
            any(n == "-m" and nxt == "pip" for n, nxt in itertools.pairwise(argv)):
        return "pip install"
    if any(n in ("npm", "npm-cli.js", "npx") for n in names):
        return "npm (pyright's JS package)"
    if any("pyright" in a for a in argv):
        return "pyright analysis"
    return None


#: How the pyright stage's time is told apart; what no process of these was running is the
#: stage's own shell and Python (target discovery, reading pyright's JSON, writing results).
PYRIGHT_PARTS = ("pip install", "npm (pyright's JS package)", "pyright analysis", "the rest")


def pyright_split(samples: Sequence[tuple[float, float, frozenset[str]]],
                  span: tuple[float, float, float, float]) -> dict[str, tuple[float, float]]:
    """The pyright stage's (wall, CPU) per part, from the container's processes sampled as
    ``(t, cpu, the classes running)``: each interval between two samples inside the stage goes
    to the first of ``PYRIGHT_PARTS`` running at its end; what is left of the stage is "the
    rest"."""
    t0, t1, c0, c1 = span
    got = {part: [0.0, 0.0] for part in PYRIGHT_PARTS}
    inside = [x for x in samples if t0 <= x[0] <= t1]
    for (ta, ca, _), (tb, cb, running) in itertools.pairwise(inside):
        part = next((p for p in PYRIGHT_PARTS[:-1] if p in running), None)
        if part is not None:
            got[part][0] += tb - ta
            got[part][1] += cb - ca
    got["the rest"] = [(t1 - t0) - sum(v[0] for v in got.values()),
                       (c1 - c0) - sum(v[1] for v in got.values())]
    return {k: (v[0], v[1]) for k, v in got.items()}


def processes(cid: str) -> frozenset[str]:
    """The classes (``classify``) of the container's processes now, read from the host."""
    found = set()
    try:
        pids = (CGROUP / cid / "cgroup.procs").read_text().split()
    except OSError:
        return frozenset()
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        kind = classify([a.decode(errors="replace") for a in argv if a])
        if kind:
            found.add(kind)
    return frozenset(found)


def official_side(subject: Subject, release: Path, label: str) -> dict[str, Any]:
    """run_all.sh once in a fresh throwaway container; every stage's wall, CPU and status."""
    key, value = label.split("=", 1)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with official.container(subject.bundle, subject.image, release, {key: value}) as ctr:
        setup = time.perf_counter() - start
        cpu0 = container_cpu(ctr.id) or 0.0
        t0 = time.perf_counter()
        events: list[tuple[float, float, str]] = []
        samples: list[tuple[float, float, frozenset[str]]] = []
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                running = processes(ctr.id)
                samples.append((time.perf_counter() - t0,
                                (container_cpu(ctr.id) or cpu0) - cpu0, running))
                done.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        proc = subprocess.Popen(["docker", "exec", ctr.id, "timeout",
                                 str(official.WHOLE_TIMEOUT_S), "bash", official.RUN_ALL],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for raw in proc.stdout:
            events.append((time.perf_counter() - t0, (container_cpu(ctr.id) or cpu0) - cpu0,
                           raw.decode(errors="replace").rstrip("\n")))
        proc.wait()
        end = (time.perf_counter() - t0, (container_cpu(ctr.id) or cpu0) - cpu0)
        done.set()
        sampler.join()
        verdicts = official.verdicts(ctr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spans = stage_spans(events, end)
    stages = {s: (t1 - t, c1 - c) for s, (t, t1, c, c1) in spans.items()}
    split = pyright_split(samples, spans["pyright"]) if "pyright" in spans else {}
    return {"setup": setup, "wall": end[0], "cpu": end[1],
            "host_cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "stages": stages, "pyright": split, "exit": proc.returncode,
            "status": {s: (verdicts.get(s) or {}).get("status", "not run") if s in verdicts
                       else "-" for s in STAGE_TIER},
            "log": [f"{t:8.2f} {c:8.2f} {line}" for t, c, line in events]}


# -- the pytest-reb side -------------------------------------------------------------------

def value_at(series: Sequence[tuple[float, float]], t: float) -> float:
    """A cumulative CPU counter's value at ``t`` from its samples ``(t, value)`` (in time
    order): 0 before the first (the container did not exist yet, or had just started),
    the last after the last, linear in between."""
    if not series or t <= series[0][0]:
        return 0.0 if not series or t < series[0][0] else series[0][1]
    for (ta, va), (tb, vb) in itertools.pairwise(series):
        if t <= tb:
            return va + (vb - va) * (t - ta) / (tb - ta) if tb > ta else vb
    return series[-1][1]


@dataclass
class CgroupSampler:
    """The CPU of every container with the label, sampled every ``interval`` s while they live
    (ours are removed at the end of the run, and their cgroup with them)."""

    label: str
    interval: float = 0.1
    series: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    _labelled: dict[str, bool] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _matches(self, cid: str) -> bool:
        if cid not in self._labelled:
            import docker

            key, value = self.label.split("=", 1)
            try:
                labels = docker.from_env().api.inspect_container(cid)["Config"]["Labels"] or {}
            except Exception:  # gone already, or not a container
                labels = {}
            self._labelled[cid] = labels.get(key) == value
        return self._labelled[cid]

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                ids = [d.name for d in CGROUP.iterdir() if len(d.name) == 64]
            except OSError:
                ids = []
            for cid in ids:
                if self._matches(cid):
                    cpu = container_cpu(cid)
                    if cpu is not None:
                        self.series[cid].append((time.time(), cpu))
            self._stop.wait(self.interval)

    def __enter__(self) -> CgroupSampler:
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, t0: float, t1: float) -> float:
        return sum(value_at(s, t1) - value_at(s, t0) for s in self.series.values())

    def total(self) -> float:
        return sum(s[-1][1] for s in self.series.values() if s)


def tier_of(nodeid: str) -> str:
    for tier in TIERS:
        if f"test_{tier}_" in nodeid:
            return tier
    return "other"


def command_name(argv: Sequence[str]) -> str:
    for part in argv[:3]:
        base = part.rsplit("/", 1)[-1]
        if base in COMMAND_NAMES:
            return COMMAND_NAMES[base]
    if len(argv) > 1 and argv[1] == "-c":
        return "interpreter probe (strict + official questions)"
    return "the tier's own command"


def read_record(lines: Iterable[str]) -> dict[str, Any]:
    """The recorder's lines: per tier its wall (setup + call + teardown), its start and end,
    the pytest process's CPU, its commands by name; the session's start and end."""
    tiers: dict[str, dict[str, Any]] = defaultdict(lambda: {"wall": 0.0, "cpu": 0.0,
                                                            "phases": defaultdict(float)})
    commands: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    #: per thread that sent them (a lane's, or the main thread), each command's (wall, CPU)
    by_thread: dict[str, dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0.0]))
    session: dict[str, tuple[float, float]] = {}
    for line in lines:
        rec = json.loads(line)
        if "session" in rec:
            session[rec["session"]] = (rec["t"], rec["cpu"])
        elif "item" in rec:
            tier = tiers[tier_of(rec["item"])]
            tier["wall"] += rec["end"] - rec["start"]
            tier["cpu"] += rec["cpu"]
            tier.setdefault("spans", []).append((rec["start"], rec["end"]))
        elif "phase" in rec:
            tiers[tier_of(rec["nodeid"])]["phases"][rec["phase"]] += rec["duration"]
        else:
            commands[tier_of(rec["test"])][command_name(rec["argv"])] += rec["duration"]
            got = by_thread[rec.get("thread", "?")][command_name(rec["argv"])]
            got[0] += rec["duration"]
            got[1] += rec.get("cpu") or 0.0
    return {"tiers": tiers, "commands": commands, "by_thread": by_thread, "session": session}


def cold_cache(where: Path) -> dict[str, str]:
    """The environment of a run that reads nothing kept per image: a cache folder of its own,
    and the machine's witness build named by ``REB_WITNESS_LIB`` (it depends on the machine,
    not on the image)."""
    from pytest_reb import witness

    where.mkdir(parents=True)
    built = witness.library_path()
    return {"XDG_CACHE_HOME": str(where), **({"REB_WITNESS_LIB": built} if built else {})}


def ours_side(subject: Subject, where: Path, tag: str, label: str,
              extra: Sequence[str] = (), *, warm: bool = False) -> dict[str, Any]:
    """One pytest-reb run of the CPU pyramid on the subject: per tier wall, CPU, commands."""
    log, outdir = where / f"{tag}.jsonl", where / tag
    cmd = [sys.executable, "-m", "pytest", str(subject.module), "-p", "no:cacheprovider",
           "-p", "no:hypothesispytest", "-p", "recplug", "-q", "--reb-image", subject.image,
           "--reb-outdir", str(outdir), "-m", " or ".join(TIERS),
           *(["--reb-assets", str(subject.assets)] if subject.assets else []), *extra]
    env = {"REB_BENCH_RECORD": str(log),
           "PYTHONPATH": os.pathsep.join([str(where), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           **({} if warm else cold_cache(where / f"{tag}-cache"))}
    started = time.time()
    with CgroupSampler(label) as meter:
        wall, host_cpu = measure(cmd, cwd=ROOT, env=env)
    settle_bytecode()  # a cold run's detached compile must not slow the next side
    rec = read_record(log.read_text().splitlines())
    tiers = {}
    for t in TIERS:
        got = rec["tiers"].get(t)
        if got is None:
            continue
        ctr = sum(meter.between(a, b) for a, b in got["spans"])
        tiers[t] = {"wall": got["wall"], "cpu": got["cpu"] + ctr, "container_cpu": ctr,
                    "phases": dict(got["phases"]), "commands": dict(rec["commands"].get(t, {}))}
    [path] = outdir.glob("*/outcomes.jsonl")
    outcomes, lanes = {}, False
    for line in path.read_text().splitlines():
        o = json.loads(line)
        outcomes[o["tier"]] = (o.get("duration") or 0.0, o.get("status", "?"))
        lanes = lanes or bool((o.get("evidence") or {}).get("side_by_side"))
    ses = rec["session"]
    in_tests = sum(v["wall"] for v in tiers.values())
    return {"wall": wall, "cpu": host_cpu + meter.total(), "host_cpu": host_cpu,
            "by_thread": {k: dict(v) for k, v in rec["by_thread"].items()},
            "container_cpu": meter.total(), "tiers": tiers, "outcomes": outcomes, "lanes": lanes,
            "start": ses["start"][0] - started if "start" in ses else None,
            "rest": wall - in_tests}


# -- the report ----------------------------------------------------------------------------

def compared(subject: Subject) -> list[str]:
    """The official stages set beside a tier on this subject."""
    return [s for s, t in STAGE_TIER.items() if t and (s != "cpu" or subject.cpu_own)]


def ratios(subject: Subject, off: dict[str, Any], mine: dict[str, Any],
           without: Sequence[str] = ()) -> tuple[float, float, float, float]:
    """(official wall, official CPU, pytest-reb wall, pytest-reb CPU) of the corresponding
    stages and tiers in one round (less the stages ``without`` and their tiers)."""
    stages = [s for s in compared(subject) if s not in without]
    tiers = {STAGE_TIER[s] for s in stages}
    ow = sum(off["stages"].get(s, (0.0, 0.0))[0] for s in stages)
    oc = sum(off["stages"].get(s, (0.0, 0.0))[1] for s in stages)
    mw = sum(mine["tiers"].get(t, {}).get("wall", 0.0) for t in tiers)
    mc = sum(mine["tiers"].get(t, {}).get("cpu", 0.0) for t in tiers)
    return ow, oc, mw, mc


def report(subject: Subject, off: list[dict[str, Any]], mine: list[dict[str, Any]]) -> None:
    def med(values: Iterable[float]) -> float:
        got = list(values)
        return median(got) if got else 0.0

    print(f"\n## {subject.name}: {len(off)} official and {len(mine)} pytest-reb run(s)")
    rows = []
    stages = compared(subject)
    for stage, tier in STAGE_TIER.items():
        walls = [r["stages"][stage][0] for r in off if stage in r["stages"]]
        cpus = [r["stages"][stage][1] for r in off if stage in r["stages"]]
        said = ", ".join(sorted({r["status"][stage] for r in off}))
        role = (tier.upper() if stage in stages else
                "- (another repository's entrypoint)" if tier else "- (no tier)")
        rows.append((f"official {stage}", role, med(walls) if walls else "not run",
                     med(cpus) if cpus else "", said))
        if stage == "pyright":
            for part in PYRIGHT_PARTS:
                got = [r["pyright"][part] for r in off if part in r["pyright"]]
                rows.append((f"  of it {part}", "", med(g[0] for g in got),
                             med(g[1] for g in got), ""))
    rows.append(("official container + base (before run_all)", "-", med(r["setup"] for r in off),
                 "", ""))
    for t in TIERS:
        got = [m["tiers"][t] for m in mine if t in m["tiers"]]
        said = ", ".join(sorted({m["outcomes"].get(t, (0, "not run"))[1] for m in mine}))
        rows.append((f"pytest-reb {t.upper()}", t.upper(), med(g["wall"] for g in got),
                     med(g["cpu"] for g in got), said))
    rows.append(("pytest-reb start, collection, finish", "-", med(m["rest"] for m in mine), "",
                 ""))
    print(table(["stage / tier", "corresponds to", "wall s", "CPU s", "status"], rows))
    per_round = [ratios(subject, o, m) for o, m in zip(off, mine, strict=False)]
    ow, oc, mw, mc = (med(r[i] for r in per_round) for i in range(4))
    print(f"corresponding ({' + '.join(stages)} vs "
          f"{' + '.join(sorted({STAGE_TIER[s].upper() for s in stages}))}): official "
          f"{ow:.1f} s wall / {oc:.1f} s CPU, pytest-reb {mw:.1f} s / {mc:.1f} s: "
          f"official / pytest-reb {ow / mw:.2f}x wall, {oc / mc:.2f}x CPU")
    print(f"whole runs: official run_all.sh {med(r['wall'] for r in off):.1f} s wall / "
          f"{med(r['cpu'] for r in off):.1f} s container CPU (+ "
          f"{med(r['setup'] for r in off):.1f} s container and base before it); pytest "
          f"{med(m['wall'] for m in mine):.1f} s wall / {med(m['cpu'] for m in mine):.1f} s CPU "
          f"(its process {med(m['host_cpu'] for m in mine):.1f} + containers "
          f"{med(m['container_cpu'] for m in mine):.1f})")
    last = mine[-1]
    split = []
    for t in TIERS:
        got = last["tiers"].get(t)
        if got is None:
            continue
        named = got["commands"]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(named.items(), key=lambda kv: -kv[1]))
        ph = got["phases"]
        split.append((t.upper(), got["wall"], f"{ph.get('setup', 0):.2f} / "
                      f"{ph.get('call', 0):.2f} / {ph.get('teardown', 0):.2f}",
                      last["outcomes"].get(t, (0.0,))[0], got["wall"] - sum(named.values()),
                      f"{got['cpu'] - got['container_cpu']:.2f} + {got['container_cpu']:.2f}",
                      parts))
    print("where each tier's time goes (last round; commands can overlap: C5's twin)")
    print(table(["tier", "wall s", "setup / call / teardown s", "outcome s",
                 "wall outside commands s", "CPU pytest + containers s", "commands s"], split))
    # under lanes an item's commands are sent by the lane's thread, not while the item runs
    sent = [(thread, name, w, c) for thread, named in sorted(last["by_thread"].items())
            for name, (w, c) in sorted(named.items(), key=lambda kv: -kv[1][0])]
    print("each command by the thread that sent it (last round; CPU: its container's cgroup "
          "over the command)")
    print(table(["thread", "command", "wall s", "CPU s"], sent))


def subjects(args: argparse.Namespace) -> list[Subject]:
    import docker
    from build import WORK, module_of  # tests/realruns: the builder's own names

    found = [Subject(demo_images("good")[0], args.bundle, DEMO_MODULE, cpu_own=False)]
    wanted = {} if args.demo_only else dict(i.split("=", 1) for i in args.image) \
        if args.image else KEPT
    client = docker.from_env()
    for image, repo in wanted.items():
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            print(f"(no image {image}: build it with tests/realruns/build.py {repo} --keep)",
                  file=sys.stderr)
            continue
        found.append(Subject(image, repo, module_of(repo), cpu_own=True,
                             assets=WORK / "assets"))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=official.RELEASE)
    parser.add_argument("--bundle", default="DepthAnything/Depth-Anything-V2",
                        help="the bundle run on the demo image (OWNER/NAME)")
    parser.add_argument("--image", action="append", metavar="TAG=OWNER/NAME",
                        help="an image of one of the 44 (repeatable; default the kept two)")
    parser.add_argument("--demo-only", action="store_true", help="no image of the 44")
    parser.add_argument("--logs", type=Path, metavar="DIR",
                        help="keep each official run's output there, stamped (wall s, CPU s)")
    parser.add_argument("--pytest-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for pytest-reb's runs (repeatable), e.g. "
                             "--pytest-arg=--reb-no-ext-sweep")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--warm", action="store_true",
                        help="pytest-reb reads what the machine keeps per image id (a second "
                             "verification of the image); default: cold, as a first one")
    args = parser.parse_args()
    todo = subjects(args)
    off: dict[str, list[dict[str, Any]]] = defaultdict(list)
    mine: dict[str, list[dict[str, Any]]] = defaultdict(list)
    print(f"pytest-reb vs the official bundles on {len(todo)} image(s), {args.repeat} "
          f"interleaved round(s); {machine()}"
          + (f"; pytest-reb with {' '.join(args.pytest_arg)}" if args.pytest_arg else "")
          + ("; warm (the machine's per-image cache)" if args.warm else "; cold (no per-image "
             "cache)"),
          flush=True)
    started = time.perf_counter()
    with bench_labels() as label, tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        (where / "recplug.py").write_text(RECORDER)
        for i in range(args.repeat):
            for j, subject in enumerate(todo):
                for side in (("ours", "official") if (i + j) % 2 == 0 else ("official", "ours")):
                    if side == "ours":
                        mine[subject.image].append(ours_side(subject, where, f"r{i}s{j}", label,
                                                             args.pytest_arg, warm=args.warm))
                    else:
                        got = official_side(subject, args.release, label)
                        off[subject.image].append(got)
                        if args.logs:
                            args.logs.mkdir(parents=True, exist_ok=True)
                            name = subject.image.replace(":", "_").replace("/", "_")
                            (args.logs / f"{name}-r{i}.log").write_text(
                                "\n".join(got.pop("log")) + "\n")
                    print(f"(round {i + 1}, {subject.image}, {side}: done at "
                          f"{time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    totals: list[list[float]] = []
    rest: list[list[float]] = []
    for subject in todo:
        report(subject, off[subject.image], mine[subject.image])
        for into, without in ((totals, ()), (rest, ("cpu",))):
            per_round = [ratios(subject, o, m, without)
                         for o, m in zip(off[subject.image], mine[subject.image], strict=False)]
            into.append([median([r[k] for r in per_round]) for k in range(4)])
    ow, oc, mw, mc = (sum(t[k] for t in totals) for k in range(4))
    print(f"\nover the {len(todo)} image(s), the corresponding stages: official {ow:.1f} s wall / "
          f"{oc:.1f} s CPU, pytest-reb {mw:.1f} s / {mc:.1f} s: {ow / mw:.2f}x wall, "
          f"{oc / mc:.2f}x CPU (goal >= 2x); load {os.getloadavg()[0]:.1f} at the end")
    rw, rc, qw, qc = (sum(t[k] for t in rest) for k in range(4))
    # C1 and the official cpu stage run the same entrypoint: its time is common to both sides
    entry = sum(median([m["outcomes"].get("c1", (0.0,))[0] for m in mine[s.image]])
                for s in todo if s.cpu_own)
    lanes = any(m["lanes"] for s in todo for m in mine[s.image])
    if not any(s.cpu_own for s in todo):  # the demo's cpu stage runs another repository's
        print("no subject's entrypoint is compared (the demo's official cpu stage runs another "
              "repository's), so none bounds the ratio")
    elif lanes:  # the items wait for their lanes: a tier's wall is its wait, not its work
        print(f"tiers side by side (lanes.py): each tier's wall above is its item's wait, their "
              f"sum the pyramid's; the entrypoint's own {entry:.1f} s (C1's outcomes) bounds "
              f"the whole ratio at {ow / max(entry, 1e-9):.2f}x")
    else:
        print(f"the same less the entrypoint (official cpu, C1): official {rw:.1f} s / "
              f"{rc:.1f} s, pytest-reb {qw:.1f} s / {qc:.1f} s: {rw / qw:.2f}x wall, "
              f"{rc / qc:.2f}x CPU; the entrypoint's {mw - qw:.1f} s on our side bounds the "
              f"whole ratio at {ow / max(mw - qw, 1e-9):.2f}x even with every other tier free")
    return 0


if __name__ == "__main__":
    sys.exit(main())
