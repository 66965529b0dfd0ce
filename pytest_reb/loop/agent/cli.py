"""``reb agent``: list the backends, install a CLI into its host folder, run agents.

    reb agent list
    reb agent install claude-code                       # npm, into ~/.cache/pytest-reb/agents/
    reb agent run --agent codex --repo owner/name       # one run; or several --repo, or --all
    reb agent run --agent mine --command 'mine {prompt_file}' --mount ./mine:/opt/mine --repo x/y

Exit status: 0 when every run was kept (finished or timed out, committed, in the matrix);
1 when one was not (the agent could not reach its service, stopped on its own service error,
leaked a secret, or its commit failed); 2 for a command line that cannot run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_reb.loop.agent import DEFAULT_BUDGET, backends
from pytest_reb.loop.agent.health import SERVICES
from pytest_reb.spec import MODULES_HELP


def tools_root() -> Path:
    """Host folders of installed agent CLIs: ``$REB_AGENT_TOOLS`` or the user cache."""
    env = os.environ.get("REB_AGENT_TOOLS")
    return Path(env) if env else Path.home() / ".cache" / "pytest-reb" / "agents"


def _list(args: argparse.Namespace) -> int:
    for b in backends.BUILTIN.values():
        folder = tools_root() / b.name
        state = "installed" if (folder / ".reb-installed").is_file() else "not installed"
        print(f"{b.name:16} {state:14} usage={b.usage:16} {b.description}")
        print(f"{'':16} argv: {' '.join(b.argv)}")
    print("any other CLI: --agent NAME --command 'ARGV TEMPLATE' [--mount HOST:CONTAINER]")
    return 0


def _install(args: argparse.Namespace) -> int:
    try:
        backend = backends.resolve(args.name)
        folder = backends.install(backend, Path(args.tool_dir) if args.tool_dir
                                  else tools_root() / backend.name,
                                  source=args.source, python=args.python)
    except backends.BackendError as exc:
        print(f"reb agent install: {exc}", file=sys.stderr)
        return 1
    print(folder)
    return 0


def _run(args: argparse.Namespace) -> int:
    import docker
    from docker.errors import DockerException

    from pytest_reb.loop import task
    from pytest_reb.loop.agent import health
    from pytest_reb.loop.agent.leaks import scrub, secrets_for
    from pytest_reb.loop.agent.run import KEPT, AgentRunError, run_agent

    try:
        mounts = dict(backends.parse_mount(m) for m in args.mount)
        backend = backends.resolve(args.agent, command=args.command, usage=args.usage,
                                   mounts=mounts, service=args.service,
                                   error_regex=args.error_regex)
        tool_dir = _tool_dir(args, backend)
        tasks = task.select(args.repo, every=args.all, modules=args.modules)
        if not tasks:
            raise backends.BackendError("name a repository with --repo, or give --all")
        secrets = secrets_for(backend, Path(args.env_file) if args.env_file else None,
                              args.secret)
        client = docker.from_env()
    except (backends.BackendError, task.TaskError, OSError, DockerException) as exc:
        print(f"reb agent run: {exc}", file=sys.stderr)
        return 2
    # once for every repository: a key that does not work fails them all in seconds
    check = health.preflight(backend, secrets, args.arg, os.environ) if args.preflight \
        else health.SKIPPED
    print(f"reb agent run: preflight: {check.checked}", file=sys.stderr)
    failed = kept = recorded = 0
    for t in tasks:
        try:
            rec = run_agent(client, backend, t, out_root=Path(args.out), budget=args.budget,
                            network=args.network, gpus=args.gpus, secrets=secrets,
                            tool_dir=tool_dir, extra_args=args.arg,
                            task_image=args.task_image,
                            matrix=Path(args.matrix) if args.matrix else None,
                            preflight=check, scrub_secrets=args.scrub_secrets)
        except AgentRunError as exc:  # nothing was started
            print(f"reb agent run: {t.repo}: {exc}", file=sys.stderr)
            failed += 1
            continue
        except Exception as exc:  # recorded as failed; the next repository still runs
            print(f"reb agent run: {t.repo}: failed: {type(exc).__name__}: "
                  f"{scrub(str(exc), secrets)}", file=sys.stderr)
            failed += 1
            recorded += 1
            continue
        recorded += 1
        tokens = rec.tokens if isinstance(rec.tokens, str) else f"{rec.tokens['total']} tokens"
        state = {"timed_out": "timed out", "finished": f"exit {rec.exit_code}"}.get(
            rec.status, rec.status)
        wall = "-" if rec.wall_s is None else f"{rec.wall_s:.1f} s"
        print(f"{t.repo}\t{rec.agent}\t{state}\t{wall}\t{tokens}\t{rec.image or '-'}")
        for path in rec.scrubbed:
            print(f"  scrubbed (taken out of the layer): {path}")
        if rec.status in KEPT:
            kept += 1
        else:
            failed += 1
            print(f"reb agent run: {t.repo}: {rec.status}: {rec.error}", file=sys.stderr)
            for path in rec.leaks:
                print(f"  secret in {path}", file=sys.stderr)
    wrote = [f"records {Path(args.out) / 'agent_runs.jsonl'} (+{recorded})"] if recorded \
        else ["nothing written"]
    if kept:
        wrote.insert(0, f"matrix {args.matrix or Path(args.out) / 'matrix.jsonl'} "
                        f"(+{kept} row{'s' if kept > 1 else ''})")
    print(f"reb agent run: {', '.join(wrote)}; {kept} kept, {failed} not")
    return 1 if failed else 0


def _tool_dir(args: argparse.Namespace, backend: backends.Backend) -> Path | None:
    """The CLI folder to mount: given, installed in the cache, or installed now (--install)."""
    if args.tool_dir:
        return Path(args.tool_dir)
    if backend.package is None:
        return None
    folder = tools_root() / backend.name
    if args.install:
        return backends.install(backend, folder)
    if not (folder / ".reb-installed").is_file():
        raise backends.BackendError(f"{backend.name} is not installed in {folder}: run "
                                    f"`reb agent install {backend.name}`, or give --tool-dir")
    return folder


def add_parser(sub: Any) -> None:
    """The ``agent`` subcommand of ``reb``."""
    agent = sub.add_parser("agent", help="run agent CLIs in task images, commit the results")
    agent_sub = agent.add_subparsers(dest="agent_command", required=True)
    agent_sub.add_parser("list", help="the built-in backends").set_defaults(func=_list)
    inst = agent_sub.add_parser("install", help="install a built-in CLI into its host folder")
    inst.add_argument("name", choices=sorted(n for n, b in backends.BUILTIN.items()
                                             if b.package))
    inst.add_argument("--tool-dir", metavar="DIR")
    inst.add_argument("--source", type=Path, metavar="DIR",
                      help="nexau: a NexAU checkout, or its git directory (a mirror)")
    inst.add_argument("--python", metavar="PATH",
                      help="nexau: a CPython 3.12+ to copy in (NexAU needs 3.12)")
    inst.set_defaults(func=_install)
    run = agent_sub.add_parser("run", help="one run per repository: container, agent, commit")
    run.add_argument("--agent", required=True, metavar="NAME",
                     help=f"built in: {', '.join(backends.BUILTIN)}; any name with --command")
    run.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME")
    run.add_argument("--all", action="store_true", help="all 44 repositories")
    run.add_argument("--modules", nargs="+", type=Path, metavar="PATH", help=MODULES_HELP)
    run.add_argument("--command", metavar="ARGV",
                     help="the agent's command line, with {prompt_file} {prompt} {repo} "
                          "{report_path} {schema} {out} {tool}")
    run.add_argument("--usage", choices=backends.USAGE_PARSERS,
                     help="how to read token usage from its output (default: the backend's)")
    run.add_argument("--mount", action="append", default=[], metavar="HOST[:CONTAINER]",
                     help="a host folder mounted read-only (scripts, wheels, a CLI)")
    run.add_argument("--arg", action="append", default=[], metavar="ARG",
                     help="one more argument for the agent's argv (repeatable)")
    run.add_argument("--tool-dir", metavar="DIR", help="the backend's CLI folder to mount")
    run.add_argument("--install", action="store_true", help="install the CLI first if needed")
    run.add_argument("--budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
                     help="the agent's time budget (default 3600, as officially)")
    run.add_argument("--gpus", default="all", help="all (default), none, or e.g. 0,1")
    run.add_argument("--network", default="auto",
                     help="auto (bridge where docker0 exists, else host), bridge, host, none")
    run.add_argument("--env-file", metavar="FILE", help="KEY=VALUE lines for the agent only")
    run.add_argument("--secret", action="append", default=[], metavar="NAME",
                     help="pass this environment variable to the agent (repeatable)")
    run.add_argument("--task-image", metavar="IMAGE",
                     help="start from this image (default reb-task:<owner>__<name>)")
    run.add_argument("--out", default="reports/agent-runs", metavar="DIR",
                     help="run folders, agent_runs.jsonl, matrix.jsonl (default "
                          "reports/agent-runs)")
    run.add_argument("--matrix", metavar="FILE", help="the run matrix to append to")
    run.add_argument("--no-preflight", dest="preflight", action="store_false",
                     help="start the budget without checking that the agent reaches its model")
    run.add_argument("--scrub-secrets", action="store_true",
                     help="where a secret is found in the agent's layer, take those paths out "
                          "of it and commit (default: commit nothing, status secret_leaked)")
    run.add_argument("--service", choices=sorted(SERVICES),
                     help="the model service a --command agent uses, for its preflight")
    run.add_argument("--error-regex", metavar="REGEX",
                     help="a --command agent's words for a connection or authentication "
                          "failure, read from the end of its log (status agent_error)")
    run.set_defaults(func=_run)


def joined_args(argv: Sequence[str]) -> list[str]:
    """``--arg --model`` as ``--arg=--model``: argparse takes a value that starts with a dash
    for an option of its own, and an agent's arguments mostly do."""
    out: list[str] = []
    it = iter(argv)
    for part in it:
        if part == "--arg":
            value = next(it, None)
            out.append("--arg" if value is None else f"--arg={value}")
        else:
            out.append(part)
    return out
