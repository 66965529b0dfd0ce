"""The declarative vocabulary of a ``repos/`` module: ``Repo``, ``Run`` and launchers.

A repository module is read by a person first and by the plugin second, so
everything here is plain frozen data with the official facts spelled out
(commit, import total, per-stage command, timeout, launcher, ranks, success
rule).  Behaviour lives in the tiers; the only logic here is the pure
evaluation of a success rule against what a run printed, so that every special
rule the official probes used is one named, tested value instead of 44 copies
of ad-hoc shell.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pytest_reb.variants import C2_MAJORITY, MAJORITY, C2Variant, CompatVariant

#: Where the official harness put the checkout and the agent's report.
OFFICIAL_REPO_DIR = "/data/project/repo"
OFFICIAL_REPORT_PATH = "/opt/scimlopsbench/report.json"
#: Where a task image keeps the agent's prompt and the report's schema (``reb task build``).
TASK_DIR = "/opt/scimlopsbench"
PROMPT_PATH = f"{TASK_DIR}/prompt.md"
SCHEMA_PATH = f"{TASK_DIR}/report_schema.json"

#: Where ``reb task``, ``reb agent``, ``reb slurm`` and ``reb k8s`` read repository modules
#: unless ``--modules`` names them: the suite and the demo of a pytest-reb checkout
#: (``checkout_root``), docs/options.md; the package never looks beside itself.
DEFAULT_MODULES = (Path("repos"), Path("demo"))
MODULES_HELP = ("repository modules or folders of them (default repos/ and demo/ of the "
                "checkout: $REB_SOURCE, else the working directory)")


def checkout_root() -> Path:
    """The pytest-reb checkout whose files a command reads: ``$REB_SOURCE``, else the
    working directory (relative then, so messages name ``repos``, not a long path)."""
    return Path(os.environ.get("REB_SOURCE") or ".")


def module_paths(given: Sequence[Path] | None) -> list[Path]:
    """``--modules`` as given, else those of ``DEFAULT_MODULES`` in the checkout that exist
    (all of them if none does, so that the caller's error names where it looked)."""
    if given:
        return list(given)
    defaults = [checkout_root() / p for p in DEFAULT_MODULES]
    return [p for p in defaults if p.exists()] or defaults

#: How the ranks of a distributed run come to exist; decides what C4 evidence means.
Launcher = Literal[
    "none",  # one process
    "torchrun",  # torch.distributed.run, one rank per GPU
    "torchrun_path",  # a bare `torchrun` from PATH
    "accelerate",  # accelerate launch
    "deepspeed",  # the deepspeed launcher
    "lightning",  # Lightning spawns its own DDP ranks
    "detectron2",  # detectron2's launch() spawns workers
    "engine",  # an inference engine spawns its own tensor/sequence-parallel workers
    "device_map",  # ONE process shards a model over several GPUs (not DDP)
    "server_http",  # a server checked over HTTP
    "orchestrated",  # helper processes started around the entrypoint
    "pytest",  # a pytest node of the repository
]

#: Skip reasons of the official categories CSV.
SkipReason = Literal["not_applicable", "repo_not_supported", "unknown"]

Tier = Literal["c0", "c1", "c2", "c3", "c4", "c5"]
AssetKind = Literal["dataset", "data", "model", "tokenizer", "config"]
STAGE_OF_TIER: dict[str, str] = {"c1": "cpu", "c3": "single_gpu", "c4": "multi_gpu"}


# --------------------------------------------------------------------------- success rules


@dataclass(frozen=True)
class Http:
    """A server run judged over HTTP from inside the target (the official ``server_http``).

    The run's argv starts the server; a client (our probe, under the report's
    interpreter) waits for ``ready`` to answer 200 within ``ready_within``
    seconds, sends ``request`` and checks the answer with ``expect_json_key``
    or ``min_bytes``.  ``port=0`` means a free port chosen at run time and
    substituted for ``{port}`` in argv.
    """

    port: int = 0
    ready: str = "GET /"
    ready_within: float = 120.0
    request: str = "GET /"
    json_body: Mapping[str, object] | None = None
    form_files: Mapping[str, str] | None = None  # field -> path in the target
    form_fields: Mapping[str, str] | None = None
    expect_json_key: str | None = None
    min_bytes: int = 0
    request_timeout: float = 120.0


@dataclass(frozen=True)
class Retry:
    """Run ``run`` instead when the first attempt failed and its log matched ``when``."""

    when: str
    run: Run


@dataclass(frozen=True)
class Helper:
    """A process a stage needs running beside it but does not judge (torchft's lighthouse).

    It starts before the run's commands, with the run's env and cwd; the
    first line of its output that matches ``ready`` gives the value exported
    as ``export`` to every command of the run (group 1 of the match, else the
    whole match).  It is killed when the run ends.  When no line matches
    within ``ready_within`` seconds, or it exits first, the run fails
    without starting.
    """

    argv: Sequence[str]
    export: str
    ready: str
    ready_within: float = 60.0


@dataclass(frozen=True)
class Run:
    """One stage's command, exactly as the official probe ran it.

    ``argv``, ``env`` and ``cwd`` may hold the placeholders ``{python}``,
    ``{repo}``, ``{assets}``, ``{out}``, ``{port}`` (a free loopback port,
    one per run) and ``{shims}`` (``shim_dir`` as the target sees it), and
    the run-time values the official probes computed, resolved in the target
    after ``setup`` and before the run: ``{glob:PATTERN}`` (the first path,
    sorted, that matches), ``{file:PATH}`` (a file's text, stripped; usually
    one a setup step wrote) and ``{module:NAME}`` (the file of a module as
    the report's interpreter finds it).  A value that cannot be resolved
    fails the stage before it runs.  ``setup`` commands run first, in order,
    with the run's env and cwd (the files the official probes generated:
    configs, lists; made by our scripts in ``shim_dir``); one that fails
    fails the stage.  ``helpers`` run beside the commands.  ``expect_log`` must all
    appear in the combined output, ``reject_log`` must not (the official
    ``exit0+log:`` and ``exit0+no-log:`` rules).  ``stop_after`` sends
    ``stop_signal`` after that many seconds and then requires exit 0 (the
    official "run 8s then SIGINT").  ``together`` are further commands started
    at the same time that must all succeed (torchft's replica groups).
    """

    argv: Sequence[str]
    cwd: str = "{repo}"
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 600.0
    launcher: Launcher = "none"
    nproc: int = 1
    min_gpus: int = 0
    expect_log: Sequence[str] = ()
    reject_log: Sequence[str] = ()
    stop_after: float | None = None
    stop_signal: str = "SIGINT"
    together: Sequence[Run] = ()
    retry: Retry | None = None
    http: Http | None = None
    setup: Sequence[Sequence[str]] = ()
    helpers: Sequence[Helper] = ()
    entrypoint: str | None = None  # repo-relative file whose edit fails the tier (integrity)
    shim: str | None = None  # what we inject without touching tracked files, and why
    #: Host folder of our own support files that reproduce ``shim`` (a ``sitecustomize.py``,
    #: wrapper scripts), usually ``repos/shims/<module>``. It is mounted read-only where the
    #: official harness put its probe folder, ``{repo}/benchmark_scripts`` (so the official
    #: paths in argv and env work unchanged), and put first on ``PYTHONPATH``; no tracked file
    #: is touched.
    shim_dir: str | None = None
    note: str = ""

    def names_shims(self) -> bool:
        """Whether this run, a run started with it or its retry names ``SHIMS``."""
        return (self.shim_dir == SHIMS or any(r.names_shims() for r in self.together)
                or (self.retry is not None and self.retry.run.names_shims()))

    def shims_at(self, folder: str) -> Run:
        """This run with ``SHIMS`` (here, in its ``together`` runs and its retry) as ``folder``."""
        retry = self.retry
        if retry is not None:
            retry = replace(retry, run=retry.run.shims_at(folder))
        return replace(self, shim_dir=folder if self.shim_dir == SHIMS else self.shim_dir,
                       together=tuple(r.shims_at(folder) for r in self.together), retry=retry)

    def with_env(self, **env: str) -> Run:
        """A copy with extra environment variables (later ones win)."""
        return replace(self, env={**self.env, **env})

    def texts(self) -> list[str]:
        """Every string of this run (not its ``together`` or ``retry``) that placeholders and
        run-time values may appear in: argv, env, cwd, setup and helper commands, HTTP bodies."""
        texts = [*self.argv, *self.env.values(), self.cwd,
                 *(a for argv in (*self.setup, *(h.argv for h in self.helpers)) for a in argv)]
        if self.http is not None:
            texts.append(json.dumps([self.http.json_body, self.http.form_files,
                                     self.http.form_fields]))
        return texts

    def judge_log(self, log: str) -> str | None:
        """Why the output breaks this run's log rules, or None when it does not."""
        for marker in self.expect_log:
            if marker not in log:
                return f"expected log marker {marker!r} not found"
        for pattern in self.reject_log:
            if pattern in log:
                return f"failure pattern {pattern!r} found in the log"
        return None

    def retry_for(self, log: str) -> Run | None:
        """The retry run to use after a failed attempt whose log is ``log``."""
        if self.retry is not None and re.search(self.retry.when, log):
            return self.retry.run
        return None


# --------------------------------------------------------------------------- launchers

_TORCHRUN = ("{python}", "-m", "torch.distributed.run", "--standalone")


def torchrun(script: str, *args: str, nproc: int = 2, **kw: Any) -> Run:
    """``python -m torch.distributed.run --standalone --nproc_per_node=N script args``."""
    argv = [*_TORCHRUN, f"--nproc_per_node={nproc}", script, *args]
    return Run(argv, launcher="torchrun", nproc=nproc, min_gpus=nproc, **kw)


def accelerate(script: str, *args: str, nproc: int = 2, **kw: Any) -> Run:
    """``python -m accelerate.commands.launch --num_processes N script args``."""
    argv = ["{python}", "-m", "accelerate.commands.launch", "--num_processes", str(nproc),
            script, *args]
    return Run(argv, launcher="accelerate", nproc=nproc, min_gpus=nproc, **kw)


def deepspeed(script: str, *args: str, nproc: int = 2, **kw: Any) -> Run:
    """``python -m deepspeed --num_gpus N script args``."""
    argv = ["{python}", "-m", "deepspeed", "--num_gpus", str(nproc), script, *args]
    return Run(argv, launcher="deepspeed", nproc=nproc, min_gpus=nproc, **kw)


def self_launching(argv: Sequence[str], *, launcher: Launcher = "lightning", nproc: int = 2,
                   **kw: Any) -> Run:
    """A program that spawns its own ranks (Lightning, detectron2, an engine)."""
    return Run(list(argv), launcher=launcher, nproc=nproc, min_gpus=nproc, **kw)


#: The host's own ``-c`` command that runs a pytest node in the interpreter it starts.  The
#: witness takes a host command as the run's own program (``python -m pytest`` is pytest's),
#: its normal end as the finish (pytest's ``__main__`` ends with ``SystemExit``, code not the
#: checkout's), and ``--assert=plain`` keeps the test module the import system's own load of
#: its file (assertion rewriting compiles a changed AST under the file's name: not its code).
PYTEST_NODE = ("import sys, pytest\ncode = pytest.main(sys.argv[1:])\n"
               "if code:\n    raise SystemExit(int(code))\n")


def pytest_node(node: str, *args: str, **kw: Any) -> Run:
    """A pytest node of the repository that must pass (exit 0; 5 = nothing collected fails),
    run as pytest's own command line would, without writing a cache into the checkout."""
    return Run(["{python}", "-c", PYTEST_NODE, "-q", "-p", "no:cacheprovider",
                "--assert=plain", node, *args], launcher="pytest", **kw)


# --------------------------------------------------------------------------- assets


@dataclass(frozen=True)
class Synthetic:
    """What a ``synthetic`` asset holds, spelled in its module so a reader sees the content.

    ``text`` is written offline as the asset's one file; ``made_by`` says which
    setup step writes it instead, for content that depends on code or data we
    cannot read on the host (preparing such an asset fails with that reason).
    """

    text: str | None = None
    made_by: str = ""

    @classmethod
    def lines(cls, *lines: str) -> Synthetic:
        """A text file of these lines, each ended by a newline."""
        return cls("".join(f"{line}\n" for line in lines))

    @classmethod
    def yaml(cls, **values: object) -> Synthetic:
        """A flat YAML mapping, one ``key: value`` line each (values as JSON, valid YAML)."""
        return cls("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()))

    @classmethod
    def json(cls, value: object) -> Synthetic:
        """``value`` as indented JSON."""
        return cls(json.dumps(value, indent=2) + "\n")

    @classmethod
    def by_setup(cls, why: str) -> Synthetic:
        """Not made here: ``why`` names the setup step that writes it."""
        return cls(made_by=why)


@dataclass(frozen=True)
class Asset:
    """Something a stage needs that the official prepare step fetched or made.

    ``source`` is ``hf``, ``hf_dataset``, ``url``, ``repo``, ``git``,
    ``modelscope`` or ``synthetic``; ``kind`` gives the official failure
    category when it is missing (``model`` and ``tokenizer`` -> ``model``,
    the rest -> ``data``).

    Where it goes is declared, not guessed: ``dest`` is relative to
    ``{assets}``; ending in ``/`` it is a folder the fetched files go into,
    otherwise a single fetched file lands at ``dest`` itself when its last
    part has a suffix, and a folder holds anything else.  A stage needs the
    asset when a path it names and ``dest`` contain one another.
    ``extract`` unpacks fetched archives; ``hf_cache`` lays a hub download out
    as a Hugging Face cache (``models--org--name/snapshots/...``) for stages
    that load by hub id; ``rename`` maps fetched file names to the expected
    ones.  ``url_paths`` maps a declared file of a ``url`` asset to its path
    under the url when the server's name differs (the file keeps its declared
    name).  ``hub_ids`` are the hub repositories a ``hf`` asset whose declared
    id is a pattern stands for at the pinned commit.  ``hub_files`` are the
    file patterns a hub asset that declares no files fetches (the one
    ``data_dir`` its stages load, not the whole repository).

    ``optional`` marks an asset the official prepare recorded but no stage
    reads: it is prepared, never required.  ``synthetic`` is the content of a
    ``synthetic`` asset (see ``Synthetic``).
    """

    name: str
    kind: AssetKind
    source: str
    _: KW_ONLY
    dest: str
    id: str | None = None
    url: str | None = None
    path: str | None = None
    files: Sequence[str] = ()
    extract: bool = False
    hf_cache: bool = False
    rename: Mapping[str, str] = field(default_factory=dict)
    url_paths: Mapping[str, str] = field(default_factory=dict)
    hub_ids: Sequence[str] = ()
    hub_files: Sequence[str] = ()
    optional: bool = False
    synthetic: Synthetic | None = None
    note: str = ""

    @property
    def network(self) -> bool:
        """Only these need the separate, opt-in prepare step."""
        return self.source not in ("repo", "synthetic")


def hf_asset(name: str, repo_id: str, *, dest: str, kind: AssetKind = "model",
             files: Sequence[str] = (), **kw: Any) -> Asset:
    """An asset from the Hugging Face hub (``kw``: the other ``Asset`` fields)."""
    return Asset(name, kind, "hf", dest=dest, id=repo_id, files=tuple(files), **kw)


# --------------------------------------------------------------------------- the repository


#: A run's ``shim_dir`` that names its repository's own shim folder (``Repo.shims``).
SHIMS = "<the repository's shims>"


@dataclass(frozen=True)
class Repo:
    """Everything the pyramid needs to know about one research repository.

    A stage set to ``None`` does not apply; ``skip`` holds the official
    reason for each such stage (default ``not_applicable``).
    """

    name: str  # owner/name
    commit: str
    imports_total: int = 0  # the C0 denominator
    cpu: Run | None = None
    single_gpu: Run | None = None
    multi_gpu: Run | None = None
    skip: Mapping[str, SkipReason] = field(default_factory=dict)
    assets: Sequence[Asset] = ()
    domain: str = ""
    repo_dir: str = OFFICIAL_REPO_DIR
    c5_compat: CompatVariant = MAJORITY  # its official C5 validator's rules
    c2_compat: C2Variant = C2_MAJORITY  # its official cuda check's rules
    #: The folders C0's pyright analyses where the repository's official bundle chose them by a
    #: heuristic of its own (ml-mdm's: the pyproject roots of a mono-repo), not the common one
    #: (``pyramid.c0_pyright.select_targets``); empty: the common heuristic
    c0_targets: Sequence[str] = ()
    #: Why the official bundle's pyright stage counts no missing import whatever pyright
    #: reports (a defect of that bundle, e.g. a name regex that matches no message);
    #: ``--reb-compat`` then gives its figure, 0, and keeps the rule's names beside it.
    #: Empty: the bundle counts by the rule.
    c0_official_counts_none: str = ""
    #: The host folder of our shims for this repository, which a run's ``shim_dir=SHIMS``
    #: names; by default ``shims/<module stem>`` beside the module that makes the ``Repo``
    #: (``repos/shims/test_owner__name/``), found when the ``Repo`` is made.
    shims: str | None = None

    def __post_init__(self) -> None:
        runs = [getattr(self, stage) for stage in ("cpu", "single_gpu", "multi_gpu")]
        if not any(r is not None and r.names_shims() for r in runs):
            return
        if self.shims is None:  # the module calling Repo(...): two frames up, past __init__
            made_in = sys._getframe(2).f_globals.get("__file__")
            if made_in is None:
                raise ValueError(f"{self.name}: a run names SHIMS, and the Repo has no module "
                                 "to find its shim folder beside; pass shims=")
            object.__setattr__(self, "shims", str(Path(made_in).parent / "shims"
                                                  / Path(made_in).stem))
        for stage, run in zip(("cpu", "single_gpu", "multi_gpu"), runs, strict=True):
            if run is not None:
                object.__setattr__(self, stage, run.shims_at(str(self.shims)))

    def stage(self, tier: str) -> Run | None:
        """The run of tier c1, c3 or c4."""
        return getattr(self, STAGE_OF_TIER[tier])

    def gpus_needed(self, tier: str) -> int:
        """GPUs a tier needs to be decided on evidence rather than failed before it runs
        (``insufficient_hardware``): C2 and C3 one, C4 ``max(2, min_gpus)``."""
        if tier == "c2":
            return 1
        run = self.stage(tier) if tier in ("c3", "c4") else None
        return 0 if run is None else max(1 if tier == "c3" else 2, run.min_gpus)

    def skip_reason(self, tier: str) -> str:
        """The official reason a tier that has no run is skipped."""
        return self.skip.get(STAGE_OF_TIER[tier], "not_applicable")

    @property
    def applicable(self) -> dict[str, bool]:
        """Which tiers count in the denominators (C0, C2 and C5 always do)."""
        return {"c0": True, "c1": self.cpu is not None, "c2": True,
                "c3": self.single_gpu is not None, "c4": self.multi_gpu is not None, "c5": True}


def repo_of(module: Any) -> Repo | None:
    """The module's ``repo`` if it is a repository module."""
    repo = getattr(module, "repo", None)
    return repo if isinstance(repo, Repo) else None


def repo_commits(items: Iterable[Any]) -> dict[str, str]:
    """owner/name -> pinned commit, from the collected repository modules (for the
    official layout, which names each repository's commit)."""
    out: dict[str, str] = {}
    for item in items:
        repo = repo_of(getattr(item, "module", None))
        if repo is not None:
            out[repo.name] = repo.commit
    return out
