"""A target's first tiers side by side: C1 in containers of its own, C0 and C2 in others,
C5's observation in whichever is free first.

The official harness ran its stages one after the other, and so did pytest-reb:
C0, C1, C2, ... in one container.  The entrypoint (C1) is most of a pyramid's
time, and a research repository's ``python train.py`` on CPU often leaves a core
idle while it imports and loads (the official cpu stages measured on the real
images: 0.6-1.2 cores of 2).  So the first item of a pair starts two *lanes*,
each on a ``Target.sibling`` of its own (containers from the same image id,
limits and mounts, that share nothing with the target or each other):

- lane 1: C1;
- lane 2: C0, then C2, in the background: its containers have a quarter of the
  default CPU weight, so when the cores are contended the entrypoint, the
  longest of a pyramid's commands, keeps four fifths of them and runs about as
  fast as alone (the timeouts are the same; only the order of the work on busy
  cores changes);
- then, in the first lane done with its own tiers: C5's observation of the
  report's interpreter (``c5_audit.ahead``: the questions, the host's read of
  its versions, its size).  On the demo C1 ends first, on a real repository
  lane 2 does (while the extension sweep is not yet kept for the image, the
  other way round).

Each tier's item waits for its lane's outcome.  Every other tier (C3, C4) runs
in the target itself, in its turn, once every lane is done: the GPU's own
counters, C3's and C4's evidence of compute, must see that run alone.  C5 is
judged in its turn too, from the observation a lane made, against the
outcomes of the others.

Why the verdicts do not change: no lane reads what another wrote.  Each
sibling's containers start from the image, as the first stage's did; C0
installs nothing, C2's probe and C5's questions only read (C5's strict probe in a
fresh container of its own, ``Target.twin``, as before).  On a GPU host C1 already ran in a
container other than C2's (no GPU devices against a lease's).  What a stage
leaves in its containers was never evidence (docs/threat-model.md).  What every
tier shares (the report, the known-fakes scan) is read in a sibling before anything of
the image ran there: every fresh container of the image id holds the same files.  The lanes
are not used under ``--reb-compat``, which keeps the official order in one
container, nor under ``--reb-serial``; nor on targets with no sibling (the host
itself through ``local://``, ssh), where a command's end kills by process tree;
nor where xdist already gives every core a worker (``spare_cores``).

The lanes share the machine's cores and memory, so a verdict must not hang on them.  A
tier's command in a lane that, while other lanes worked beside it, either ran out of time
wanting a core (its container used at least ``CROWDED_SHARE`` of a core over it, by the
cgroup's counter, or was starved: ready to run but waiting for a core at least
``STARVED_SHARE`` of the time, by the cgroup's CPU pressure stall; ``crowded_why``) or was
killed for memory below its own container's limit (the machine's memory ran out: the
cgroup's limit was never reached), is not judged there: it runs again alone, in its
turn, with the same timeout, and that run is its outcome (``evidence.crowded_run`` keeps
the first and why).  An honest entrypoint that takes most of its timeout alone could run
past it beside C0's pyright or C2's extension sweep; one that needs most of the machine's
memory could lose it to them; on a machine crowded by other work one that computes may get
only hundredths of a core, yet it stalls, waiting for one, most of the time.  One that waited
instead (a download retried with no network: a fraction of a core, and next to no stall), or
that hit its own container's limit, lost nothing to the lanes and
is judged as it is, so a hang costs its timeout once.

A lane's thread ends its sibling when its work is done; a run that stops early
(Ctrl-C, SIGTERM, a failed module) retires every sibling first, so a command
still running is killed and no container is made after the run's clean-up.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_reb.outcome import Outcome
from pytest_reb.targets import Target, TargetError

if TYPE_CHECKING:
    from pytest_reb.pyramid.context import Context

#: The lanes, each a sequence of tiers run in order in a sibling of its own.
LANES: tuple[tuple[str, ...], ...] = (("c1",), ("c0", "c2"))
#: Work any lane takes once done with its own tiers, the first free first.
TAIL: tuple[str, ...] = ("c5",)
#: Tiers whose lane makes only their observation (their module's ``ahead``); the tier is
#: judged in the target, in its turn, from it (``Lanes.ahead``).
OBSERVED_AHEAD = frozenset({"c5"})
#: The tier whose probe, in a lane, answers C5's strict question (``answers.py``): C5's
#: observation waits for it, and its lane settles the answer however it ends.
ANSWERING = "c2"
#: Tiers that may run in a lane.
LANE_TIERS = frozenset({t for lane in LANES for t in lane} | set(TAIL))
#: The scan's finding when the lanes stopped before it was made.
STOPPED_SCAN = [{"kind": "scan_incomplete", "seen_from": "host",
                 "detail": "the run stopped before the known-fakes scan"}]
#: How long a stop waits for a retired lane's thread to notice (its command is killed).
STOP_WAIT = 30.0
#: The share of a core a timed-out command must have used to have lost time to the lanes
#: beside it: below it the command mostly waited.  The two families lie far apart: waiting
#: (a sleep 0.00; a download retried with no network, or an import and then a hang, a few
#: hundredths) and computing (a spinning loop got 0.38 of a core under a load of 7.7 on 2
#: cores, the real entrypoints 0.6-1.2 alone), so a busy machine's share stays above it.
CROWDED_SHARE = 0.1
#: The share of its wall time a timed-out command must have spent ready to run but waiting
#: for a core (``evidence.cpu_wait_seconds``, the cgroup's CPU pressure stall, which only the
#: kernel writes) to have been starved rather than idle.  On a machine loaded 10x over or more
#: a computing command gets less than ``CROWDED_SHARE`` of a core (C1's spinning loop in the
#: lanes at a load of 20-27 on 2 cores: 0.01-0.08), yet it is runnable the whole time, so it
#: stalls most of it (a spinning loop of the least CPU weight beside a sibling spinning on
#: every core: 0.008 of a core, stalled 0.60 of a wall time that counts the exec's start and
#: the kill too).  A sleeping process stalls next to never (0.009 of its wall time, the same
#: measure), and one woken now and then (a retried download, a poll) only while each wake-up
#: waits its turn; a quarter lies far from both.
STARVED_SHARE = 0.25


@dataclass(frozen=True)
class Plan:
    """Which lanes run which tiers, and the tail the first free lane takes."""

    lanes: tuple[tuple[str, ...], ...] = ()
    tail: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.lanes)


def spare_cores(workers: int) -> bool:
    """Whether a second lane has a core of its own: every xdist worker (``workers``, 1 without
    ``-n``) may run two lanes, so lanes need twice as many cores as workers.  Where every core
    already has a worker they only add containers (``bench/scaling.py``: 8 demo pairs under
    ``-n 2`` on 2 cores took 75.5 s with lanes, 59.5 s without)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2 * workers


