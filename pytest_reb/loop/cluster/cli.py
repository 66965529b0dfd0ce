"""``reb slurm`` and ``reb k8s``: the subcommands, kept here so ``cli.py`` only adds them."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from pytest_reb.loop.cluster import gres
from pytest_reb.loop.cluster.k8s import HARNESS
from pytest_reb.loop.cluster.plan import TIERS, Plan, PlanError, make_plan
from pytest_reb.spec import MODULES_HELP, module_paths


def _tiers(text: str) -> list[str]:
    return [t.strip().lower() for t in text.split(",") if t.strip()]


def _add_plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="?", metavar="RUNS", help="run matrix (TOML or JSON lines)")
    p.add_argument("--modules", nargs="+", type=Path, metavar="PATH", help=MODULES_HELP)
    p.add_argument("--tiers", type=_tiers, default=list(TIERS), metavar="c1,c3,...",
                   help="tiers to run (default all); they decide GPUs and time limits")
    p.add_argument("--shards", type=int, metavar="N",
                   help="N tasks of several pairs each (default: one task per pair)")
    p.add_argument("--timeout-scale", type=float, default=1.0, metavar="X",
                   help="--reb-timeout-scale of every task; the time limits scale with it")
    p.add_argument("--python", default=sys.executable, metavar="PATH",
                   help="interpreter with pytest-reb on the nodes (default this one)")
    p.add_argument("--pytest-args", type=shlex.split, default=[], metavar="ARGS",
                   help="more pytest arguments for every task, one string")


def _plan(args: argparse.Namespace, command: str, node_gpus: int | None = None) -> Plan | None:
    if not args.runs:
        print(f"reb {command}: give a run matrix", file=sys.stderr)
        return None
    try:
        return make_plan(Path(args.runs), module_paths(args.modules), tiers=args.tiers,
                         shards=args.shards, timeout_scale=args.timeout_scale,
                         node_gpus=node_gpus)
    except PlanError as exc:
        print(f"reb {command}: {exc}", file=sys.stderr)
        return None


def _print_tasks(plan: Plan) -> None:
    from pytest_reb.loop.cluster.slurm import slurm_time

    for t in plan.tasks:
        print(f"  task {t.index}: {','.join(t.tiers)}, {t.gpus} GPU, {slurm_time(t.seconds)}: "
              + ", ".join(p.key for p in t.pairs))


def _nodes(args: argparse.Namespace) -> gres.NodeGres | None:
    """The cluster's GRES per node: ``--node-gpus``, else sinfo's (None: unknown, dry run)."""
    if args.node_gpus is not None:
        return gres.NodeGres({"gpu": args.node_gpus}, {}, (f"--node-gpus {args.node_gpus}",))
    try:
        return gres.ask(args.partition)
    except gres.GresError as exc:
        if not args.dry_run:
            raise
        print(f"reb slurm: {exc}; planning every selected tier (--dry-run)", file=sys.stderr)
        return None


def _refuse(requests: list[str], nodes: gres.NodeGres | None) -> None:
    """Raise before anything is written or submitted when a ``--gres`` cannot be met."""
    line = gres.refusal(requests, nodes) if nodes is not None else None
    if line is not None:
        raise gres.GresError(f"not submitted: {line}")


def _slurm(args: argparse.Namespace) -> int:
    from pytest_reb.loop.cluster import slurm
    from pytest_reb.runs.ids import new_run_id

    try:
        if args.merge:
            name = os.environ.get("SLURM_JOB_ID") or new_run_id()
            path, missing, data = slurm.merge_tasks(Path(args.merge), name)
            count = sum(len(t["tiers"]) for t in data["targets"])
            print(f"reb slurm: merged {count} outcome(s) of {len(data['targets'])} target(s) "
                  f"-> {path}")
            if missing:
                print(f"reb slurm: task(s) {missing} not done; `reb slurm --resubmit "
                      f"{args.merge}` continues them", file=sys.stderr)
            return 1 if missing else 0
        if args.resubmit:
            out = Path(args.resubmit).resolve()
            data = slurm.read_plan(out)
            args.partition = data["options"]["partition"]
            _refuse(gres.requests_of(data["options"]["sbatch_args"])
                    + [f"gpu:{t['gpus']}" for t in data["tasks"] if t["gpus"]], _nodes(args))
            script = slurm.resubmit_script(out)
        else:
            if args.runs and not Path(args.runs).is_file():  # before the cluster is asked
                print(f"reb slurm: no such run matrix: {args.runs}", file=sys.stderr)
                return 2
            nodes = _nodes(args)
            _refuse(gres.requests_of(args.sbatch_arg), nodes)
            plan = _plan(args, "slurm", None if nodes is None else nodes.gpus)
            if plan is None:
                return 2
            for line in plan.skipped:
                print(f"reb slurm: {line} ({nodes.describe() if nodes else ''})")
            out = Path(args.out or f"reports/slurm-{new_run_id()}").resolve()
            opts = slurm.SlurmOptions(
                name=args.name, partition=args.partition, account=args.account, qos=args.qos,
                constraint=args.constraint, sbatch_args=tuple(args.sbatch_arg),
                python=args.python, pytest_args=tuple(args.pytest_args))
            script = slurm.write(plan, out, opts)
            print(f"reb slurm: {len(plan.tasks)} task(s) -> {out}")
            _print_tasks(plan)
        if args.dry_run:
            print(f"reb slurm: not submitted (--dry-run); submit with: bash {script}")
            return 0
        sub = slurm.submit(script)
        print(f"reb slurm: array job(s) {', '.join(sub.arrays)}; merge job {sub.merge} "
              f"(afterany)")
        if not args.wait:
            return 0
        state = slurm.wait(sub.merge)
        for line in slurm.status_lines([*sub.arrays, sub.merge]):
            print(line)
        summary = out / "merged" / "latest" / "summary.json"
        print(f"reb slurm: merge job {state}; summary: {summary}")
        return 0 if state == "COMPLETED" and summary.is_file() else 1
    except (slurm.SlurmError, gres.GresError) as exc:
        print(f"reb slurm: {exc}", file=sys.stderr)
        return 2


def _k8s(args: argparse.Namespace) -> int:
    from pytest_reb.loop.cluster import k8s
    from pytest_reb.runs.ids import new_run_id

    if args.merge:
        try:
            path, missing = k8s.merge_indices(Path(args.merge), args.wait_for,
                                              timeout=args.timeout)
        except k8s.K8sError as exc:
            print(f"reb k8s: {exc}", file=sys.stderr)
            return 2
        print(f"reb k8s: merged {len(args.wait_for) - len(missing)} index run(s) -> {path}")
        if missing:
            print(f"reb k8s: index(es) {', '.join(missing)} wrote no summary.json", file=sys.stderr)
        return 1 if missing else 0
    plan = _plan(args, "k8s", args.node_gpus)
    if plan is None:
        return 2
    for line in plan.skipped:
        print(f"reb k8s: {line} (--node-gpus {args.node_gpus})", file=sys.stderr)
    opts = k8s.K8sOptions(
        run=new_run_id(), name=args.name, harness_image=args.harness_image,
        claim=args.claim, claim_size=args.claim_size, storage_class=args.storage_class,
        namespace=args.namespace, python=args.python, pytest_args=tuple(args.pytest_args),
        memory=args.memory, registry=args.registry)
    try:
        manifest = k8s.manifest(plan, opts)
        push = k8s.push_script(plan, opts) if args.registry else None
    except k8s.K8sError as exc:
        print(f"reb k8s: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(manifest, indent=2) + "\n"
    if not args.out:
        sys.stdout.write(text)
        if push is not None:
            print("reb k8s: push the images first:\n" + push, file=sys.stderr)
        return 0
    Path(args.out).write_text(text)
    jobs = [i["metadata"]["name"] for i in manifest["items"] if i["kind"] == "Job"]
    if push is not None:
        script = Path(args.out).with_suffix(".push.sh")
        script.write_text(push)
        print(f"reb k8s: push the images first: sh {script}")
    print(f"reb k8s: {len(jobs) - 1} Indexed Job(s) for {len(plan.tasks)} task(s) and "
          f"{jobs[-1]} -> {args.out} (kubectl apply -f {args.out})")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``slurm`` and ``k8s`` to the ``reb`` command's subcommands."""
    slurm = sub.add_parser("slurm", help="run a matrix as a Slurm job array, merged at the end")
    _add_plan_args(slurm)
    slurm.add_argument("--out", metavar="DIR",
                       help="shared folder for scripts, tasks' runs and the merged run "
                            "(default reports/slurm-<id>; every node must see it)")
    slurm.add_argument("--name", default="reb", help="job name (default reb)")
    for opt in ("partition", "account", "qos", "constraint"):
        slurm.add_argument(f"--{opt}", help=f"sbatch --{opt} of every job")
    slurm.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                       help="any other sbatch option for every job, e.g. --sbatch-arg=--mem=32G "
                            "(repeatable)")
    slurm.add_argument("--node-gpus", type=int, metavar="N",
                       help="GPUs of one node (default: the cluster's gpu GRES, from sinfo); "
                            "tiers that need more end insufficient_hardware, as on one such "
                            "machine")
    slurm.add_argument("--dry-run", action="store_true",
                       help="write the scripts and print what would be submitted")
    slurm.add_argument("--wait", action="store_true",
                       help="wait for the merge job; exit 0 when it merged every task")
    slurm.add_argument("--resubmit", metavar="DIR",
                       help="submit the tasks of DIR that are not done; each continues its run")
    slurm.add_argument("--merge", metavar="DIR",
                       help="join the tasks' runs of DIR into DIR/merged/<job id> (what the "
                            "merge job runs)")
    slurm.set_defaults(func=_slurm)
    kube = sub.add_parser("k8s", help="write a matrix as Kubernetes Indexed Jobs (JSON)")
    _add_plan_args(kube)
    kube.add_argument("--out", metavar="FILE", help="write the manifest here (default stdout)")
    kube.add_argument("--name", default="reb", help="prefix of the Jobs' names (default reb)")
    kube.add_argument("--harness-image", default="pytest-reb-harness:latest", metavar="IMAGE",
                      help="image whose /opt/reb holds pytest-reb and its interpreter")
    kube.add_argument("--claim", metavar="PVC",
                      help="an existing PersistentVolumeClaim for the runs (default: the "
                           "manifest makes <name>-<run id>-outcomes)")
    kube.add_argument("--claim-size", default="20Gi", metavar="SIZE",
                      help="storage the made claim asks for (default 20Gi)")
    kube.add_argument("--storage-class", metavar="CLASS",
                      help="storageClassName of the made claim (one with ReadWriteMany)")
    kube.add_argument("--merge", metavar="DIR",
                      help="wait for the indices' runs under DIR and merge them into "
                           "DIR/merged (what the merge Job runs)")
    kube.add_argument("--wait-for", nargs="+", default=[], metavar="JOB/I",
                      help="with --merge: the index folders to wait for")
    kube.add_argument("--timeout", type=float, default=3600.0, metavar="S",
                      help="with --merge: merge what there is after S seconds")
    kube.add_argument("--namespace", default="default")
    kube.add_argument("--node-gpus", type=int, metavar="N",
                      help="GPUs of one node (0 on a GPU-less cluster): no pod asks for more; "
                           "tiers that need more end insufficient_hardware, as on one such "
                           "machine (default: what the tiers need)")
    kube.add_argument("--registry", metavar="REGISTRY",
                      help="the cluster's registry, e.g. registry.example/team: every image is "
                           "named there, and --out gets a .push.sh beside it")
    kube.add_argument("--memory", default="16Gi", metavar="SIZE",
                      help="memory each verifying pod asks for and may use (default 16Gi)")
    kube.set_defaults(func=_k8s, python=f"{HARNESS}/bin/python")
