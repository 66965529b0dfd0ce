"""The ``reb`` command: housekeeping around runs that does not belong inside pytest.

``reb gc`` removes containers a run could not remove itself (its pytest was
SIGKILLed, or the machine lost power).  By default it only takes containers
whose maker is gone, so it is safe beside a run in progress.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_reb.session import docker_available, sweep


def _gc(args: argparse.Namespace) -> int:
    problem = docker_available()
    if problem:
        print(f"reb gc: {problem}", file=sys.stderr)
        return 2
    removed = sweep(args.run, only_orphans=not args.all and args.run is None)
    print(f"reb gc: removed {removed} container(s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reb", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gc = sub.add_parser("gc", help="remove containers left by killed runs")
    gc.add_argument("--run", help="remove every container of this run id")
    gc.add_argument("--all", action="store_true",
                    help="remove every pytest-reb container, even of runs still alive")
    gc.set_defaults(func=_gc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
