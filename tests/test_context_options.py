"""``Context`` holds the run's options whole and the target's spec (``pyramid/context.py``).

What a tier reads of the options (the mode, ``--reb-python``, ``--reb-repo-dir``)
comes from the one ``RebOptions``; an agent run's timeout comes with its
target's spec, and under ``--reb-compat`` every applicable tier is scored as
the official harness scored it, without touching the target.
"""

from __future__ import annotations

import pytest

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.runs.matrix import TargetSpec
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import ReportLoad
from pytest_reb.spec import Repo, Run
from pytest_reb.targets import Target

REPO = Repo("me/timed", commit="0" * 40, cpu=Run(["{python}", "train.py"]))


def no_target() -> Target:
    raise AssertionError("the target was asked for")


def context(options: RebOptions, spec: TargetSpec | None = None) -> Context:
    return Context(repo=REPO, target_name="img", connect=no_target,
                   read_report=lambda _: ReportLoad("none"), options=options, spec=spec)


def never(ctx: Context) -> Outcome:
    raise AssertionError("the probe ran")


def test_the_options_are_read_whole() -> None:
    ctx = context(RebOptions(compat=True, python="/env/bin/python", repo_dir="/src"))
    assert (ctx.compat, ctx.python, ctx.checkout) == (True, "/env/bin/python", "/src")
    assert context(RebOptions()).checkout == REPO.repo_dir


def test_an_agent_timeout_is_scored_as_officially_in_compat() -> None:
    spec = TargetSpec("img", agent="codex", agent_timed_out=True)
    o = context(RebOptions(compat=True), spec).make("c1", never)
    assert (o.status, o.category, o.strict, o.compat, o.agent) == (
        "failed", "timeout", None, False, "codex")


def test_strict_verifies_an_agent_timeout_as_it_is() -> None:
    spec = TargetSpec("img", agent_timed_out=True)
    with pytest.raises(AssertionError, match="the target was asked for"):
        context(RebOptions(), spec).make("c1", never)
