"""What generic resources (GRES) a Slurm cluster's nodes have, asked from the cluster itself.

``sbatch --gres=gpu:2`` on a cluster without a ``gpu`` GRES fails with Slurm's
bare ``Invalid generic resource (gres) specification``, after the scripts
are written and with no hint of which tier asked for it.  So ``reb slurm``
asks first: ``sinfo -h -o "%G"`` prints one GRES list per group of alike
nodes (``(null)``, ``gpu:4``, ``gpu:a100:4(S:0-1),shard:8``), which gives
the most of each resource one node offers.  A task can never get more GPUs
than one node has (our tasks are one node each), so the plan drops the tiers
that need more, and any ``--gres`` that still asks for what no node has is
refused before anything is submitted.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class GresError(RuntimeError):
    """The cluster could not be asked, or a request asks for what no node has."""


@dataclass(frozen=True)
class NodeGres:
    """Per resource name, the most one node has, in all and per type (``gpu:a100``)."""

    most: dict[str, int] = field(default_factory=dict)
    typed: dict[str, int] = field(default_factory=dict)  # "gpu:a100" -> most per node
    raw: tuple[str, ...] = ()  # sinfo's lines, for messages

    @property
    def gpus(self) -> int:
        """The most GPUs one node has (0 on a cluster without a ``gpu`` GRES)."""
        return self.most.get("gpu", 0)

    def describe(self) -> str:
        """sinfo's view in a few words, for messages."""
        shown = sorted({r for r in self.raw if r and r != "(null)"})
        return "GRES " + ", ".join(shown) if shown else "no GRES"


def parse(lines: Iterable[str]) -> NodeGres:
    """``sinfo -o %G`` lines as a :class:`NodeGres`.

    Each line is one group of nodes; within a line a resource may appear once
    per type, so a node's total of a name is the sum over its types.
    """
    most: dict[str, int] = {}
    typed: dict[str, int] = {}
    raw = tuple(line.strip() for line in lines if line.strip())
    for line in raw:
        totals: dict[str, int] = {}
        for item in re.sub(r"\([^)]*\)", "", line).split(","):
            parts = item.strip().split(":")
            if not parts[0] or parts[0] == "null":
                continue
            count = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
            totals[parts[0]] = totals.get(parts[0], 0) + count
            if len(parts) == 3:
                key = f"{parts[0]}:{parts[1]}"
                typed[key] = max(typed.get(key, 0), count)
        for name, count in totals.items():
            most[name] = max(most.get(name, 0), count)
    return NodeGres(most, typed, raw)


def ask(partition: str | None = None) -> NodeGres:
    """The cluster's (or one partition's) GRES, from ``sinfo``."""
    argv = ["sinfo", "-h", "-o", "%G", *(["-p", partition] if partition else [])]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GresError(f"cannot ask the cluster for its GPUs ({' '.join(argv)}: {exc}); "
                        "give --node-gpus N") from None
    if proc.returncode != 0 or not proc.stdout.strip():
        why = proc.stderr.strip() or f"no node{' in partition ' + partition if partition else ''}"
        raise GresError(f"cannot ask the cluster for its GPUs ({' '.join(argv)}: {why}); "
                        "give --node-gpus N")
    return parse(proc.stdout.splitlines())


def refusal(requests: Sequence[str], nodes: NodeGres) -> str | None:
    """One line naming the first ``--gres`` value no node can give, or None when all fit.

    A request is ``name[:type][:count]`` items joined by commas, as sbatch takes it.
    """
    for request in requests:
        for item in request.split(","):
            parts = item.strip().split(":")
            count = int(parts[-1]) if len(parts) > 1 and parts[-1].isdigit() else 1
            name = parts[0]
            kind = parts[1] if len(parts) == 3 or (len(parts) == 2 and not parts[1].isdigit()) \
                else None
            have = nodes.typed.get(f"{name}:{kind}", 0) if kind else nodes.most.get(name, 0)
            if count > have:
                wanted = f"{name}:{kind}" if kind else name
                return (f"--gres={request} asks for {count} {wanted} per node, but the "
                        f"cluster's nodes have at most {have} ({nodes.describe()})")
    return None


def requests_of(args: Iterable[str]) -> list[str]:
    """The ``--gres`` values among sbatch arguments (``--gres=X`` or ``--gres X``)."""
    found, args = [], list(args)
    for n, arg in enumerate(args):
        if arg.startswith("--gres="):
            found.append(arg.split("=", 1)[1])
        elif arg == "--gres" and n + 1 < len(args):
            found.append(args[n + 1])
    return found
