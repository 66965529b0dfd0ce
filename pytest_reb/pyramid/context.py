"""What a tier's probe is given: one repository on one target, and the tier -> probe registry.

``Context`` is everything a tier needs about one (repository, target) pair:
the spec, the target, the interpreter the report names, the mode.  The
fixtures in ``pytest_reb.plugin.fixtures`` build it once per pair and cache each
tier's outcome on it, which is what lets C5 ask for every other tier without
running any of them twice.  Imports run one way: collection and the tiers
both import it, and it imports no tier (``tier_probe`` finds one by name, on
first use).
"""

from __future__ import annotations

import copy
import importlib
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from pytest_reb.assets.cache import AssetCache
from pytest_reb.assets.view import attach
from pytest_reb.evidence import fakescan, findings, integrity
from pytest_reb.outcome import Outcome, outcome_key
from pytest_reb.pyramid.answers import Answers
from pytest_reb.pyramid.lanes import OBSERVED_AHEAD, Lanes, Plan
from pytest_reb.pyramid.shims import mount_first
from pytest_reb.rules.integrity_verdict import Verdict
from pytest_reb.runs.matrix import TargetSpec
from pytest_reb.runs.options import RebOptions
from pytest_reb.spec import STAGE_OF_TIER, Repo, Run
from pytest_reb.targets import InfraError, Target, TargetError
from pytest_reb.targets.lease import GpuLeases

if TYPE_CHECKING:  # the report's model (pydantic) loads where a report is read
    from pytest_reb.selfreport import ReportLoad

#: Outcomes made without touching the target: no known-fakes scan for them.
_NO_TARGET = frozenset({"missing_report", "invalid_report", "infra"})

#: tier -> (test name, module holding ``probe``); the order is the order items run in.
TIER_TESTS: dict[str, tuple[str, str]] = {
    "c0": ("test_c0_imports", "pytest_reb.pyramid.c0_imports"),
    "c1": ("test_c1_cpu", "pytest_reb.pyramid.c1_cpu"),
    "c2": ("test_c2_cuda", "pytest_reb.pyramid.c2_cuda"),
    "c3": ("test_c3_single_gpu", "pytest_reb.pyramid.c3_single_gpu"),
    "c4": ("test_c4_multi_gpu", "pytest_reb.pyramid.c4_multi_gpu"),
    "c5": ("test_c5_audit", "pytest_reb.pyramid.c5_audit"),
}


def mount_for(target: Target, repo: Repo, cache: AssetCache | None, checkout: str) -> str | None:
    """Mount what ``repo``'s stages read (its first shim folder, its asset view) into every
    container ``target`` makes from now on; where ``{assets}`` is when not the official
    place (``assets.view.attach``).  The same mounts again change nothing."""
    mount_first(target, repo, checkout)
    return attach(target, repo, cache, checkout)


def interpreter(options: RebOptions, report: Callable[[], ReportLoad]) -> str | None:
    """The interpreter every tier runs: ``--reb-python``, else the report's (read only then).

    Compat runs whatever ``python_path`` the report names even when the
    report fails validation, as the official harness did.
    """
    if options.python:
        return options.python
    return report().claimed_python if options.compat else report().python


def stage_runs(repo: Repo, tiers: frozenset[str] | None = None,
               gpus: int | None = None) -> list[tuple[str, Run]]:
    """The repository's stages this run will start, by tier (C1, C3, C4): those among
    ``tiers`` that have a run, on ``gpus`` enough for it (fewer is ``insufficient_hardware``
    before anything runs: ``Repo.gpus_needed``); either None: no bound."""
    return [(tier, run) for tier in STAGE_OF_TIER
            if (run := repo.stage(tier)) is not None
            and (tiers is None or tier in tiers)
            and (gpus is None or gpus >= repo.gpus_needed(tier))]


def entry_scripts(repo: Repo, checkout: str, tiers: frozenset[str] | None = None,
                  gpus: int | None = None) -> list[str]:
    """The Python files the entrypoints of the stages this run will start (``stage_runs``)
    name, in the target.  The host compiles what they import before the first stage
    (``targets/precompile.py``): a GPU stage a CPU machine never starts, or a tier not
    selected, would be compiled for nothing (MoBA's ``examples/llama.py``, which imports
    transformers: 10 CPU-s)."""
    return list(dict.fromkeys(str(PurePosixPath(checkout) / run.entrypoint)
                              for _, run in stage_runs(repo, tiers, gpus)
                              if run.entrypoint and run.entrypoint.endswith(".py")))


