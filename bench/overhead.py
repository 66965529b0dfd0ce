"""Harness overhead: the whole pyramid through pytest-reb against the same commands by hand.

Goal: pytest-reb's wall time <= 1.10 x the raw loop's.

First a recording run of the pyramid on the demo image logs every command
the tiers send into the target (argv, environment, working directory,
timeout) with its exit code.  Then, interleaved N times:

* **pytest-reb**: ``pytest --reb-image DEMO test_demo__tinynet.py``, all
  tiers, as a user runs it (``-p no:hypothesispytest``: hypothesis is a
  test-only dependency of this repository and not part of an install);
* **raw**: ``docker run -d`` of the same image with the same hardening and
  read-only tool mounts (the commands need pyright and the probes), each
  recorded command through ``docker exec`` in a loop, wrapped in the same
  ``timeout -k``, then ``docker rm -f``.

Both sides pay one container's creation and removal, so the ratio is the
harness itself: pytest's start and collection, fixtures, the host-side
process checks after each command, the outcome log and summary.  The raw
loop's container cost and its commands' time are shown apart.

    python bench/overhead.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import DEMO_MODULE, bench_labels, demo_images, machine, median, table, timed

from pytest_reb.target import KILL_GRACE, Limits, tool_mounts

RECORDER = '''
import json, os
from pytest_reb import target

_exec = target.DockerTarget._exec

def _recorded(self, argv, *, timeout, env, cwd, devices):
    sent = dict(env)
    res = _exec(self, argv, timeout=timeout, env=env, cwd=cwd, devices=devices)
    with open(os.environ["REB_BENCH_RECORD"], "a") as fh:
        fh.write(json.dumps({"argv": argv, "env": sent, "cwd": cwd, "timeout": timeout,
                             "devices": devices, "exit_code": res.exit_code,
                             "wrapped": bool(self._has_timeout.get(",".join(devices) or "cpu")),
                             "duration": res.duration}) + "\\n")
    return res

target.DockerTarget._exec = _recorded
'''


def pytest_cmd(where: Path, image: str, outdir: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "--rootdir", str(where), "-p", "no:cacheprovider",
            "-p", "no:hypothesispytest", "-q", "--reb-image", image,
            "--reb-outdir", str(where / outdir), "test_demo__tinynet.py"]


def record(image: str, where: Path) -> list[dict[str, Any]]:
    rec = where / "record"
    rec.mkdir()
    (rec / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
    (rec / "conftest.py").write_text(RECORDER)
    log = rec / "commands.jsonl"
    timed(pytest_cmd(rec, image, "reports"), cwd=rec, env={"REB_BENCH_RECORD": str(log)})
    return [json.loads(line) for line in log.read_text().splitlines()]


def raw_loop(image: str, commands: list[dict[str, Any]], label: str) -> dict[str, float]:
    """``docker run``, every command by ``docker exec``, ``docker rm -f``; seconds of each part."""
    limits = Limits()
    mounts = [f"--mount=type=bind,src={src},dst={dst},readonly"
              for dst, src in tool_mounts().items()]
    t0 = time.perf_counter()
    ctr = subprocess.run(
        ["docker", "run", "-d", "--init", f"--network={limits.network}", "--cap-drop=ALL",
         "--security-opt=no-new-privileges", f"--pids-limit={limits.pids}",
         f"--memory={limits.memory}", f"--memory-swap={limits.memory}",
         f"--shm-size={limits.shm}", f"--label={label}", *mounts, "--entrypoint=sleep",
         image, "infinity"], capture_output=True, text=True, check=True).stdout.strip()
    t1 = time.perf_counter()
    mismatched = 0
    try:
        for c in commands:
            env = {**c["env"], **({} if c["devices"] else {"CUDA_VISIBLE_DEVICES": ""})}
            argv = c["argv"]
            if c["wrapped"]:
                argv = ["timeout", "-k", f"{KILL_GRACE:g}", f"{c['timeout']:g}", *argv]
            flags = [f"--env={k}={v}" for k, v in env.items()]
            if c["cwd"]:
                flags.append(f"--workdir={c['cwd']}")
            rc = subprocess.run(["docker", "exec", *flags, ctr, *argv],
                                capture_output=True).returncode
            mismatched += rc != c["exit_code"]
        t2 = time.perf_counter()
    finally:
        subprocess.run(["docker", "rm", "-f", ctr], capture_output=True)
    t3 = time.perf_counter()
    return {"total": t3 - t0, "execs": t2 - t1, "container": (t1 - t0) + (t3 - t2),
            "mismatched": mismatched}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    [image] = demo_images("good")
    with bench_labels() as label, tempfile.TemporaryDirectory(prefix="reb-bench-") as tmp:
        where = Path(tmp)
        commands = record(image, where)
        run = where / "run"
        run.mkdir()
        (run / "test_demo__tinynet.py").write_text(DEMO_MODULE.read_text())
        startup = [timed([*pytest_cmd(run, image, "collect"), "--collect-only"], cwd=run)
                   for _ in range(3)]
        harness: list[float] = []
        raw: list[dict[str, float]] = []
        for i in range(args.repeat):
            for side in (("harness", "raw") if i % 2 == 0 else ("raw", "harness")):
                if side == "harness":
                    harness.append(timed(pytest_cmd(run, image, f"reports{i}"), cwd=run))
                else:
                    raw.append(raw_loop(image, commands, label))
    ratios = [h / r["total"] for h, r in zip(harness, raw, strict=True)]
    rows = [
        ("pytest-reb: whole pyramid, pytest --reb-image", median(harness), min(harness),
         max(harness)),
        (f"raw: docker run + {len(commands)} x docker exec + docker rm",
         median([r["total"] for r in raw]), min(r["total"] for r in raw),
         max(r["total"] for r in raw)),
        ("  of which the execs", median([r["execs"] for r in raw]),
         min(r["execs"] for r in raw), max(r["execs"] for r in raw)),
        ("  of which docker run + rm", median([r["container"] for r in raw]),
         min(r["container"] for r in raw), max(r["container"] for r in raw)),
        ("pytest start + collection alone (--collect-only)", median(startup), min(startup),
         max(startup)),
    ]
    tiers = sorted({c["argv"][0].rsplit("/", 1)[-1] for c in commands})
    print(f"harness overhead on {image}: {len(commands)} commands ({', '.join(tiers)}), "
          f"{args.repeat} interleaved runs each; {machine()}")
    print(table(["", "median s", "min s", "max s"], rows))
    bad = sum(int(r["mismatched"]) for r in raw)
    if bad:
        print(f"\nwarning: {bad} raw command(s) exited otherwise than under pytest-reb")
    ratio = median(ratios)
    print(f"\nratio pytest-reb / raw: {ratio:.3f} median of per-round ratios "
          f"{', '.join(f'{r:.3f}' for r in ratios)} (goal <= 1.10: "
          f"{'met' if ratio <= 1.10 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
