"""Harness overhead: the whole pyramid through pytest-reb against the same commands by hand.

Goals (issue 29): at equal command time <= 1.03 x the raw loop's, and pytest-reb's own time
<= 0.5 s per pyramid.

A warm-up run of the pyramid on the demo image records every command the
tiers send into the target (argv, environment, working directory,
timeout, exit code).  Then, interleaved N times (order alternating):

* **pytest-reb**: ``pytest --reb-image DEMO test_demo__tinynet.py``, all
  tiers, as a user runs it (``-p no:hypothesispytest``: hypothesis is a
  test-only dependency of this repository and not part of an install);
* **raw**: ``docker run -d`` of the same image with the same hardening and
  read-only tool mounts (the commands need pyright and the probes; the stages
  the image's kept bytecode and the tmpfs their folders are made in), each
  recorded command through ``docker exec`` in a loop (pytest-reb keeps the
  time on the host, so neither side wraps a command), then ``docker rm -f``.

Both sides pay one container's creation and removal.  Each side also times
the commands themselves (pytest-reb from ``exec_create`` to the end of the
output stream, raw the ``docker exec`` call; pytest-reb's C5 runs its two interpreter
questions side by side, so its command time is the time covered by at least one command,
while the raw loop runs them one after the other); the rest of each wall time is
the side's own: for pytest-reb, pytest's start and collection, fixtures,
the host-side process checks after each command, the outcome log and
summary.  The commands are the same on both sides but, on a shared
machine, their time swings by tens of seconds between rounds, so besides
the per-round wall ratio the bench gives the ratio at equal command time:
(C + own time of pytest-reb) / (C + own time of raw), C the median
command time of all rounds.

``--local [CHECKOUT]`` measures the same on ``local://`` (no Docker: the GPU machines), with
the interpreter ``--python`` and the demo's checkout (``bench/localmode.py``): the raw side
runs each recorded command as a child process with the same environment and devices, so its
rest is those processes' starts, and pytest-reb's own time is what a user of ``local://``
pays beyond the commands.

    python bench/overhead.py [--repeat N]
    python bench/overhead.py --local [CHECKOUT] [--python PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    DEMO_MODULE,
    bench_labels,
    demo_images,
    machine,
    median,
    settle_bytecode,
    table,
    timed,
)
from localmode import Local, add_arguments, checked, importable, setting

RECORDER = '''
import json, os, time
from pytest_reb import targets as target

_execs = {cls: cls._exec for cls in (target.DockerTarget, target.LocalTarget)}

def _recorded(self, argv, *, timeout, env, cwd, devices):
    sent = dict(env)
    began = time.monotonic()
    res = _execs[type(self)](self, argv, timeout=timeout, env=env, cwd=cwd, devices=devices)
    # res.duration: from exec_create to the end of its output stream (the command itself)
    with open(os.environ["REB_BENCH_RECORD"], "a") as fh:
        fh.write(json.dumps({"argv": argv, "env": sent, "cwd": cwd, "timeout": timeout,
                             "devices": devices, "exit_code": res.exit_code,
                             "duration": res.duration, "began": began,
                             "ended": began + res.duration}) + "\\n")
    return res

target.DockerTarget._exec = target.LocalTarget._exec = _recorded

if os.environ.get("REB_BENCH_PROFILES"):  # the split: every thread under a profiler of its own
    import cProfile, threading

    _thread_run = threading.Thread.run

    def _profiled(self):
        prof = cProfile.Profile()
        try:
            prof.runcall(_thread_run, self)
        finally:
            prof.dump_stats(os.path.join(os.environ["REB_BENCH_PROFILES"], f"{id(self)}.prof"))

    threading.Thread.run = _profiled
'''


def pytest_cmd(where: Path, on: str | Local, outdir: str) -> list[str]:
    """One pyramid of the demo on the image ``on``, or on ``local://`` with ``on``'s setting."""
    from pytest_reb.plugin import load_args

    place = (["--reb-image", on] if isinstance(on, str) else
             [*load_args(), "--reb-host=local://", "--agent-report", str(where / on.report),
              *on.pytest_args()])
    return [sys.executable, "-m", "pytest", "--rootdir", str(where), "-p", "no:cacheprovider",
            "-p", "no:hypothesispytest", "-q", *place,
            "--reb-outdir", str(where / outdir), "test_demo__tinynet.py"]


