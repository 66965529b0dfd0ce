"""What each task of a cluster run needs: its (repository, target) pairs, GPUs and time.

A cluster scheduler must be told a task's GPUs and time limit before the task
starts, so the plan reads the same facts pytest reads later: the matrix rows
and the repository modules.  A task is one ``--reb-shard I/N`` of the matrix:
"one task per pair" is N = the number of pairs, "per shard" is a smaller N.
The split is ``distribute.shard_keys`` over the keys the plugin uses
(``<repo>|<target id>``), so every task's pytest selects exactly the pairs the
plan gave it, and ``reb merge`` of the tasks' runs is the single machine's run.

GPUs follow the tiers' own gates (C2 and C3 need one, C4 ``max(2, min_gpus)``);
C5 reads every other tier's outcome, so it asks for what they need, up to what a node
has; a tier a node has too few GPUs for ends ``insufficient_hardware`` as on one such
machine, so the merged result equals that machine's on every tier.  Time limits
are upper bounds built from the stage timeouts the tiers enforce, so a task is
never killed by the scheduler while a timeout of ours would still have fired.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_reb.outcome import TIERS, pair_key
from pytest_reb.runs.matrix import MatrixError, TargetSpec, load_matrix
from pytest_reb.runs.shards import shard_keys
from pytest_reb.spec import Repo, Run, repo_of

#: Per pair, what no stage timeout covers: container start and removal, the integrity
#: check of the checkout, the fakes scan, the report read.  Generous on purpose.
PAIR_OVERHEAD = 180.0
#: Per task: interpreter start, collection of the modules, the orphan sweep.
TASK_OVERHEAD = 120.0


class PlanError(ValueError):
    """A matrix or module set a cluster run cannot be planned from, with what to fix."""


@dataclass(frozen=True)
class Pair:
    """One (repository, target) pair, the unit the plugin keeps on one worker."""

    repo: Repo
    target: TargetSpec

    @property
    def key(self) -> str:
        """The plugin's pair key (``plugin.pytest_collection_modifyitems``)."""
        return pair_key(self.repo.name, self.target.id)


@dataclass(frozen=True)
class Task:
    """One scheduler task: shard ``shard`` of ``shards``, with what it must be given."""

    index: int  # 0-based: the array task id / completion index
    shards: int
    pairs: tuple[Pair, ...]
    gpus: int
    seconds: int
    tiers: tuple[str, ...] = ()  # the selected tiers this task runs (the cluster may drop some)

    def marker_expression(self) -> str:
        """The ``-m`` expression of this task's tiers."""
        return " or ".join(self.tiers)

    @property
    def shard(self) -> str:
        """The ``--reb-shard`` value of this task."""
        return f"{self.index + 1}/{self.shards}"


@dataclass(frozen=True)
class Plan:
    """A matrix split into tasks, and how every task runs pytest."""

    matrix: Path
    modules: tuple[Path, ...]
    tiers: tuple[str, ...]
    tasks: tuple[Task, ...]
    timeout_scale: float = 1.0
    #: tiers a node of the cluster has too few GPUs for, which end ``insufficient_hardware``
    #: as on one such machine: one line each, with why
    skipped: tuple[str, ...] = ()

    def marker_expression(self) -> str:
        """The ``-m`` expression that selects ``tiers``."""
        return " or ".join(self.tiers)


def load_modules(paths: Iterable[Path]) -> dict[Path, Repo]:
    """Every repository module under ``paths`` (files or folders), by resolved path."""
    found: dict[Path, Repo] = {}
    for path in paths:
        if not path.exists():
            raise PlanError(f"no such module or folder: {path} (--modules names the suite's "
                            "folder; run from a pytest-reb checkout or set REB_SOURCE)")
        files = sorted(path.glob("test_*.py")) if path.is_dir() else [path]
        for file in files:
            file = file.resolve()
            spec = importlib.util.spec_from_file_location(f"_reb_plan.{file.stem}", file)
            if spec is None or spec.loader is None:
                raise PlanError(f"{file}: not an importable Python file")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            repo = repo_of(module)
            if repo is not None:
                found[file] = repo
    if not found:
        raise PlanError(f"no repository module (a test_*.py with `repo = Repo(...)`) in "
                        f"{', '.join(map(str, paths))}")
    return found


