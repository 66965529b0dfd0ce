"""The fixtures a repository module's tier tests use (registered while pytest-reb is active).

``reb_target`` is parametrized (module scope) by the targets that apply to
the module; ``reb_ctx`` holds the ``Context`` of that (repository, target)
pair, so each tier's probe runs at most once per target whatever asks for it.
Containers live as long as the module's items for that target, and are
removed when pytest tears the fixture down, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest

from pytest_reb.outcome import outcome_key, pair_key
from pytest_reb.plugin.collect import selected
from pytest_reb.plugin.session import RebSession
from pytest_reb.plugin.stash import SESSION_KEY
from pytest_reb.pyramid import lanes
from pytest_reb.pyramid.context import Context, entry_scripts, interpreter, mount_for
from pytest_reb.runs.matrix import TargetSpec
from pytest_reb.spec import STAGE_OF_TIER, Repo, repo_of
from pytest_reb.targets import Target, TargetError


def reb_session(config: pytest.Config) -> RebSession:
    """The run; these fixtures are registered only once it exists."""
    return config.stash[SESSION_KEY]


@pytest.fixture(scope="module")
def reb_target_spec(request: pytest.FixtureRequest) -> TargetSpec:
    """The target this module's items run against (parametrized by the plugin)."""
    if not hasattr(request, "param"):
        pytest.skip("no target: pass --reb-image IMAGE or --reb-host URL")
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def reb_target(request: pytest.FixtureRequest, reb_target_spec: TargetSpec) -> Iterator[Target]:
    """The live target; its containers are removed when the module is done with it."""
    session = reb_session(request.config)
    target = session.target(reb_target_spec)  # a TargetError becomes each tier's infra outcome
    try:
        yield target
    finally:
        session.release(reb_target_spec)


@pytest.fixture(scope="module")
def reb_ctx(request: pytest.FixtureRequest, reb_target_spec: TargetSpec) -> Iterator[Context]:
    """One repository on one target; tier outcomes are cached on it (and resumed from the log).

    Its side-by-side lanes (``lanes.py``) are ended when the module is done with it, Ctrl-C
    included (pytest tears module fixtures down at the session's finish).
    """
    session = reb_session(request.config)
    repo = repo_of(request.module)
    if repo is None:
        raise TypeError(f"{request.module.__name__} holds no `repo = Repo(...)`")
    opts = session.options

    def connect() -> Target:
        return request.getfixturevalue("reb_target")  # type: ignore[no-any-return]

    def wanted(tier: str) -> bool:
        return selected(request.session.items, request.module, reb_target_spec.id, tier)

    # The report is read through the asking context's target (ctx.target, or a lane's
    # sibling, which copies its mounts), so the asset and shim mounts are in place before
    # the first container starts.
    ctx = Context(
        repo=repo, target_name=reb_target_spec.id, connect=connect,
        read_report=lambda target: session.report(reb_target_spec, target),
        resumed=session.resumed, leases=session.leases_for(reb_target_spec),
        options=opts, spec=reb_target_spec, asset_cache=session.asset_cache,
        ext_sweep=opts.ext_sweep if wanted("c2") else "never",
        stage_tiers=frozenset(t for t in STAGE_OF_TIER if repo.applicable[t] and wanted(t)),
        side_by_side=_lanes(request.config, session, repo, reb_target_spec, wanted),
        refused=session.refused.get(pair_key(repo.name, reb_target_spec.id)))
    try:
        yield ctx
    finally:
        ctx.stop_lanes()


def _lanes(config: pytest.Config, session: RebSession, repo: Repo, spec: TargetSpec,
           wanted: Callable[[str], bool]) -> lanes.Plan:
    """The pair's side-by-side lanes (``lanes.py``): none under ``--reb-serial`` or
    ``--reb-compat``, nor where xdist gives every core a worker; only for tiers that apply,
    that the run wants (C5 asks for C2's outcome) and that a resumed run does not hold."""
    opts = session.options
    if opts.serial or opts.compat or not lanes.spare_cores(_workers(config)):
        return lanes.Plan()
    return lanes.plan(t for t in lanes.LANE_TIERS if repo.applicable[t]
                      and outcome_key(repo.name, spec.id, t) not in session.resumed
                      and (wanted(t) or (t == "c2" and wanted("c5"))))


def prestart(config: pytest.Config, session: RebSession, items: Sequence[pytest.Item]) -> None:
    """With one image to verify in this process and one repository for it, have the containers
    its first tiers will ask for started now, while pytest ends its collection and sets the
    first item up (``targets/prestart.py``).

    Once the pair is known its mounts are too (``mount_for``, as ``Context.target`` makes
    them), so each container started here has exactly the arguments its lane's start will
    have: one per lane (the second with the lane's lower CPU weight), else one for the
    serial target; and a twin of the second lane's, or of the target, for strict C2's probe,
    which answers C5's strict question too (``pyramid/answers.py``; under ``--reb-compat``
    C5's own, in the target's).  Only for the tiers the run selected
    and a resumed run lacks; not under xdist (a worker's pairs are its own) or for a pair
    refused at collection."""
    specs = session.options.targets
    if (not session.controller or len(specs) != 1 or specs[0].image is None
            or config.getoption("collectonly", False)
            or getattr(config.option, "numprocesses", None)
            or getattr(config.option, "dist", "no") != "no"):
        return
    spec = specs[0]
    modules = {getattr(item, "module", None) for item in items if _target_id(item) == spec.id}
    if len(modules) != 1:
        return
    [module] = modules
    repo = repo_of(module)
    if repo is None or pair_key(repo.name, spec.id) in session.refused:
        return

    def wanted(tier: str) -> bool:
        return (repo.applicable[tier] and selected(items, module, spec.id, tier)
                and outcome_key(repo.name, spec.id, tier) not in session.resumed)

    if not any(wanted(t) for t in lanes.LANE_TIERS):  # the tiers whose containers start first
        return
    try:
        target = session.target(spec)
        mount_for(target, repo, session.asset_cache, session.options.repo_dir or repo.repo_dir)
    except (TargetError, OSError):  # the first tier meets it again and says why
        return
    # the twin where strict C2's probe answers C5's question too (``answers.py``), or where
    # C5 asks for itself (compat)
    twin = int(wanted("c5") or (wanted("c2") and not session.options.compat))
    if _lanes(config, session, repo, spec, wanted):
        target.prestart(plain=1, background=1 + twin)
    else:
        target.prestart(plain=1 + twin, background=0)
    # the host's bytecode for the image, begun now rather than at the first tier: its report
    # is read in the fresh container the sources are read in
    target.prepare_bytecode(
        lambda fresh: interpreter(session.options, lambda: session.report(spec, lambda: fresh)),
        entry_scripts(repo, session.options.repo_dir or repo.repo_dir,
                      frozenset(filter(wanted, STAGE_OF_TIER)), len(target.gpus)))


def _target_id(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return getattr(callspec.params.get("reb_target_spec") if callspec else None, "id", None)


def _workers(config: pytest.Config) -> int:
    """How many xdist workers share this machine's cores (1 outside xdist: a pytest started
    from a worker inherits its environment, not its place, so the worker's own input)."""
    info = getattr(config, "workerinput", None)
    return int(info.get("workercount", 1)) if isinstance(info, dict) else 1