def covered(commands: list[dict[str, Any]]) -> float:
    """Seconds during which at least one command ran: C5's two questions run side by side
    (the strict one in the target's twin), so their durations overlap and must not add."""
    total, reach = 0.0, float("-inf")
    for c in sorted(commands, key=lambda c: c["began"]):
        start, end = max(c["began"], reach), c["ended"]
        if end > start:
            total, reach = total + end - start, end
    return total


def harness(on: str | Local, where: Path, tag: str) -> tuple[float, list[dict[str, Any]]]:
    """One pyramid through pytest; its wall time and the commands it sent, each timed."""
    log = where / f"{tag}.commands.jsonl"
    wall = timed(pytest_cmd(where, on, tag), cwd=where, env={"REB_BENCH_RECORD": str(log)})
    settle_bytecode()  # a detached bytecode compile must not slow the raw loop
    return wall, [json.loads(line) for line in log.read_text().splitlines()]


def stage_folders(commands: list[dict[str, Any]]) -> list[str]:
    """The stages' bytecode folders pytest-reb made (``bytecode.seed``), in order."""
    from pytest_reb.targets import bytecode

    return [c["argv"][c["argv"].index(bytecode.SEED_SCRIPT) + 2] for c in commands
            if bytecode.SEED_SCRIPT in c["argv"]]


def kept_bytecode(image: str, commands: list[dict[str, Any]]) -> dict[str, str]:
    """The image's kept bytecode, mounted where pytest-reb mounts it, when its stages used it:
    the raw loop replays the same commands on the same inputs."""
    from pytest_reb.targets import bytecode

    if not stage_folders(commands):
        return {}
    image_id = subprocess.run(["docker", "image", "inspect", "-f", "{{.Id}}", image],
                              capture_output=True, text=True, check=True).stdout.strip()
    kept = bytecode.kept_dir(image_id)
    return {} if kept is None else {bytecode.MOUNT: str(kept)}


def raw_loop(image: str, commands: list[dict[str, Any]], label: str) -> dict[str, float]:
    """``docker run``, every command by ``docker exec``, ``docker rm -f``: wall and command time."""
    from pytest_reb.targets import Limits
    from pytest_reb.targets.mounts import harness_mounts

    limits = Limits()
    mounts = [f"--mount=type=bind,src={src},dst={dst},readonly"
              for dst, src in {**harness_mounts(), **kept_bytecode(image, commands)}.items()]
    mounts += [f"--tmpfs={parent}"
               for parent in sorted({f.rsplit("/", 1)[0] for f in stage_folders(commands)})]
    t0 = time.perf_counter()
    ctr = subprocess.run(
        ["docker", "run", "-d", "--init", f"--network={limits.network}", "--cap-drop=ALL",
         "--security-opt=no-new-privileges", f"--pids-limit={limits.pids}",
         f"--memory={limits.memory}", f"--memory-swap={limits.memory}",
         f"--shm-size={limits.shm}", f"--label={label}", *mounts, "--entrypoint=sleep",
         image, "infinity"], capture_output=True, text=True, check=True).stdout.strip()
    mismatched = 0
    execs = 0.0
    try:
        for c in commands:
            env = {**c["env"], **({} if c["devices"] else {"CUDA_VISIBLE_DEVICES": ""})}
            # the witness stops a finished process for the host to read and continue: no host
            # reads here, so it must not stop (it would wait for a SIGCONT forever)
            env.pop("REB_WITNESS_STOP", None)
            argv = c["argv"]
            flags = [f"--env={k}={v}" for k, v in env.items()]
            if c["cwd"]:
                flags.append(f"--workdir={c['cwd']}")
            started = time.perf_counter()
            try:
                rc = subprocess.run(["docker", "exec", *flags, ctr, *argv], capture_output=True,
                                    timeout=c["timeout"] + 30).returncode
            except subprocess.TimeoutExpired:
                rc = None  # counted as a mismatch below: the bench never hangs on one
                subprocess.run(["docker", "restart", "-t", "0", ctr], capture_output=True)
            execs += time.perf_counter() - started
            mismatched += rc != c["exit_code"]
    finally:
        subprocess.run(["docker", "rm", "-f", ctr], capture_output=True)
    t3 = time.perf_counter()
    return {"total": t3 - t0, "commands": execs, "mismatched": mismatched}