def pairs_of(targets: Sequence[TargetSpec], modules: dict[Path, Repo]) -> list[Pair]:
    """Each row with its module, as the plugin pins it (by ``Repo.name`` or module name)."""
    by_name: dict[str, Repo] = {}
    for file, repo in modules.items():
        by_name[repo.name.lower()] = by_name[file.stem.lower()] = repo
    pairs = []
    for number, target in enumerate(targets, 1):
        if not target.repo:
            raise PlanError(f"matrix row {number} ({target.id}) has no repo: a cluster task "
                            "must know its module before it starts; add repo = \"owner/name\"")
        repo = by_name.get(target.repo.lower())
        if repo is None:
            raise PlanError(f"matrix row {number}: no module for {target.repo} among the "
                            f"modules given ({len(modules)}); pass its file or folder")
        pairs.append(Pair(repo, target))
    return pairs


def run_seconds(run: Run) -> float:
    """Worst case of one stage: its setup commands, its command, its helpers, its retry.

    Every setup command and the command itself get the run's timeout
    (``tiers.entrypoint``); ``together`` commands run at the same time.
    """
    seconds = run.timeout * (1 + len(run.setup)) + sum(h.ready_within for h in run.helpers)
    return seconds + (run_seconds(run.retry.run) if run.retry is not None else 0.0)


def tier_seconds(repo: Repo, tier: str, *, sweep: bool = True) -> float:
    """Upper bound of one tier's probes on one target, unscaled.

    ``sweep``: C2's native-extension sweep runs, which it does only when C2
    itself is selected; C2 run for C5 alone costs its probe.
    """
    from pytest_reb.evidence import env_size
    from pytest_reb.pyramid import c0_imports, c2_cuda, ext_sweep
    from pytest_reb.pyramid import c5_observe as observe

    if tier == "c0":
        return c0_imports.SURVEY_TIMEOUT + c0_imports.TIMEOUT + c0_imports.BINDING_TIMEOUT
    if tier == "c2":
        return c2_cuda.TIMEOUT + (ext_sweep.TIMEOUT if sweep else 0.0)
    if tier == "c5":  # the environment's size, and the claimed interpreter observed
        return (env_size.TIMEOUT + 2 * observe.TEST_TIMEOUT + 2 * observe.PROBE_TIMEOUT
                + observe.VERSION_TIMEOUT)
    run = repo.stage(tier)
    return run_seconds(run) if run is not None else 0.0


def closure(tiers: Iterable[str]) -> tuple[str, ...]:
    """The tiers that run when ``tiers`` are selected: C5 runs every other tier's probe."""
    chosen = set(tiers)
    unknown = chosen - set(TIERS)
    if unknown or not chosen:
        raise PlanError(f"tiers must be among {', '.join(TIERS)}, not {sorted(unknown) or '[]'}")
    return TIERS if "c5" in chosen else tuple(t for t in TIERS if t in chosen)


def pair_needs(pair: Pair, tiers: Sequence[str]) -> tuple[int, float]:
    """(GPUs, unscaled seconds) of one pair over the tiers that will run.

    Where the tiers run in side-by-side lanes, a lane's tier that ran out of time computing
    beside the others runs once more alone (``lanes.py``): the worst case counts it twice.
    """
    from pytest_reb.pyramid.lanes import plan

    ran = closure(tiers)
    gpus = max((pair.repo.gpus_needed(t) for t in ran), default=0)
    sweep = "c2" in tiers
    again = {t for lane in plan(ran).lanes for t in lane}
    return gpus, PAIR_OVERHEAD + sum(tier_seconds(pair.repo, t, sweep=sweep) *
                                     (2 if t in again else 1) for t in ran)


