"""Before the first item: its container started early, and the heap frozen.

**The first target's container, started while pytest is still getting ready to run it.**

Between the end of collection and a pyramid's first command, pytest-reb used
to do its remaining Python work (fixtures, the tier modules, the report model)
and only then ask the engine for the first container, waiting some 0.3 s for
it with nothing else to do.  The engine's work and ours do not depend on each
other, so ``begin`` asks for that container from a thread at the end of
collection and the main thread does its Python work meanwhile (``warm_imports``).

It is the very container the first tier would have made, with the same
mounts: the thread does what ``Context.target`` does (the shim folder, the
asset view, then the CPU profile), and ``Context.target`` doing it again
finds the mounts in place, which keeps the container (``DockerTarget.mount``
changes nothing for a mount it already has).  Nothing runs in it before the
main thread's first command, so no check sees anything but a fresh container.
A failure in the thread is dropped: the main thread makes the same calls and
meets the same error where it always did.

Only the first pair to run is started early, and only when its first use is
certain to be that container: a Docker target whose report is read from the
container itself (not ``--agent-report`` / a matrix row's ``report``), with
at least one of its items not already in a resumed run's log and the pair not
refused at collection.  Not under ``--collect-only`` nor on an xdist controller
(its workers run the items).

**The heap, frozen once collection is done** (``freeze_heap``).  At its end pytest
runs the garbage collector five times over the whole heap (``unraisableexception``
looks for objects whose finalizer raised), some 45 ms a pass once the Docker SDK,
pydantic and the tiers are imported: a quarter of a second per run, spent
walking module objects that live as long as the process.  ``gc.freeze`` moves
what exists after collection out of the collector's sight; a full collection
just before it reports any garbage made so far to pytest's hook as before.
``thaw_heap``, a cleanup registered at configure so that it runs after pytest's
own, gives the objects back to the collector (an in-process pytester run leaks
nothing).  What stays unseen by pytest's last passes: a cycle among objects
that existed at freeze time and became garbage later; its finalizer runs when
the collector next sees it, under Python's default hook.
"""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_reb.context import TIER_TESTS
from pytest_reb.spec import repo_of

if TYPE_CHECKING:
    from pytest_reb.matrix import TargetSpec
    from pytest_reb.session import RebSession
    from pytest_reb.spec import Repo

_TIER_OF_TEST = {test: tier for tier, (test, _) in TIER_TESTS.items()}


def first_pair(session: RebSession, items: Sequence[pytest.Item]
               ) -> tuple[Repo, TargetSpec] | None:
    """The (repository, Docker target) pair whose items run first, when its first use is
    the CPU container (see the module's docstring); else None."""
    for item in items:
        repo = repo_of(getattr(item, "module", None))
        callspec = getattr(item, "callspec", None)
        spec = callspec.params.get("reb_target_spec") if callspec else None
        if repo is None or spec is None:
            continue
        if spec.image is None or spec.report or f"{repo.name}|{spec.id}" in session.refused:
            return None
        pending = [i for i in items if getattr(i, "module", None) is item.module  # type: ignore[attr-defined]
                   and getattr(getattr(i, "callspec", None), "params", {}).get(
                       "reb_target_spec") is spec]
        tiers = {_TIER_OF_TEST.get(getattr(i, "originalname", "")) for i in pending}
        if all(f"{repo.name}|{spec.id}|{t}" in session.resumed for t in tiers):
            return None
        return repo, spec
    return None


def begin(session: RebSession, config: pytest.Config,
          items: Sequence[pytest.Item]) -> threading.Thread | None:
    """Start the first pair's CPU container from a thread; the thread, or None."""
    if config.option.collectonly or getattr(config.option, "numprocesses", None):
        return None
    pair = first_pair(session, items)
    if pair is None:
        return None
    repo, spec = pair
    cache, checkout = session.asset_cache, session.options.repo_dir or repo.repo_dir
    session.leases  # noqa: B018 -- the host's GPUs, read here once, not from the thread

    def start() -> None:
        from pytest_reb.assets.view import attach
        from pytest_reb.shims import mount_first

        try:
            target = session.made_target(spec)
            mount_first(target, repo, checkout)
            attach(target, repo, cache, checkout)
            target.container()
        except Exception:  # the main thread meets it again, where it belongs
            return

    thread = threading.Thread(target=start, name="reb-prestart", daemon=True)
    thread.start()
    return thread


def warm_imports(items: Sequence[pytest.Item]) -> None:
    """Import, while the engine starts the container, what the selected tiers will import
    on first use anyway: their probe modules and the report model (pydantic)."""
    importlib.import_module("pytest_reb.audit.report")
    for tier in sorted({_TIER_OF_TEST.get(getattr(i, "originalname", "")) for i in items}
                       - {None}):
        importlib.import_module(TIER_TESTS[str(tier)][1])


#: set in ``config.stash`` by ``freeze_heap``, so ``thaw_heap`` unfreezes only what it froze
FROZEN = pytest.StashKey[bool]()


def freeze_heap(config: pytest.Config) -> None:
    """Collect the garbage made so far (reported to pytest's hook), then freeze the rest."""
    gc.collect()
    gc.freeze()
    config.stash[FROZEN] = True


def thaw_heap(config: pytest.Config) -> None:
    """Give the frozen objects back to the collector (a cleanup, after pytest's own)."""
    if config.stash.get(FROZEN, False):
        del config.stash[FROZEN]
        gc.unfreeze()