def raw_local(commands: list[dict[str, Any]]) -> dict[str, float]:
    """Every command as a plain child process of this one, on ``local://``'s terms (the devices
    it had as ``CUDA_VISIBLE_DEVICES``, none for the CPU profile): wall and command time."""
    from pytest_reb.targets.base import cuda_visible

    mismatched = 0
    execs = 0.0
    t0 = time.perf_counter()
    for c in commands:
        env = {**os.environ, **c["env"],
               "CUDA_VISIBLE_DEVICES": cuda_visible(c["env"], c["devices"])}
        env.pop("REB_WITNESS_STOP", None)  # no host reads here: it must not stop
        started = time.perf_counter()
        try:
            rc: int | None = subprocess.run(c["argv"], env=env, cwd=c["cwd"],
                                            capture_output=True, stdin=subprocess.DEVNULL,
                                            timeout=c["timeout"] + 30).returncode
        except (subprocess.TimeoutExpired, OSError):
            rc = None  # counted as a mismatch below: the bench never hangs on one
        execs += time.perf_counter() - started
        mismatched += rc != c["exit_code"]
    return {"total": time.perf_counter() - t0, "commands": execs, "mismatched": mismatched}


#: Where pytest-reb's own time goes, by the functions that spend it (cumulative seconds of one
#: profiled pyramid); the commands themselves are ``DockerTarget._exec`` less its host side.
SPLIT = (("pytest-reb's start (imports, options, preflight)", "hooks.py", "_activate"),
         ("collection (modules matched to targets)", "hooks.py", "pytest_collection_modifyitems"),
         ("containers started", "docker.py", "_start"),
         ("containers removed", "docker.py", "close"),
         ("integrity before any tier", "context.py", "checkout_verdict"),
         ("integrity after the entrypoint", "run_integrity.py", "changed_during"),
         ("known-fakes scan (host side and its probe)", "context.py", "scan_fakes"),
         ("witness: build and read", "witnessing.py", "collect"),
         ("disk-use polls during commands", "docker.py", "_disk_used"),
         ("host facts of C5", "hostfacts.py", "read"),
         ("outcome log and summary", "report_hooks.py", "pytest_sessionfinish"),
         ("terminal pyramid", "report_hooks.py", "pytest_terminal_summary"),
         ("every command, as the target ran it", "docker.py", "_exec"))