def plan(tiers: Iterable[str]) -> Plan:
    """The lanes that run ``tiers``, each keeping its order; none when fewer than two lanes
    would have tiers of their own (one lane alone is the serial order with a container
    more)."""
    wanted = set(tiers)
    lanes = tuple(kept for lane in LANES if (kept := tuple(t for t in lane if t in wanted)))
    if len(lanes) < 2:
        return Plan()
    return Plan(lanes, tuple(t for t in TAIL if t in wanted))


#: Parts of the package a lane's work never imports (the loop outside pytest, assets,
#: reports and the HTML page, files mounted into targets); everything else is imported
#: before lanes run.
NOT_PRELOADED = frozenset({"assets", "html", "loop", "report", "shimlib"})


@functools.cache
def _preload() -> None:
    """Import here, in the thread that starts the lanes, what their work imports on first use.

    pytest rewrites a plugin's modules as they are imported (``ast.parse``), and CPython
    3.11's AST conversion keeps its recursion depth in interpreter-wide state: two lanes
    importing at once raised ``SystemError: AST constructor recursion depth mismatch`` and
    the tier lost its outcome.  Once per process, and what a pyramid imports anyway.
    """
    import importlib
    import pkgutil

    import pytest_reb

    def load(name: str) -> Any:
        try:
            return importlib.import_module(name)
        except ImportError:  # an optional dependency: whoever needs it says so, as before
            return None

    for found in pkgutil.iter_modules(pytest_reb.__path__, "pytest_reb."):
        if found.name.rsplit(".", 1)[1] in NOT_PRELOADED:
            continue
        module = load(found.name)
        if found.ispkg and module is not None:
            for inner in pkgutil.iter_modules(module.__path__, found.name + "."):
                if inner.name.rsplit(".", 1)[1] not in NOT_PRELOADED:
                    load(inner.name)


