"""Turning a ``repos/`` module into tier items, parametrized by target.

A repository module holds one ``repo = Repo(...)`` and no test code.  Its
collector adds the generic tier tests (``test_c1_cpu`` ...) to the module
before pytest collects it, so they are ordinary test functions: they take
fixtures, carry the markers ``c0``...``c5``, parametrize by target, and run
under xdist like any other test.  A user's own module of the same shape,
anywhere, gets the same items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from pytest_reb import diagnose
from pytest_reb.context import TIER_TESTS, Context, tier_probe
from pytest_reb.outcome import Outcome
from pytest_reb.spec import Repo

#: Stash key under which a tier test leaves its outcome for the report hooks.
OUTCOME_KEY = pytest.StashKey[Outcome]()

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


def judge(outcome: Outcome) -> None:
    """Turn an outcome into the test's pytest result, with a message a person can act on."""
    if outcome.status == "skipped":
        pytest.skip(f"{outcome.category}: {outcome.message}" if outcome.message
                    else str(outcome.category))
    if outcome.status == "failed":
        both = ""
        if outcome.strict != outcome.compat:
            both = (f" [strict {'pass' if outcome.strict else 'fail'}, "
                    f"official rule {'pass' if outcome.compat else 'fail'}]")
        why = diagnose.explain(outcome.diagnosis, said=outcome.message)
        pytest.fail(f"{outcome.tier.upper()} {outcome.category}: {outcome.message}{both}"
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


class RepoModule(pytest.Module):
    """A test module that gains the tier tests when it holds a ``Repo``."""

    def collect(self) -> Any:
        module = self.obj
        if repo_of(module) is not None:
            for tier, (name, _) in TIER_TESTS.items():
                if name not in vars(module):
                    setattr(module, name, _TESTS[tier])
        return super().collect()
