"""The ``reb`` command: the benchmark loop and housekeeping that do not belong inside pytest.

``reb task build`` makes the starting images of repositories; ``reb agent run`` runs an
agent CLI in one, commits the result and appends a run-matrix row that ``pytest
--reb-matrix`` verifies; ``reb table`` sets success rates beside the efficiency metrics.

``reb gc`` removes containers a run could not remove itself (its pytest was
SIGKILLed, or the machine lost power).  By default it only takes containers
whose maker is gone, so it is safe beside a run in progress.  ``reb merge``
joins the runs of several shards (``--reb-shard I/N``) into one; ``reb slurm``
and ``reb k8s`` run a matrix on a cluster (``pytest_reb.loop.cluster``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_reb.loop.cluster.cli import add_parsers as add_cluster_parsers
from pytest_reb.loop.cluster.k8s import K8sOptions
from pytest_reb.spec import MODULES_HELP


def _gc(args: argparse.Namespace) -> int:
    from pytest_reb.targets.housekeeping import docker_available, sweep

    problem = docker_available()
    if problem:
        print(f"reb gc: {problem}", file=sys.stderr)
        return 2
    removed = sweep(args.run, only_orphans=not args.all and args.run is None)
    print(f"reb gc: removed {removed} container(s)")
    return 0


def _merge(args: argparse.Namespace) -> int:
    import json

    from pytest_reb.report.merge import MergeError, summary_differences, write
    from pytest_reb.runs.ids import new_run_id

    runs = [Path(r) for r in args.runs]
    out = Path(args.out) if args.out else runs[0].parent / f"merged-{new_run_id()}"
    expected = None
    try:
        if args.expect:  # read first: a bad --expect writes nothing
            try:
                expected = json.loads(Path(args.expect).read_text())
            except (OSError, ValueError) as exc:
                raise MergeError(f"--expect {args.expect}: {_reason(exc)}") from None
            if not isinstance(expected, dict):
                raise MergeError(f"--expect {args.expect}: not a summary.json (an object)")
        data = write(runs, out)
    except MergeError as exc:
        print(f"reb merge: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"reb merge: cannot write {out}: {_reason(exc)}", file=sys.stderr)
        return 2
    count = sum(len(t["tiers"]) for t in data["targets"])
    print(f"reb merge: {count} outcome(s) of {len(data['targets'])} target(s) from "
          f"{len(runs)} run(s) -> {out}")
    if expected is not None:
        diffs = summary_differences(expected, data)
        for line in diffs:
            print(f"  differs from {args.expect}: {line}")
        return 1 if diffs else 0
    return 0


def _table(args: argparse.Namespace) -> int:
    from pytest_reb.report import table

    try:
        rows = table.measured_rows(table.parse_run_arg(r) for r in args.runs)
    except table.TableError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.agent_runs:
        from pytest_reb.loop.agent.run import load_runs

        try:
            runs = load_runs([Path(p) for p in args.agent_runs])
        except (OSError, ValueError, TypeError) as exc:
            print(f"reb table: --agent-runs: {exc}", file=sys.stderr)
            return 2
        table.add_efficiency(rows, runs)
    if args.paper:
        rows += table.PAPER_ROWS
    try:
        paths = table.write(rows, Path(args.out))
    except OSError as exc:
        print(f"reb table: cannot write {args.out}: {_reason(exc)}", file=sys.stderr)
        return 2
    print(table.to_markdown(rows))
    print("reb table: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _task_build(args: argparse.Namespace) -> int:
    from docker.errors import DockerException

    from pytest_reb.loop import task
    from pytest_reb.loop.images import ImageError

    if not args.repos and not args.all:
        print("reb task build: name owner/name ... or give --all", file=sys.stderr)
        return 2
    try:  # an unknown name is a usage error, said before git or the engine is needed
        task.select(args.repos, every=args.all, modules=args.modules)
    except task.TaskError as exc:
        print(f"reb task build: {exc}", file=sys.stderr)
        return 2
    try:
        built = task.build(args.repos, every=args.all, base=args.base,
                           checkout=Path(args.checkout) if args.checkout else None,
                           mirror=Path(args.mirror) if args.mirror else None,
                           modules=args.modules)
    except (task.TaskError, ImageError, DockerException) as exc:
        print(f"reb task build: {exc}", file=sys.stderr)
        return 1
    failed = 0
    for t, tag in built:
        if isinstance(tag, Exception):
            failed += 1
            print(f"reb task build: {tag}", file=sys.stderr)
        else:
            print(f"{t.repo}\t{t.commit[:12]}\t{tag}")
    return 1 if failed else 0


def _image_build(args: argparse.Namespace) -> int:
    import time

    import docker
    from docker.errors import DockerException

    from pytest_reb.loop.cluster import harness
    from pytest_reb.loop.images import ImageError

    source = Path(args.source).resolve() if args.source else harness.checkout()
    start = time.monotonic()
    try:
        client = docker.from_env()
        recipe, built = harness.build(client, args.tag, source=source)
        size = harness.size(client, args.tag)
    except (ImageError, DockerException) as exc:
        print(f"reb image build: {exc}", file=sys.stderr)
        return 1
    print(f"reb image build: {args.tag} ({'built' if built else 'reused'}, recipe {recipe}, "
          f"{size / 1e6:.0f} MB, {time.monotonic() - start:.0f} s; modules of "
          f"{source or 'no checkout: the package alone'})")
    print(f"next: docker push {args.tag}\n"
          f"      reb k8s runs.toml --harness-image {args.tag} --out jobs.json")
    return 0


def _reason(exc: Exception) -> str:
    """One line for an error: the OS's words for an OSError, else the exception's."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