def crowded_why(timed_out: bool, duration: float, evidence: dict[str, Any]) -> str | None:
    """Why a lane's run of a tier may have lost to what ran beside it, from what the host
    counted (``evidence``: ``cpu_seconds``, ``cpu_wait_seconds``, ``oom_killed``,
    ``oom_at_own_limit``), or None when it lost nothing to them and is judged as it is.

    ``"timeout"``: it ran out of time wanting a core, either computing (at least
    ``CROWDED_SHARE`` of a core over the command) or starved (ready to run but waiting for
    a core at least ``STARVED_SHARE`` of the time); ``"memory"``: it was OOM-killed before
    its container reached its own limit (the machine's memory ran out).  A counter the host
    could not read counts as nothing.  The wait is a share of the span it was counted over
    (``cpu_wait_window``, where the host gave it), not of the whole ``duration``: under load
    the engine's starting and killing the exec adds seconds in which nothing of the command
    could wait for a core, and a starved command would read as one that slept.
    """
    def number(key: str) -> float | None:
        value = evidence.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return float(value)

    def share(key: str, over: float | None = None) -> float:
        value, span = number(key), over if over is not None and over > 0 else duration
        return 0.0 if value is None or span <= 0 else value / span

    if timed_out and (share("cpu_seconds") >= CROWDED_SHARE
                      or share("cpu_wait_seconds", number("cpu_wait_window")) >= STARVED_SHARE):
        return "timeout"
    if evidence.get("oom_killed") is True and evidence.get("oom_at_own_limit") is False:
        return "memory"
    return None


