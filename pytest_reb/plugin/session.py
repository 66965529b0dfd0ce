"""One pytest-reb run: its id and folder, its targets, its outcome log, and cleanup.

There is one ``RebSession`` per process (the controller and each xdist
worker), made when the plugin becomes active (``RebSession.open``).  The
controller names the run and passes the name to workers, so they all label
containers alike and write into the same run folder; only the controller
writes ``outcomes.jsonl`` and ``summary.json``, from the reports it receives,
which is what keeps the log consistent under ``-n``.  What a run does before
its first item (pre-flight of the Docker engine, ``--reb-prepare``) and after
its last (the sweep of its containers) is here too, so the plugin only calls it.

Around it: the options it is made from (``options.py``), its name (``runs.py``), the
engine checks and the sweep (``housekeeping.py``), signal handling (``signals.py``) and
the host's GPU line of the header (``evidence.describe_gpus``).
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_reb.evidence.gpu_use import describe_gpus, host_gpus
from pytest_reb.outcome import Outcome, OutcomeLog, one_line
from pytest_reb.plugin.signals import FinishHold, install_sigterm, interrupts_deferred
from pytest_reb.runs.ids import resolve_run
from pytest_reb.runs.matrix import MatrixError, TargetSpec
from pytest_reb.runs.options import RebOptions
from pytest_reb.spec import OFFICIAL_REPORT_PATH, Repo, repo_commits, repo_of
from pytest_reb.targets import Limits, Target, TargetError, is_remote, make_target
from pytest_reb.targets.housekeeping import engine, missing_images, sweep
from pytest_reb.targets.lease import LOCK_DIR, GpuLeases

if TYPE_CHECKING:  # imported where used: activation stays light, so collection comes sooner
    from pytest_reb.assets.cache import AssetCache, Prepared
    from pytest_reb.selfreport import ReportLoad

#: What a run without targets says once, so 264 skips are not a surprise.
NO_TARGET = "reb: no target given (--reb-image / --reb-host): tier items will skip"
#: The tiers that run a stage, and so read assets (C5 asks for them).
STAGE_TESTS = ("test_c1_cpu", "test_c3_single_gpu", "test_c4_multi_gpu", "test_c5_audit")


@dataclass
class RebSession:
    """State of this process's part of the run."""

    options: RebOptions
    run_id: str
    controller: bool
    targets: dict[str, Target] = field(default_factory=dict)
    remote_leases: dict[str, GpuLeases] = field(default_factory=dict)
    reports: dict[str, ReportLoad] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    resumed: dict[str, Outcome] = field(default_factory=dict)
    #: ``pair_key`` -> the verdict of a pair refused at collection (``collect.kept``)
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: one read of a report, whichever lane asks first (``report``)
    _reading: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: the Docker client the pre-flight check made, for this process's image targets
    _engine: Any = field(default=None, repr=False)
    #: Ctrl-C and SIGTERM held from the last item to the run's end, and whose exit it sets
    _finish_hold: tuple[FinishHold, pytest.Session] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, config: pytest.Config) -> RebSession:
        """The run of this process, made when pytest-reb becomes active.

        Bad options and an engine that cannot serve ``--reb-image`` are usage
        errors; the xdist controller checks the engine once for all workers.
        SIGTERM is turned into Ctrl-C only when there are targets, whose
        containers pytest's teardown must then remove.
        """
        try:
            options = RebOptions.from_config(config)
        except MatrixError as exc:
            raise pytest.UsageError(f"--reb-matrix: {exc}") from None
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        workerinput = getattr(config, "workerinput", None)
        try:  # a worker made active by its modules alone has no run from the controller
            run_id = ((workerinput or {}).get("reb_run_id")
                      or resolve_run(options.outdir, options.resume))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        session = cls(options, run_id, controller=workerinput is None)
        if session.controller:
            session.preflight()
        session.load_resume()
        if options.targets:
            install_sigterm()
        return session

    def preflight(self) -> None:
        """``--reb-image`` needs an engine that answers and holds every image (never pulled)."""
        images = sorted({t.image for t in self.options.targets if t.image})
        if not images:
            return
        client, problem = engine()
        if problem:
            raise pytest.UsageError(f"pytest-reb: {problem}; --reb-image needs it")
        self._engine = client  # this process's targets use it (one client, one negotiation)
        missing = missing_images(images, client)
        if missing:
            raise pytest.UsageError(
                f"pytest-reb: image(s) not on this Docker engine: {', '.join(missing)} "
                "(pytest-reb never pulls; build or `docker load` them first)")

    def header(self) -> list[str]:
        """The lines of pytest's report header: the run, this host's GPUs, the targets."""
        opts = self.options
        lines = [f"reb: run {self.run_id} -> {self.run_dir} "
                 f"({'compat: official exit-code rules' if opts.compat else 'strict'})",
                 f"reb: host {describe_gpus()}"]
        if opts.targets:
            lines.append("reb: targets " + ", ".join(t.id for t in opts.targets))
        else:
            lines.append(NO_TARGET)
        return lines

    def commits(self, items: Iterable[pytest.Item]) -> dict[str, str]:
        """owner/name -> pinned commit of the collected repositories (the report side reads
        the outcome model only, so it asks here)."""
        return repo_commits(items)

    def hold_finish(self, session: pytest.Session) -> None:
        """The items have run: a signal now waits for the end (``signals.FinishHold``)."""
        if self.options.targets and self._finish_hold is None:
            hold = FinishHold()
            hold.install()
            self._finish_hold = (hold, session)

    def release_finish(self) -> None:
        """The end is done: a signal held meanwhile makes the run's exit ``INTERRUPTED``."""
        if self._finish_hold is not None:
            hold, session = self._finish_hold
            self._finish_hold = None
            if hold.release():
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                print("pytest-reb: interrupted as the run finished; its outcomes, summary and "
                      "reports are complete, its containers removed", file=sys.stderr)

    def finish(self) -> None:
        """At exit: close the targets; the controller removes what its run left behind, where
        the run had an image to make containers of (a run on hosts only made none, and would
        pay the engine client's import and a listing for nothing)."""
        self.close()
        if self.controller and any(t.image for t in self.options.targets):
            with interrupts_deferred():
                sweep(self.run_id)

    @property
    def run_dir(self) -> Path:
        return self.options.outdir / self.run_id

    @property
    def log(self) -> OutcomeLog:
        return OutcomeLog(self.run_dir / "outcomes.jsonl")

    def load_resume(self) -> None:
        """Outcomes a resumed run already has; their items are not run again."""
        if self.options.resume is not None:
            self.resumed = self.log.latest()

    # -- targets

    @cached_property
    def asset_cache(self) -> AssetCache:
        """``--reb-assets DIR``, else the default cache on this host."""
        from pytest_reb.assets.cache import AssetCache, default_cache

        return AssetCache(self.options.assets or default_cache())

    def prepare(self, items: Iterable[pytest.Item], writer: Any) -> None:
        """``--reb-prepare``: the asset step, after collection and before any tier runs.

        One pass per collected repository whose stages read assets, copying
        repository assets from its first target.  Under xdist each worker gets
        here; the cache's per-repository lock makes the first do the work and
        the others find it done.  ``writer`` is pytest's terminal reporter, if any.
        """
        pairs: dict[str, tuple[Repo, TargetSpec | None]] = {}
        for item in items:
            repo = repo_of(getattr(item, "module", None))
            if repo is None or getattr(item, "originalname", item.name) not in STAGE_TESTS:
                continue
            callspec = getattr(item, "callspec", None)
            spec = callspec.params.get("reb_target_spec") if callspec else None
            pairs.setdefault(repo.name, (repo, spec))
        if writer is not None and pairs:
            writer.section(f"reb prepare -> {self.asset_cache.root}")
        for repo, spec in pairs.values():
            for result in self.prepare_assets(repo, spec):
                if writer is not None:
                    writer.write_line(one_line(f"{repo.name}: {result.line()}"))

    def prepare_assets(self, repo: Repo, spec: TargetSpec | None) -> list[Prepared]:
        """``--reb-prepare``: make every asset of ``repo``, network allowed (this step only).

        Repository assets are copied from the checkout in ``spec``'s target
        without starting it; with no target they fail and say so.
        """
        from pytest_reb.assets.fetchers import checkout_copy

        copy = None
        if spec is not None:
            try:
                target = self.target(spec)
            except TargetError:
                target = None
            copy = checkout_copy(target, self.options.repo_dir or repo.repo_dir)
        return self.asset_cache.prepare(repo, network=True, copy=copy)

    @cached_property
    def leases(self) -> GpuLeases:
        """The GPUs of this host (``--reb-gpus``, else all it has), under leases."""
        pool = self.options.gpus if self.options.gpus is not None else host_gpus()
        return GpuLeases(pool)

    def leases_for(self, spec: TargetSpec) -> GpuLeases:
        """This host's leases, or for a remote target its own: that machine's GPUs, under
        lock files of their own (so its GPU 0 and ours are not one lease).  The pool is
        filled when the target is first reached."""
        if not is_remote(spec.url):
            return self.leases
        if spec.url not in self.remote_leases:
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", str(spec.url))
            self.remote_leases[spec.url] = GpuLeases([], lock_dir=LOCK_DIR / slug)
        return self.remote_leases[spec.url]

    def target(self, spec: TargetSpec) -> Target:
        """The target for ``spec``, made on first use in this process."""
        if spec.url not in self.targets:
            limits = Limits(memory=self.options.memory, pids=self.options.pids,
                            network=self.options.network, disk=self.options.disk)
            remote = is_remote(spec.url)
            gpus = self.options.gpus if remote else self.leases.pool
            target = make_target(spec.url, run_id=self.run_id, gpus=gpus, limits=limits,
                                 timeout_scale=self.options.timeout_scale, client=self._engine)
            if remote:
                self.leases_for(spec).pool = list(target.gpus)
            self.targets[spec.url] = target
        return self.targets[spec.url]

    def release(self, spec: TargetSpec) -> None:
        with interrupts_deferred():
            target = self.targets.pop(spec.url, None)
            if target is not None:
                target.retire()  # for good: its copies too, and nothing made after this

    def close(self) -> None:
        with interrupts_deferred():
            for url in list(self.targets):
                target = self.targets.pop(url)
                with contextlib.suppress(Exception):
                    target.retire()

    def report(self, spec: TargetSpec, connect: Callable[[], Target]) -> ReportLoad:
        """The agent's report for a target: the host file given, else the official path in
        it, read through ``connect()`` (the caller's own fresh container of the image: every
        one holds the same file before anything of the image ran in it).

        Cached by target id, not URL: two agents' rows may share an image or a
        host (``local://``) and still each have their own report.
        """
        from pytest_reb.selfreport import MAX_REPORT_BYTES, load_report

        with self._reading:
            if spec.id not in self.reports:
                if spec.report:
                    path = Path(spec.report)
                    raw = _read_bounded(path, MAX_REPORT_BYTES + 1)
                    self.reports[spec.id] = load_report(raw, source=str(path))
                else:
                    raw = _image_report(connect(), MAX_REPORT_BYTES + 1)
                    self.reports[spec.id] = load_report(
                        raw, source=f"{spec.id}:{OFFICIAL_REPORT_PATH}")
            return self.reports[spec.id]

    def record(self, outcome: Outcome) -> None:
        """Controller only: keep the outcome and append it to the durable log at once."""
        self.outcomes[outcome.key] = outcome
        if self.resumed.get(outcome.key) != outcome:
            self.log.append(outcome)


def _image_report(target: Target, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the report at the official path in the target.

    Of an image, the bytes a fresh container holds there are its content's, so a file that
    was read is kept on the host by image id (``imagecache``) and a later verification of
    the same image reads it there, before any container of it is up.  An absent file is
    asked again each time (the archive read says None for an engine error too)."""
    import base64

    from pytest_reb.targets import imagecache

    image, parts = imagecache.image_id(target), (OFFICIAL_REPORT_PATH, str(limit))
    kept = imagecache.load("report", image, parts)
    if isinstance(kept, str):
        with contextlib.suppress(ValueError):
            return base64.b64decode(kept, validate=True)
    raw = target.read_file(OFFICIAL_REPORT_PATH, limit=limit)
    if raw is not None:
        imagecache.store("report", image, parts, base64.b64encode(raw).decode())
    return raw


def _read_bounded(path: Path, limit: int) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return None
