"""What the bench scripts share: timing, a plain table, the demo images, and cleanup.

Every bench labels its containers ``reb.bench=<id>`` (``REB_LABELS`` reaches
the pytest runs it starts) and removes every container with that label when
it ends, however it ends.  The machines are small and shared, so benches
report medians, and ratios are taken between runs interleaved in one
invocation, never against a figure from another day.
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def timed(cmd: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None,
          ok: Sequence[int] = (0, 1)) -> float:
    """Wall seconds of one command (see ``measure``)."""
    return measure(cmd, cwd=cwd, env=env, ok=ok)[0]


def measure(cmd: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None,
            ok: Sequence[int] = (0, 1)) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one command and its children.

    CPU time barely moves when other jobs share the machine; wall time is
    what a user waits, and moves a lot.  Output is shown only on failure.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env=bench_env(env), capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}"
                 f"\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a bench's commands run in: this one, less ``PYTHONDONTWRITEBYTECODE``
    (a development shell's setting: under it every run compiles the plugin and pytest's
    rewritten modules afresh, which a user's install, compiled by pip, never does; it cost
    the demo pyramid 0.3 s of its own time), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **(extra or {})}


def machine_busy() -> float:
    """CPU seconds every process of the machine has used since boot (``/proc/stat``).

    Containers' processes are not this process's children, so ``measure``'s
    CPU misses them; the machine's counter sees them (and others' jobs too).
    """
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def settle_bytecode(limit: float = 300.0) -> float:
    """Wait until no bytecode compile a pytest-reb run detached (``pytest_reb.targets.bytecode``) is
    still running, so it never takes CPU from the next side measured; the seconds waited.
    Its CPU is the run's, but no side's figure counts it: it is no child of theirs."""
    start = time.perf_counter()
    while _compiling() and time.perf_counter() - start < limit:
        time.sleep(0.2)
    return time.perf_counter() - start


def _compiling() -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if b"pytest_reb.targets.bytecode" in cmdline.read_bytes():
                return True
    return False


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (it reads as plain text too)."""
    def cell(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    lines = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in lines)]) for i, h in enumerate(headers)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
            for r in lines]
    return "\n".join(out)


#: The 1-minute load when the bench started, before its own runs added to it.
LOAD_AT_START = os.getloadavg()[0]


def machine() -> str:
    """The cores and the load at the bench's start (read when it was imported, so a bench that
    prints its header after its runs still says what the machine was doing before them) and
    now."""
    return (f"{os.cpu_count()} CPU(s), load {LOAD_AT_START:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} now")


def demo_images(*variants: str) -> list[str]:
    """Tags of the demo images (built on first use, as the test suite builds them)."""
    import docker

    from pytest_reb.loop.demo.images import ensure_demo_image

    client = docker.from_env()
    return [ensure_demo_image(client, v) for v in variants]


@contextlib.contextmanager
def bench_labels() -> Iterator[str]:
    """A label for every container this bench makes; all of them are removed at the end."""
    label = f"reb.bench={uuid.uuid4().hex[:12]}"
    before = os.environ.get("REB_LABELS")
    os.environ["REB_LABELS"] = f"{before},{label}" if before else label
    try:
        yield label
    finally:
        if before is None:
            os.environ.pop("REB_LABELS", None)
        else:
            os.environ["REB_LABELS"] = before
        left = remove_labelled(label)
        if left:
            print(f"(removed {left} container(s) a run left behind)", file=sys.stderr)


def remove_labelled(label: str) -> int:
    import docker

    client = docker.from_env()
    found = client.containers.list(all=True, filters={"label": label})
    for ctr in found:
        with contextlib.suppress(Exception):
            ctr.remove(force=True)
    return len(found)
