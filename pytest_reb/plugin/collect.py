"""Turning a ``repos/`` module into tier items, and keeping each target on its own.

A repository module holds one ``repo = Repo(...)`` and no test code.  When
pytest reaches that name, the generic tier tests (``test_c1_cpu`` ...) are
added to the module and collected in its place, so they are ordinary test
functions: they take fixtures, carry the markers ``c0``...``c5``, parametrize
by target, and run under xdist like any other test.  A user's own module of
the same shape, anywhere, gets the same items; every other module is left to
pytest as it is.

After collection, a target stays only on the repository module it belongs to
(the matrix row's repository, ``--reb-repo``, else the checkout's commit) and
only in this shard's (repository, target) pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_reb.evidence import diagnose
from pytest_reb.outcome import Outcome, one_line, pair_key
from pytest_reb.pyramid.context import TIER_TESTS, Context, tier_probe
from pytest_reb.rules.integrity_verdict import misconfigured
from pytest_reb.runs.shards import shard_keys
from pytest_reb.spec import Repo, repo_of
from pytest_reb.targets import checkout_commit

if TYPE_CHECKING:
    from pytest_reb.runs.matrix import TargetSpec
    from pytest_reb.runs.options import RebOptions

#: Stash key under which a tier test leaves its outcome for the report hooks.
OUTCOME_KEY = pytest.StashKey[Outcome]()

def judge(outcome: Outcome) -> None:
    """Turn an outcome into the test's pytest result, with a message a person can act on.

    The message is one line whatever the target put into it (``one_line``); only the
    diagnosis adds lines, each of them one line too.
    """
    if outcome.status == "skipped":
        pytest.skip(one_line(f"{outcome.category}: {outcome.message}" if outcome.message
                             else outcome.category))
    if outcome.status == "failed":
        both = ""
        if outcome.strict != outcome.compat:
            both = (f" [strict {'pass' if outcome.strict else 'fail'}, "
                    f"official rule {'pass' if outcome.compat else 'fail'}]")
        why = diagnose.explain(outcome.diagnosis, said=outcome.message)
        pytest.fail(one_line(f"{outcome.tier.upper()} {outcome.category}: {outcome.message}"
                             f"{both}")
                    + (f"\n{why}" if why else ""), pytrace=False)


def _make_test(tier: str) -> Callable[..., None]:
    def test(reb_ctx: Context, request: pytest.FixtureRequest) -> None:
        outcome = reb_ctx.once(tier, tier_probe(tier))
        request.node.stash[OUTCOME_KEY] = outcome
        judge(outcome)

    name, _ = TIER_TESTS[tier]
    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"{tier.upper()}: asserts on the outcome of the {tier} probe for this target."
    return getattr(pytest.mark, tier)(test)  # type: ignore[no-any-return]


_TESTS = {tier: _make_test(tier) for tier in TIER_TESTS}


def tier_items(collector: pytest.Module) -> list[pytest.Item]:
    """The tier items of a repository module, collected where its ``repo`` stands.

    The tier tests become attributes of the module (pytest finds a test
    function through its module), then go through ``pytest_pycollect_makeitem``
    like any function, which parametrizes them.  A tier the module defines
    itself is its own and pytest collects it as usual.
    """
    module = collector.obj
    items: list[pytest.Item] = []
    for tier, (name, _) in TIER_TESTS.items():
        if name in vars(module):
            continue
        setattr(module, name, _TESTS[tier])
        made = collector.ihook.pytest_pycollect_makeitem(collector=collector, name=name,
                                                         obj=_TESTS[tier])
        items += made if isinstance(made, list) else [made]
    return items


def missing_repo(module: Any) -> str | None:
    """Why a module of a ``repos/`` folder that uses pytest-reb is no repository module (it
    defines no ``repo = Repo(...)``), or None: it is one, or it does not use pytest-reb."""
    if repo_of(module) is not None:
        return None
    uses = any(getattr(v, "__module__", "") == "pytest_reb" or
               str(getattr(v, "__module__", "")).startswith("pytest_reb.")
               or getattr(v, "__name__", "") == "pytest_reb" for v in vars(module).values())
    if not uses:
        return None
    return ("a repository module defines `repo = Repo(...)`; this one imports pytest-reb and "
            "defines none, so no tier of it would run")


def selected(items: Iterable[pytest.Item], module: Any, target_id: str, tier: str) -> bool:
    """Whether ``tier``'s own item for this module and target is among the session's items.

    A tier another one asks for (C5 asks for C2's observation) runs its probe
    whether or not it was selected, but what only its own item reports (C2's
    native-extension sweep, minutes on a multi-GB environment) is wasted when
    that item was deselected: nothing records it.  Read after deselection
    (``-m``, ``-k``, shards), so it is the run's own choice; under xdist every
    worker holds the whole selection, and a pair's items all go to one worker.
    """
    name = TIER_TESTS[tier][0]
    for item in items:
        callspec = getattr(item, "callspec", None)
        spec = callspec.params.get("reb_target_spec") if callspec else None
        if (getattr(item, "module", None) is module and spec is not None
                and spec.id == target_id and getattr(item, "originalname", None) == name):
            return True
    return False


def _matches(wanted: str, repo: Repo, module: Any) -> bool:
    """A repository named by owner/name or by its module's name, case aside."""
    return wanted.lower() in (repo.name.lower(), module.__name__.lower())


def targets_of(module: Any, targets: Sequence[TargetSpec]) -> list[TargetSpec]:
    """The targets to parametrize a module by: a matrix row pinned to another repository is
    not this module's (unless no row is this module's: then collection decides)."""
    repo = repo_of(module)
    if repo is None:
        return list(targets)
    return [t for t in targets if not t.repo or _matches(t.repo, repo, module)] or list(targets)


@dataclass(frozen=True)
class Kept:
    """What collection keeps of the items: those to deselect, and the pairs kept but refused
    (pair key -> ``integrity_verdict.misconfigured``), which the session records."""

    drop: list[pytest.Item]
    refused: dict[str, dict[str, Any]]


def kept(items: Sequence[pytest.Item], options: RebOptions) -> Kept:
    """The items to deselect: a target on a repository module it does not belong to, or a
    (repository, target) pair of another shard; and the pairs refused.

    With several repository modules and nothing naming the repository, the
    target's checkout commit decides (read once per target, nothing started).
    A pair kept whose checkout is at a commit other than the module's pinned
    one (a module forced by ``--reb-repo`` or a matrix row, or the only module)
    is refused (``misconfigured``, naming the module the commit does match),
    unless ``--reb-allow-commit-mismatch``.
    """
    repos = [r for r in (repo_of(getattr(i, "module", None)) for i in items) if r]
    modules = {id(r) for r in repos}
    by_commit = {r.commit.lower(): r.name for r in repos}
    pinned = options.repo or any(t.repo for t in options.targets)
    commits: dict[str, str | None] = {}

    def head(target: TargetSpec, repo: Repo) -> str | None:
        where = options.repo_dir or repo.repo_dir
        if f"{target.url}|{where}" not in commits:
            commits[f"{target.url}|{where}"] = checkout_commit(target.url, where)
        return commits[f"{target.url}|{where}"]

    def belongs(item: pytest.Item, repo: Repo, target: TargetSpec) -> bool:
        wanted = target.repo or options.repo or ""
        if wanted:
            return _matches(wanted, repo, item.module)  # type: ignore[attr-defined]
        if len(modules) <= 1:
            return True
        return head(target, repo) == repo.commit.lower()

    pairs: dict[pytest.Item, str] = {}
    drop = []
    refused: dict[str, dict[str, Any]] = {}
    for item in items:
        repo = repo_of(getattr(item, "module", None))
        callspec = getattr(item, "callspec", None)
        target = callspec.params.get("reb_target_spec") if callspec else None
        if repo is None or target is None:
            continue
        if (pinned or len(modules) > 1) and not belongs(item, repo, target):
            drop.append(item)
        else:
            pairs[item] = pair_key(repo.name, target.id)
            at = None if options.allow_mismatch else head(target, repo)
            if at is not None and at != repo.commit.lower():
                refused[pairs[item]] = misconfigured(repo.commit.lower(), at, repo.name,
                                                     by_commit.get(at))
    if options.shard:
        mine = shard_keys(set(pairs.values()), options.shard)
        drop += [item for item, key in pairs.items() if key not in mine]
    return Kept(drop, refused)