def tier_probe(tier: str) -> Callable[[Context], Outcome]:
    """The ``probe`` function of a tier, imported on first use."""
    return importlib.import_module(TIER_TESTS[tier][1]).probe  # type: ignore[no-any-return]


def _lane_work(ctx: Context, tier: str) -> object:
    """What a lane does for ``tier`` (``lanes.py``): its outcome, or for a tier judged in its
    turn (C5) its observation, its module's ``ahead``."""
    if tier in OBSERVED_AHEAD:
        return importlib.import_module(TIER_TESTS[tier][1]).ahead(ctx)
    return ctx.make(tier, tier_probe(tier))


@dataclass
class Context:
    """One repository on one target, for the length of a module.

    The target and the report are fetched the first time a probe needs them,
    so a resumed or skipped tier never starts a container.
    """

    repo: Repo
    target_name: str
    connect: Callable[[], Target]
    #: reads the report through the target it is given (a lane's own sibling)
    read_report: Callable[[Callable[[], Target]], ReportLoad]
    resumed: Mapping[str, Outcome] = field(default_factory=dict)
    leases: GpuLeases = field(default_factory=lambda: GpuLeases([]))
    #: the run's options, whole (``runs/options.py``): the mode, ``--reb-python``,
    #: ``--reb-repo-dir``, what strict may trust, what a stage keeps
    options: RebOptions = field(default_factory=RebOptions)
    #: the target's spec: its agent label, and whether its agent ran past its budget
    spec: TargetSpec | None = None
    assets_dir: str | None = None
    #: the host's asset cache: its view of this repository is mounted at ``{assets}``
    asset_cache: AssetCache | None = None
    #: C2's native-extension sweep (``--reb-ext-sweep``: ``auto``, ``always``, ``never``;
    #: ``rules/c2.sweep_wanted``), ``never`` unless C2's own item is selected (C5 asking for
    #: C2's observation needs no sweep, and would record none)
    ext_sweep: str = "auto"
    #: the stage tiers (C1, C3, C4) this run selected for the pair (``stage_runs``: the host
    #: compiles their entry scripts' imports; a C3 or C4 among them makes an ``auto`` sweep
    #: after a passing C2 needless); None: all of them
    stage_tiers: frozenset[str] | None = None
    #: the verdict of a pair refused at collection (``verdict.misconfigured``): nothing runs
    refused: dict[str, Any] | None = None
    #: the lanes this pair's first tiers run in side by side (``lanes.plan``): an empty plan
    #: runs every tier in its turn, in the target
    side_by_side: Plan = field(default_factory=Plan)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    lanes: Lanes | None = field(default=None, repr=False)
    #: the known-fakes scan a lane makes before its tiers (``Lanes.start``), shared by copies
    fakes_ahead: Future[list[dict[str, Any]]] | None = field(default=None, repr=False)
    #: C5's strict question as C2's probe answered it (``answers.py``), shared by copies
    answers: Answers = field(default_factory=Answers, repr=False)

    @cached_property
    def target(self) -> Target:
        """The target, with the asset view and shim folder mounted before anything runs."""
        target = self.connect()
        seen = mount_for(target, self.repo, self.asset_cache, self.checkout)
        if seen is not None and self.assets_dir is None:
            self.assets_dir = seen
        return target

    @cached_property
    def report(self) -> ReportLoad:
        return self.read_report(lambda: self.target)

    @cached_property
    def checkout_verdict(self) -> Verdict:
        """The checkout against the pinned commit, examined once per target before any tier.

        A container lost under the check is examined once more in a fresh one;
        lost twice, the ``InfraError`` is the tier's ``infra``.
        """
        pinned = self.repo.commit.lower()
        for attempt in (1, 2):
            try:
                seen = integrity.before_any_run(self.target, self.checkout, pinned)
                break
            except InfraError:
                if attempt == 2:
                    raise
                self.target.close()
        if self.options.allow_mismatch and seen.head is not None and seen.head != pinned:
            seen = integrity.before_any_run(self.target, self.checkout, seen.head,
                                           against_head=True)
        return Verdict(pinned, seen, allowed=self.options.allow_mismatch)

    @property
    def integrity(self) -> list[dict[str, Any]]:
        """The findings of the verdict (``integrity.py``), recorded on the stage outcomes."""
        return self.checkout_verdict.findings

    @cached_property
    def known_fakes(self) -> list[dict[str, Any]]:
        """The known-fakes scan of the report's interpreter, once per target (``findings``):
        the lanes' when they make it, else made here."""
        if self.fakes_ahead is not None:
            return self.fakes_ahead.result()
        return self.scan_fakes()

    def scan_fakes(self) -> list[dict[str, Any]]:
        """Scan this context's target for known fakes (before anything of the image ran in it)."""
        if self.python is None:
            return []
        try:
            return fakescan.scan(self.target, self.python, self.checkout,
                                 trusted=self.options.trusted_hooks)
        except TargetError as exc:
            return [{"kind": "scan_incomplete", "path": self.python, "seen_from": "host",
                     "detail": f"the scan could not run: {exc}"}]

    @property
    def python(self) -> str | None:
        """The interpreter every tier runs (``interpreter``)."""
        return interpreter(self.options, lambda: self.report)

    @property
    def compat(self) -> bool:
        """The run's mode: ``--reb-compat`` (the official rules decide) or strict."""
        return self.options.compat

    @property
    def agent(self) -> str | None:
        """The agent label of the target (``--reb-matrix``), carried on every outcome."""
        return self.spec.agent if self.spec is not None else None

    @property
    def checkout(self) -> str:
        return self.options.repo_dir or self.repo.repo_dir

    @property
    def assets(self) -> str:
        return self.assets_dir or str(PurePosixPath(self.checkout) / "benchmark_assets")

    def outcome(self, tier: str, **kw: object) -> Outcome:
        """A fresh outcome of ``tier`` for this pair (status defaults to failed)."""
        kw.setdefault("status", "failed")
        return Outcome(repo=self.repo.name, target=self.target_name, tier=tier,
                       agent=self.agent, **kw)  # type: ignore[arg-type]

    def verdict(self, outcome: Outcome) -> Outcome:
        """Set ``status`` from the mode's verdict; keep both verdicts on the record."""
        chosen = outcome.compat if self.compat else outcome.strict
        outcome.status = "passed" if chosen else "failed"
        if outcome.status == "passed":
            outcome.category = None
        return outcome

    def once(self, tier: str, probe: Callable[[Context], Outcome]) -> Outcome:
        """Run ``probe`` the first time a tier is asked for; afterwards return what it saw.

        An outcome a resumed run already holds is returned without running anything.
        The first tier asked for starts the side-by-side lanes (``lanes.py``); a tier of a
        lane is then its lane's outcome, any other runs here once every lane is done.
        """
        if tier not in self.outcomes:
            if self.side_by_side and self.lanes is None:
                lanes, self.side_by_side = self.side_by_side, Plan()  # started once, or never
                self.lanes = Lanes.start(self, lanes, _lane_work)
            made = self.lanes.outcome(tier) if self.lanes is not None else None
            if made is None:
                made = self.make(tier, probe)
                crowded = self.lanes.ran_again(tier) if self.lanes is not None else None
                if crowded is not None:
                    made.evidence["crowded_run"] = crowded
            self.outcomes[tier] = made.as_data()  # nothing the image printed is shown raw
        return self.outcomes[tier]

    def make(self, tier: str, probe: Callable[[Context], Outcome]) -> Outcome:
        """``tier``'s outcome: resumed, the official agent-timeout score, or ``probe``'s."""
        done = self.resumed.get(outcome_key(self.repo.name, self.target_name, tier))
        if done is None and self.compat and self.spec is not None \
                and self.spec.agent_timed_out and self.repo.applicable[tier]:
            done = self._agent_timeout(tier)
        return done if done is not None else self._guarded(tier, probe)

    def on_sibling(self, sibling: Target) -> Context:
        """This pair as a lane sees it: ``sibling`` for its target, outcomes of its own, and
        what was read once (report, checkout verdict, known fakes) shared."""
        lane = copy.copy(self)
        lane.__dict__["target"] = sibling
        lane.outcomes, lane.lanes, lane.side_by_side = {}, None, Plan()
        return lane

    def stop_lanes(self) -> None:
        """End the lanes now (the pair is done, or the run stops): see ``Lanes.stop``."""
        if self.lanes is not None:
            self.lanes.stop()

    def _agent_timeout(self, tier: str) -> Outcome:
        """What the official harness scored after an agent timeout (harness notes §2.3): no
        probe ran, every applicable stage failed with ``timeout``; so C0 adds no missing
        import, C5 no hallucination, and there is no environment size. Strict runs verify
        the committed image as it is instead."""
        return self.outcome(tier, category="timeout", strict=None, compat=False, timed_out=True,
                            message="the agent ran past its budget; scored as officially "
                                    "(no probe runs after an agent timeout)")

    def _guarded(self, tier: str, probe: Callable[[Context], Outcome]) -> Outcome:
        """The probe, after the integrity verdict allowed it; a target that failed under it
        gets ``infra``, not a traceback.

        A container lost under a probe (``InfraError``) may be the machine's
        fault, not the image's: the probe is run once more in a fresh
        container, and the outcome says so.  Only the second loss is ``infra``.
        """
        started = time.time()
        if self.refused is not None:
            outcome = self.outcome(tier, category="misconfigured", strict=False, compat=False,
                                   message=self.refused["line"])
            outcome.integrity = self.refused
            return outcome
        lost: str | None = None
        for attempt in (1, 2):
            try:
                blocked = self.checkout_verdict.blocks(tier)
                if blocked is not None and not self.compat:
                    outcome = self.outcome(tier, category=blocked[0], message=blocked[1],
                                           strict=False, compat=None,
                                           findings=list(self.checkout_verdict.findings))
                else:
                    self._prepare_bytecode()
                    if tier == "c0":
                        self._scan_beside_c0()
                    outcome = probe(self)
                    outcome.started = started  # made after the probe ran; it began here
                    if blocked is not None:  # compat judged it; strict would not have
                        outcome.strict = False
                    if outcome.status != "skipped" and outcome.category not in _NO_TARGET:
                        findings.attach(outcome, self.known_fakes, strict=not self.compat)
                break
            except InfraError as exc:
                if attempt == 1:
                    lost = str(exc)
                    self.target.close()  # the next command gets a fresh container
                    continue
                outcome = self._infra(tier, started, exc)
            except TargetError as exc:
                outcome = self._infra(tier, started, exc)
                break
        if lost is not None:
            outcome.evidence["rerun"] = f"run again in a fresh container after: {lost[:300]}"
        if "checkout_verdict" in self.__dict__:
            outcome.integrity = self.checkout_verdict.to_json()
        return outcome

    @property
    def gpu_stages_after(self) -> bool:
        """Whether a C3 or C4 of this run will load the repository's code on this target's
        GPUs: selected, with a run, and the GPUs it needs there."""
        return any(tier != "c1" for tier, _ in stage_runs(self.repo, self.stage_tiers,
                                                          len(self.target.gpus)))

    def _scan_beside_c0(self) -> None:
        """Start the known-fakes scan beside C0's analysis, where the target runs two commands
        side by side without either seeing or ending the other's processes (the host itself:
        a session each) and no lane made it already.  C0 runs no code of the repository, and
        the scan waited for it: on ``local://`` it was a third of a pyramid's own time.  A
        target without that property (a container, ssh) scans when the first tier is done."""
        if (self.fakes_ahead is not None or "known_fakes" in self.__dict__
                or not self.target.side_by_side_commands):
            return
        try:
            if self.python is None:  # the report's interpreter, read here, not in the thread
                return
        except Exception:  # the tiers report it; the scan stays where it was
            return
        ahead: Future[list[dict[str, Any]]] = Future()

        def scan() -> None:
            try:
                ahead.set_result(self.scan_fakes())
            except BaseException as exc:  # known_fakes raises it where it asks
                ahead.set_exception(exc)

        threading.Thread(target=scan, name="reb-fakes-scan", daemon=True).start()
        self.fakes_ahead = ahead

    def _prepare_bytecode(self) -> None:
        """Have the host begin compiling what the tiers' interpreters will import, before the
        first of them starts (``Target.prepare_bytecode``; the stages wait for it), where the
        run's start did not already (``fixtures.prestart``)."""
        self.target.prepare_bytecode(lambda _fresh: self.python,
                                     entry_scripts(self.repo, self.checkout, self.stage_tiers,
                                                   len(self.target.gpus)))

    def _infra(self, tier: str, started: float, exc: Exception) -> Outcome:
        outcome = self.outcome(tier, category="infra", strict=False, compat=False,
                               message=f"not run to the end: {exc}")
        outcome.started, outcome.duration = started, round(time.time() - started, 3)
        return outcome
