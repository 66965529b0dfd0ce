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
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from common import (
    DEMO_MODULE,
    ROOT,
    bench_labels,
    demo_images,
    machine,
    median,
    table,
)

sys.path.insert(0, str(ROOT / "tests" / "realruns"))
import official  # tests/realruns is not a package
from vs_official_sides import (
    PYRIGHT_PARTS,
    RECORDER,
    STAGE_TIER,
    TIERS,
    Subject,
    official_side,
    ours_side,
)

#: The two images of the 44 kept on this machine for the bench (build.py ... --keep).
KEPT = {"reb-real:kyegomez.multimodalmamba": "kyegomez/MultiModalMamba",
        "reb-real:kyegomez.visionmamba": "kyegomez/VisionMamba"}


# -- the report ----------------------------------------------------------------------------

def compared(subject: Subject, off: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The official stages set beside a tier on this subject: the cpu stage only where it
    runs the image's own entrypoint on assets its ``prepare`` made (in every round ``off``):
    where prepare failed (a hub download, no network here) the stage stops before the
    entrypoint, while C1 runs it on the asset cache's stand-in."""
    prepared = all(r.get("status", {}).get("prepare") != "failure" for r in off)
    return [s for s, t in STAGE_TIER.items()
            if t and (s != "cpu" or (subject.cpu_own and prepared))]


def ratios(subject: Subject, off: dict[str, Any], mine: dict[str, Any],
           without: Sequence[str] = (), *, by_work: bool = False
           ) -> tuple[float, float, float, float]:
    """(official wall, official CPU, pytest-reb wall, pytest-reb CPU) of the corresponding
    stages and tiers in one round (less the stages ``without`` and their tiers).

    ``by_work``: each tier's commands, wherever a lane ran them (wall and their containers'
    CPU, not pytest's process), rather than its item's wall: under lanes an item's wall is
    its wait, and the work of C0 and C2 falls in C1's item."""
    stages = [s for s in compared(subject, [off]) if s not in without]
    tiers = {STAGE_TIER[s] for s in stages}
    ow = sum(off["stages"].get(s, (0.0, 0.0))[0] for s in stages)
    oc = sum(off["stages"].get(s, (0.0, 0.0))[1] for s in stages)
    if by_work:
        mw = sum(mine["work"].get(t, (0.0, 0.0))[0] for t in tiers)
        mc = sum(mine["work"].get(t, (0.0, 0.0))[1] for t in tiers)
    else:
        mw = sum(mine["tiers"].get(t, {}).get("wall", 0.0) for t in tiers)
        mc = sum(mine["tiers"].get(t, {}).get("cpu", 0.0) for t in tiers)
    return ow, oc, mw, mc


def report(subject: Subject, off: list[dict[str, Any]], mine: list[dict[str, Any]]) -> None:
    def med(values: Iterable[float]) -> float:
        got = list(values)
        return median(got) if got else 0.0

    print(f"\n## {subject.name}: {len(off)} official and {len(mine)} pytest-reb run(s)")
    rows = []
    stages = compared(subject, off)
    for stage, tier in STAGE_TIER.items():
        walls = [r["stages"][stage][0] for r in off if stage in r["stages"]]
        cpus = [r["stages"][stage][1] for r in off if stage in r["stages"]]
        said = ", ".join(sorted({r["status"][stage] for r in off}))
        role = (tier.upper() if stage in stages else
                "- (another repository's entrypoint)" if tier and not subject.cpu_own else
                "- (its prepare failed: no entrypoint run)" if tier else "- (no tier)")
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
    per_round = [ratios(subject, o, m, by_work=True) for o, m in zip(off, mine, strict=False)]
    ow, oc, mw, mc = (med(r[i] for r in per_round) for i in range(4))
    print(f"the same, each tier's commands wherever they ran (a lane's inside another tier's "
          f"item): pytest-reb {mw:.1f} s / {mc:.1f} s CPU in containers: official / "
          f"pytest-reb {ow / max(mw, 1e-9):.2f}x wall, {oc / max(mc, 1e-9):.2f}x CPU")
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
    from build import WORK, mismatch, module_of  # tests/realruns: the builder's own names
    from table import find

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
                             assets=WORK / "assets", options=tuple(mismatch(find(repo)))))
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
    worked: list[list[float]] = []
    for subject in todo:
        report(subject, off[subject.image], mine[subject.image])
        for into, without, by_work in ((totals, (), False), (rest, ("cpu",), False),
                                       (worked, (), True)):
            per_round = [ratios(subject, o, m, without, by_work=by_work)
                         for o, m in zip(off[subject.image], mine[subject.image], strict=False)]
            into.append([median([r[k] for r in per_round]) for k in range(4)])
    ow, oc, mw, mc = (sum(t[k] for t in totals) for k in range(4))
    print(f"\nover the {len(todo)} image(s), the corresponding stages: official {ow:.1f} s wall / "
          f"{oc:.1f} s CPU, pytest-reb {mw:.1f} s / {mc:.1f} s: {ow / mw:.2f}x wall, "
          f"{oc / mc:.2f}x CPU (goal >= 2x); load {os.getloadavg()[0]:.1f} at the end")
    ww, wc, vw, vc = (sum(t[k] for t in worked) for k in range(4))
    print(f"the same by each tier's commands wherever they ran: pytest-reb {vw:.1f} s / {vc:.1f} s "
          f"CPU in containers: {ww / max(vw, 1e-9):.2f}x wall, {wc / max(vc, 1e-9):.2f}x CPU")
    rw, rc, qw, qc = (sum(t[k] for t in rest) for k in range(4))
    # C1 and the official cpu stage run the same entrypoint: its time is common to both sides
    own = [s for s in todo if "cpu" in compared(s, off[s.image])]
    entry = sum(median([m["outcomes"].get("c1", (0.0,))[0] for m in mine[s.image]])
                for s in own)
    lanes = any(m["lanes"] for s in todo for m in mine[s.image])
    if not own:  # the demo's cpu stage runs another repository's; a failed prepare, none
        print("no subject's entrypoint is compared (the demo's official cpu stage runs another "
              "repository's; a real image's stops before it where its prepare failed), so "
              "none bounds the ratio")
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