EXAMPLES = """\
examples:
  reb task build reb/tinynet                       the demo's starting image
  reb agent run --agent codex --repo owner/name    an agent in it: committed, a matrix row
  pytest repos --reb-matrix reports/agent-runs/matrix.jsonl -n 2   verify what it built
  reb table reports/<run> --agent-runs reports/agent-runs         the master table
  reb slurm runs.toml --dry-run                    the same matrix as a Slurm job array
  reb gc                                           containers a killed run left
  reb image build --tag registry.example/team/pytest-reb-harness:0.1   reb k8s's harness
"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pytest-reb")
    except PackageNotFoundError:  # a checkout run without installing it
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reb", description=__doc__.split("\n\n")[0].replace("``", ""), epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gc = sub.add_parser("gc", help="remove containers left by killed runs",
                        description="Remove the containers of pytest-reb runs that could not "
                                    "remove them (a SIGKILLed pytest, a lost machine): by "
                                    "default only those whose maker is gone.")
    gc.add_argument("--run", help="remove every container of this run id")
    gc.add_argument("--all", action="store_true",
                    help="remove every pytest-reb container, even of runs still alive")
    gc.set_defaults(func=_gc)
    merge = sub.add_parser("merge", help="join the runs of several shards into one run",
                           description="Join the runs of several shards (--reb-shard I/N) into "
                                       "one run folder: outcomes.jsonl and summary.json.")
    merge.add_argument("runs", nargs="+", metavar="RUN_DIR",
                       help="run folders (each with outcomes.jsonl), e.g. one per shard")
    merge.add_argument("--out", metavar="DIR",
                       help="new run folder to write (default: merged-<id> beside the first run)")
    merge.add_argument("--expect", metavar="SUMMARY",
                       help="compare with this summary.json (run ids, times and durations "
                            "aside); exit 1 and list what differs")
    merge.set_defaults(func=_merge)
    tbl = sub.add_parser("table", help="the master table across runs and agents "
                                       "(CSV, Markdown, HTML with a chart)",
                         description="The master table across runs and agents: success per "
                                     "tier with the official denominators, C5 counts, time, "
                                     "environment size, preparation time and tokens.")
    tbl.add_argument("runs", nargs="+", metavar="RUN_DIR[:LABEL]",
                     help="run folders (with outcomes.jsonl); LABEL names the agent of a run "
                          "whose outcomes carry none (default: the run id)")
    tbl.add_argument("--out", metavar="DIR", default="reports/table",
                     help="where reb_table.csv, .md and .html go (default reports/table)")
    tbl.add_argument("--paper", action="store_true",
                     help="add the paper's four agents as reference rows (published figures)")
    tbl.add_argument("--agent-runs", action="append", default=[], metavar="FILE",
                     help="agent_runs.jsonl of `reb agent run` (or its folder): adds "
                          "preparation time and tokens per agent (repeatable)")
    tbl.set_defaults(func=_table)
    add_cluster_parsers(sub)
    task = sub.add_parser("task", help="task images: the starting point of each repository")
    task_sub = task.add_subparsers(dest="task_command", required=True)
    tb = task_sub.add_parser("build", help="make the starting image of repositories "
                                            "(cached by base, commit and task text)")
    tb.add_argument("repos", nargs="*", metavar="OWNER/NAME")
    tb.add_argument("--all", action="store_true", help="all 44 repositories of repos/")
    tb.add_argument("--modules", nargs="+", type=Path, metavar="PATH", help=MODULES_HELP)
    tb.add_argument("--base", metavar="IMAGE",
                    help="any local image (default: Debian with python3, pip, venv, git, "
                         "gcc/g++, curl, made with debootstrap)")
    source = tb.add_mutually_exclusive_group()
    source.add_argument("--checkout", metavar="DIR", help="a local clone of the one repository")
    source.add_argument("--mirror", metavar="DIR",
                        help="a bare mirror, or a folder of them named owner+name "
                             "(default: git clone from GitHub)")
    tb.set_defaults(func=_task_build)
    image = sub.add_parser("image", help="the harness image of reb k8s")
    image_sub = image.add_subparsers(dest="image_command", required=True)
    ib = image_sub.add_parser(
        "build", help="build the harness image (/opt/reb: an interpreter of its own with "
                      "pytest-reb, node, pyright, the witness) on the local Docker engine",
        description="Build the harness image that `reb k8s --harness-image` names, offline "
                    "from the project's Debian base and wheels the host's pip downloads: "
                    "/opt/reb runs in an agent-built image of any distribution. Push it to "
                    "the cluster's registry afterwards.")
    ib.add_argument("--tag", default=K8sOptions.harness_image, metavar="TAG",
                    help="e.g. registry.example/team/pytest-reb-harness:0.1 (default "
                         "pytest-reb-harness:latest, reb k8s's default)")
    ib.add_argument("--source", metavar="DIR",
                    help="the pytest-reb checkout whose repos/ and demo/ go in (default: "
                         "$REB_SOURCE or the working directory)")
    ib.set_defaults(func=_image_build)
    from pytest_reb.loop.agent.cli import add_parser as add_agent_parser

    add_agent_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from pytest_reb.loop.agent.cli import joined_args

    parser = build_parser()
    args = parser.parse_args(joined_args(sys.argv[1:] if argv is None else argv))
    if getattr(args, "func", None) is None:  # `reb` alone, or `reb task` without its verb
        parser.print_help(sys.stderr)
        print(f"\nreb: choose a command{' verb' if args.command else ''}", file=sys.stderr)
        return 2
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