def split(on: str | Local, where: Path) -> list[tuple[str, float]]:
    """One pyramid under cProfile, its main thread and every other thread (the lanes) each
    under a profiler of its own: the cumulative seconds of each part of ``SPLIT``, summed
    over the threads (parts that ran side by side add up).  On ``local://`` the Docker
    target's parts are left out and the commands are ``LocalTarget._exec``'s."""
    import pstats

    profiles = where / "split-threads"
    profiles.mkdir()
    prof = where / "split.prof"
    cmd = pytest_cmd(where, on, "split")
    timed([sys.executable, "-m", "cProfile", "-o", str(prof), *cmd[1:]], cwd=where,
          env={"REB_BENCH_RECORD": str(where / "split.commands.jsonl"),
               "REB_BENCH_PROFILES": str(profiles)})
    main_thread = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    total = max(ct for (_, _, _, ct, _) in main_thread.values())
    every = pstats.Stats(str(prof), *map(str, profiles.glob("*.prof")))
    stats = every.stats  # type: ignore[attr-defined]
    rows = [("the whole run under the profiler (main thread)", total)]
    for label, file, function in SPLIT:
        if not isinstance(on, str) and file == "docker.py":
            if function != "_exec":
                continue
            file = "local.py"
        rows.append((label, sum(v[3] for (f, _, name), v in stats.items()
                                if f.endswith("/" + file) and name == function)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-split", action="store_true",
                        help="skip the profiled run that splits pytest-reb's own time")
    add_arguments(parser, "the pyramid, and the raw side each command as a child process,")
    args = parser.parse_args()
    importable()
    checked(parser, args.local)
    sides: dict[str, list[tuple[float, float]]] = {"pytest-reb": [], "raw": []}  # (wall, commands)
    labels = contextlib.nullcontext("") if args.local is not None else bench_labels()
    with labels as label, tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        on: str | Local = (setting(args.local, args.python, where) if args.local is not None
                           else demo_images("good")[0])
        (where / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
        (where / "conftest.py").write_text(RECORDER)
        _, commands = harness(on, where, "warmup")  # also what the raw loop sends
        startup = [timed([*pytest_cmd(where, on, "collect"), "--collect-only"], cwd=where)
                   for _ in range(3)]
        mismatched = 0
        for i in range(args.repeat):
            for side in (("pytest-reb", "raw") if i % 2 == 0 else ("raw", "pytest-reb")):
                if side == "pytest-reb":
                    wall, sent = harness(on, where, f"run{i}")
                    sides[side].append((wall, covered(sent)))
                else:
                    r = (raw_loop(on, commands, label) if isinstance(on, str)
                         else raw_local(commands))
                    mismatched += int(r["mismatched"])
                    sides[side].append((r["total"], r["commands"]))
        parts = [] if args.no_split else split(on, where)
    rows = []
    for name, runs in sides.items():
        walls, cmds = [w for w, _ in runs], [c for _, c in runs]
        rows.append((name, median(walls), min(walls), max(walls), median(cmds),
                     median([w - c for w, c in runs])))
    ratios = [h[0] / r[0] for h, r in zip(sides["pytest-reb"], sides["raw"], strict=True)]
    command_time = median([c for runs in sides.values() for _, c in runs])
    own_h, own_r = rows[0][5], rows[1][5]
    equal = (command_time + own_h) / (command_time + own_r)
    tiers = sorted({c["argv"][0].rsplit("/", 1)[-1] for c in commands})
    where_ = on if isinstance(on, str) else f"local:// ({on.python}, checkout {on.checkout})"
    print(f"harness overhead on {where_}: the whole pyramid, {len(commands)} commands "
          f"({', '.join(tiers)}), {args.repeat} interleaved runs each; {machine()}")
    print(table(["", "wall s median", "min", "max", "in the commands s", "the rest s"], rows))
    print(f"(pytest start + collection of the module alone: {median(startup):.2f} s; raw's rest "
          f"is {'docker run + rm' if isinstance(on, str) else 'starting its child processes'})")
    if mismatched:
        print(f"warning: {mismatched} raw command(s) exited otherwise than under pytest-reb")
    print(f"\nratio pytest-reb / raw, wall: {median(ratios):.3f} median of per-round "
          f"{', '.join(f'{r:.3f}' for r in ratios)}")
    print(f"ratio at equal command time ({command_time:.1f} s, the median of both sides): "
          f"{equal:.3f} (goal <= 1.03: {'met' if equal <= 1.03 else 'MISSED'}); pytest-reb's "
          f"own time {own_h:.2f} s against raw's {own_r:.2f} s (goal <= 0.5 s: "
          f"{'met' if own_h <= 0.5 else 'MISSED'})")
    if parts:
        print("\nwhere the time of one pyramid goes (cProfile, cumulative s summed over the "
              "threads, so lanes' parts side by side add up; the profiler slows Python code, "
              "not the commands):")
        print(table(["part", "s"], parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
