"""The two sides ``vs_official.py`` times on one image, imported by it (not a bench itself).

The official side: run_all.sh in the throwaway container ``tests/realruns/official.py`` makes,
its stages read from its stamped output, the pyright stage split by the container's processes.
The pytest-reb side: one run of the CPU pyramid with the recorder plugin, its containers' CPU
sampled from their cgroups.  Both read CPU from cgroup v1 (``cpuacct.usage``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, measure, settle_bytecode

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


@dataclass(frozen=True)
class Subject:
    """One image: the bundle run on it, the module pytest-reb runs, whether the bundle's cpu
    stage is this image's own entrypoint (and so corresponds to C1)."""

    image: str
    bundle: str
    module: Path
    cpu_own: bool
    assets: Path | None = None
    #: pytest-reb options this image needs (``--reb-allow-commit-mismatch`` where the builder
    #: checked out another commit than the module's pin: ``build.mismatch``)
    options: tuple[str, ...] = ()

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
#: (``===== [cpu] =====``, ``===== stage: cpu =====``, ``[run_all] Running stage: cpu``,
#: ``Stage: cpu`` under a line of ``=``, ``=== [run_all] stage: cpu ===``).
HEADER = re.compile(r"===|running stage|^stage: ", re.IGNORECASE)


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

#: The recorder plugin (``-p recplug``) each pytest-reb run loads; ``read_record`` reads it back.
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
    if len(argv) > 1 and argv[1] == "-c":  # C5's: the official questions, and its strict
        return "C5's interpreter questions"  # one only where C2's probe did not answer it
    return "the tier's own command"


#: The tier whose work a command is, wherever a lane sent it (under lanes a lane's commands
#: run while another tier's item waits: C2's sweep inside C1's item); others are their item's.
COMMAND_TIER = {"pyright": "c0", "fakes scan": "c0", "CUDA probe": "c2",
                "extension sweep": "c2", "C5's interpreter questions": "c5",
                "env-size walk": "c5"}


def read_record(lines: Iterable[str]) -> dict[str, Any]:
    """The recorder's lines: per tier its wall (setup + call + teardown), its start and end,
    the pytest process's CPU, its commands by name; the session's start and end."""
    tiers: dict[str, dict[str, Any]] = defaultdict(lambda: {"wall": 0.0, "cpu": 0.0,
                                                            "phases": defaultdict(float)})
    commands: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    #: per thread that sent them (a lane's, or the main thread), each command's (wall, CPU)
    by_thread: dict[str, dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0.0]))
    #: per tier its commands' (wall, container CPU), each command counted for its own tier
    work: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
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
            name, item_tier = command_name(rec["argv"]), tier_of(rec["test"])
            commands[item_tier][name] += rec["duration"]
            for got in (by_thread[rec.get("thread", "?")][name],
                        work[COMMAND_TIER.get(name, item_tier)]):
                got[0] += rec["duration"]
                got[1] += rec.get("cpu") or 0.0
    return {"tiers": tiers, "commands": commands, "by_thread": by_thread, "session": session,
            "work": {t: tuple(v) for t, v in work.items()}}


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
           *(["--reb-assets", str(subject.assets)] if subject.assets else []),
           *subject.options, *extra]
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
            "work": rec["work"],
            "container_cpu": meter.total(), "tiers": tiers, "outcomes": outcomes, "lanes": lanes,
            "start": ses["start"][0] - started if "start" in ses else None,
            "rest": wall - in_tests}