def fit(pairs: Sequence[Pair], tiers: Sequence[str], node_gpus: int | None
        ) -> tuple[tuple[str, ...], dict[str, str]]:
    """The selected tiers one task runs on nodes of ``node_gpus`` GPUs, and which of them
    end ``insufficient_hardware`` there, with why.

    A task must run what one machine of ``node_gpus`` GPUs runs, so that the merged result
    equals that machine's on every tier: every selected tier is planned. A tier that needs
    more GPUs than a node has ends ``insufficient_hardware`` before it runs anything, as it
    does on such a machine (the task asks for no more than a node has, so it never queues
    for a request the cluster rejects). C5 needs no GPU of its own: it compares the other
    tiers' outcomes, whatever they are, and runs on any node (``None``: no limit).
    """
    chosen = tuple(t for t in TIERS if t in tiers)
    if node_gpus is None:
        return chosen, {}
    why = {}
    for tier in chosen:
        need = max(p.repo.gpus_needed(tier) for p in pairs)
        if need > node_gpus:
            why[tier] = f"{tier.upper()} needs {need} GPU(s)"
    return chosen, why


def make_plan(matrix: Path, modules: Sequence[Path], *, tiers: Sequence[str] = TIERS,
              shards: int | None = None, timeout_scale: float = 1.0,
              agent_budget: float = 0.0, node_gpus: int | None = None) -> Plan:
    """Split ``matrix`` into tasks: one per pair (``shards=None``) or ``shards`` of them.

    ``agent_budget`` is the time a task spends before the verification (an
    agent run of the benchmark loop); it is added to every task's limit.
    ``node_gpus``: the most GPUs one node of the cluster has; no task asks for more, and
    the tiers that need more end ``insufficient_hardware`` (``Plan.skipped`` says which
    and why); a task none of whose tiers could run is not planned at all.
    """
    try:
        targets = load_matrix(matrix)
    except MatrixError as exc:
        raise PlanError(str(exc)) from None
    loaded = load_modules(modules)
    pairs = {p.key: p for p in pairs_of(targets, loaded)}
    # every task collects the same modules, so every task computes the same split
    used = tuple(f for f, repo in loaded.items() if any(p.repo is repo for p in pairs.values()))
    if not pairs:
        raise PlanError(f"{matrix}: no rows")
    if shards is not None and shards < 1:
        raise PlanError(f"shards must be at least 1, not {shards}")
    count = len(pairs) if shards is None else min(shards, len(pairs))
    closure(tiers)  # unknown tiers are refused before anything is planned
    tasks, short = [], {}
    for index in range(count):
        mine = tuple(pairs[k] for k in sorted(shard_keys(set(pairs), (index + 1, count))))
        kept, why = fit(mine, tiers, node_gpus)
        for reason in why.values():
            short.setdefault(reason, []).extend(p.key for p in mine)
        if set(kept) <= set(why):
            continue  # nothing of it would run: not a task worth a node
        # the time of the tiers that run on this node (one short of GPUs ends at once)
        needs = [pair_needs(p, [t for t in kept if t not in why]) for p in mine]
        gpus = max(g for g, _ in needs)
        seconds = (TASK_OVERHEAD + sum(s for _, s in needs)) * timeout_scale + agent_budget
        tasks.append(Task(index, count, mine, gpus if node_gpus is None else
                          min(gpus, node_gpus), math.ceil(seconds / 60.0) * 60, kept))
    lines = tuple(f"{reason}, a node has {node_gpus}: ends insufficient_hardware (as on one "
                  f"machine of {node_gpus} GPU(s)) for {', '.join(keys)}"
                  for reason, keys in sorted(short.items()))
    if not tasks:
        raise PlanError("no selected tier can run on this cluster: " + "; ".join(lines))
    return Plan(matrix.resolve(), used, tuple(t for t in TIERS if t in tiers),
                tuple(tasks), timeout_scale, lines)