class Lanes:
    """The lanes of one (repository, target) pair: their threads, siblings and outcomes."""

    def __init__(self, plan: Plan) -> None:
        self._plan = plan
        self._futures: dict[str, Future[object]] = {
            t: Future() for t in (*(t for lane in plan.lanes for t in lane), *plan.tail)}
        #: per tier a lane ran: its lane and the tiers beside it (``evidence.side_by_side``)
        self._side: dict[str, dict[str, list[str]]] = {}
        self._tail = deque(plan.tail)
        self._lock = threading.Lock()
        self._siblings: list[Target] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        #: the known-fakes scan, made in the last lane's sibling before its tiers
        self._fakes: Future[list[dict[str, Any]]] = Future()
        #: when each lane worked: (lane, tier or "scan", start, end or None while it runs)
        self._spans: list[list[Any]] = []
        #: per tier run again alone: what its crowded lane run was (``crowded_run``)
        self._again: dict[str, dict[str, Any]] = {}

    @classmethod
    def start(cls, ctx: Context, plan: Plan,
              make: Callable[[Context, str], object]) -> Lanes | None:
        """Start the lanes of ``plan`` for ``ctx``, each tier's work done by
        ``make(lane_ctx, tier)`` (an ``Outcome``, or an observation for ``OBSERVED_AHEAD``);
        None when the target has no sibling or cannot be reached (the tiers then run in
        their turn, where the same failure becomes their outcome).

        What every tier shares is read once, each time in a container where nothing of the
        image ran yet: the checkout's verdict before any run here (kept per image, it needs
        no container once known), the report by whichever lane asks first, in its own
        sibling, and the known-fakes scan in the last lane's sibling before its tiers (a tier
        waits for it only to attach its findings).  The siblings' containers start at once;
        the target starts none of its own unless a tier runs there (C3, C4).
        """
        if ctx.refused is not None:  # nothing runs for a refused pair
            return None
        try:
            target = ctx.target
        except TargetError:
            return None
        _preload()
        made = cls(plan)
        for n in range(len(plan.lanes)):
            sibling = target.sibling(background=n > 0)
            if sibling is None:
                made.stop()
                return None
            made._siblings.append(sibling)
        made._warm()
        try:
            ctx.checkout_verdict  # noqa: B018 - read once, here, before any lane runs
        except TargetError:
            made.stop()
            return None
        ctx.fakes_ahead = made._fakes  # the lanes' copies of ctx share it
        if any(ANSWERING in lane for lane in plan.lanes) and plan.tail:
            ctx.answers.promise()  # shared by the copies too
        scanner = len(plan.lanes) - 1
        for n, (lane, sibling) in enumerate(zip(plan.lanes, made._siblings, strict=True)):
            thread = threading.Thread(
                target=made._run, args=(ctx.on_sibling(sibling), lane, sibling, make),
                kwargs={"scan": n == scanner}, name=f"reb-lane-{'-'.join(lane)}", daemon=True)
            made._threads.append(thread)
            thread.start()
        return made

    def _warm(self) -> None:
        """Start the siblings' containers now, beside the target's reads (the engine makes
        them side by side): nothing of the image runs in them until a lane's first command.
        A failure is left to that command, whose tier it then fails."""
        for sibling in self._siblings:
            thread = threading.Thread(target=sibling.warm,
                                      name="reb-lane-warm", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _next(self, own: list[str], lane: list[str]) -> str | None:
        """The lane's next tier: its own, else the tail's next (then it is the lane's)."""
        if own:
            return own.pop(0)
        with self._lock:
            if not self._tail:
                return None
            tier = self._tail.popleft()
        lane.append(tier)
        return tier

    def _run(self, ctx: Context, tiers: tuple[str, ...], sibling: Target,
             make: Callable[[Context, str], object], *, scan: bool) -> None:
        own, lane = list(tiers), list(tiers)
        beside = sorted(t for other in self._plan.lanes if other != tiers for t in other)
        try:
            if scan and not self._stop.is_set():
                try:
                    with self._span(tiers, "scan"):
                        found = ctx.scan_fakes()
                    self._scanned(found)
                except Exception as exc:  # the tiers run on; their findings say so
                    self._scanned([{**STOPPED_SCAN[0], "detail": f"the scan failed: {exc}"}])
            while (tier := self._next(own, lane)) is not None:
                future = self._futures[tier]
                if self._stop.is_set() or not future.set_running_or_notify_cancel():
                    continue
                try:
                    with self._span(tiers, tier):
                        made: object = make(ctx, tier)
                except BaseException as exc:  # handed to the item that waits for it
                    made = exc
                if tier == ANSWERING:  # a probe that ran gave its answer; else none comes
                    ctx.answers.give(None)
                self._side[tier] = {"lane": list(lane), "beside": beside}
                if isinstance(made, BaseException):
                    future.set_exception(made)
                    continue
                if isinstance(made, Outcome) and made.status != "skipped":
                    made.evidence["side_by_side"] = self._side[tier]
                future.set_result(made)
        finally:  # every command of the lane has ended: its containers go beside what follows
            self._scanned(STOPPED_SCAN)
            if ANSWERING in tiers:
                ctx.answers.give(None)  # no-op once given: nothing more will come
            with contextlib.suppress(Exception):
                sibling.retire()

    @contextlib.contextmanager
    def _span(self, lane: tuple[str, ...], work: str) -> Iterator[None]:
        span = [lane, work, time.time(), None]
        with self._lock:
            self._spans.append(span)
        try:
            yield
        finally:
            span[3] = time.time()

    def _beside(self, tier: str) -> tuple[float, list[str]]:
        """Seconds other lanes worked while ``tier``'s lane worked on it, and on what."""
        with self._lock:
            spans = [list(s) for s in self._spans]
        now = time.time()
        mine = [s for s in spans if s[1] == tier]
        if not mine:
            return 0.0, []
        lane, _, start, end = mine[0]
        end = now if end is None else end
        total, what = 0.0, []
        for other, work, b, e in spans:
            if other == lane:
                continue
            overlap = min(end, now if e is None else e) - max(start, b)
            if overlap > 0:
                total += overlap
                what.append(work)
        return total, sorted(set(what))

    def _crowded(self, tier: str, made: Outcome) -> dict[str, Any] | None:
        """What ``tier``'s lane run was, when it ran out of time computing or starved, or was
        killed for the machine's memory, while other lanes worked beside it (it then runs
        again alone); else None."""
        ev = made.evidence
        why = crowded_why(made.timed_out, made.duration, ev)
        if why is None:
            return None
        overlap, work = self._beside(tier)
        if overlap <= 0:
            return None
        return {"why": why, "duration": made.duration, "cpu_seconds": ev.get("cpu_seconds"),
                "cpu_wait_seconds": ev.get("cpu_wait_seconds"), "beside": work,
                "beside_seconds": round(overlap, 3), "category": made.category,
                "exit_code": made.exit_code}

    def ran_again(self, tier: str) -> dict[str, Any] | None:
        """The lane's crowded run of ``tier`` when the tier ran again alone, else None."""
        return self._again.get(tier)

    def _scanned(self, found: list[dict[str, Any]]) -> None:
        """Hand the known-fakes scan to whoever waits for it (the first hand wins)."""
        with self._lock:
            if not self._fakes.done():
                self._fakes.set_result(found)

    def outcome(self, tier: str) -> Outcome | None:
        """``tier``'s outcome from its lane, once made; for any other tier, and for one that
        was crowded (``ran_again``), None once every lane's work is done (it then runs
        in the target, alone: every command of the lanes has ended, their containers are
        being removed)."""
        future = self._futures.get(tier)
        if future is not None and tier not in OBSERVED_AHEAD:
            made = future.result()
            assert isinstance(made, Outcome)
            crowded = self._crowded(tier, made)
            if crowded is None:
                return made
            self._again[tier] = crowded  # run again alone, once every lane is done
        wait(self._futures.values())
        return None

    def ahead(self, tier: str) -> object | None:
        """What ``tier``'s lane observed for it (``OBSERVED_AHEAD``); None if no lane did, or
        the observation failed: the tier then observes in its turn, where the same failure
        becomes its outcome."""
        future = self._futures.get(tier)
        if future is None or tier not in OBSERVED_AHEAD:
            return None
        try:
            return future.result()
        except Exception:
            return None

    def side_by_side(self, tier: str) -> dict[str, list[str]] | None:
        """``tier``'s lane and the tiers beside it, or None when no lane ran it."""
        return self._side.get(tier)

    def stop(self) -> None:
        """End every lane now: what has not started never will, what runs is killed with its
        sibling's containers, and the threads are waited for (``STOP_WAIT`` each, at most)."""
        self._stop.set()
        self._scanned(STOPPED_SCAN)
        for future in self._futures.values():
            future.cancel()
        for sibling in self._siblings:
            with contextlib.suppress(Exception):
                sibling.retire()
        for thread in self._threads:
            thread.join(STOP_WAIT)
