"""pytest-reb's pytest plugin: options, markers and hooks, nothing else.

The plugin is installed into every pytest run on the machine, so it stays out
of the ones that do not use it (Hypothesis's plugin is the model): it is
*active* only when one of its options is given (``--reb-image``, ``--reb-host``,
``--reb-matrix``, or any other ``--reb-*``/``--agent-report``), or when a
collected module holds a ``repo = Repo(...)`` (then, with no target, its tier
items skip and say why).  Until then every hook returns at once, and this module
imports nothing beyond pytest: no Docker, no pydantic, no ``nvidia-smi``, no
signal handler, no output.

When active, the work is done elsewhere: the run's state, pre-flight and
``--reb-prepare`` in ``session.RebSession``; tier items, target matching and
sharding in ``collect``; recording, summary and layouts in
``report.hooks.ReportHooks``; the fixtures in ``fixtures``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_reb.plugin import optiontypes
from pytest_reb.plugin.stash import SESSION_KEY

if TYPE_CHECKING:
    from pytest_reb.plugin.session import RebSession

MARKERS = {
    "c0": "C0 static: pyright finds the imports the environment cannot resolve",
    "c1": "C1 CPU: the repository's own entrypoint runs on CPU",
    "c2": "C2 CUDA alignment: the framework sees the GPU and a real kernel runs on it",
    "c3": "C3 single GPU: the entrypoint really computes on one GPU",
    "c4": "C4 distributed: the multi-GPU entrypoint runs over NCCL on >= 2 GPUs",
    "c5": "C5 audit: the agent's self-report against what C0-C4 observed",
}

#: dest -> default of every option of ours: one that differs means pytest-reb was asked for.
_DEFAULTS: dict[str, Any] = {}


@pytest.hookimpl
def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    import pytest_reb.plugin.hookspecs as hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reb", "pytest-reb: runtime verification of agent-built environments")
    group.addoption("--reb-image", action="append", metavar="IMAGE",
                    help="Docker image under test (repeatable). Never pulled.")
    group.addoption("--reb-host", action="append", metavar="URL",
                    help="testinfra host under test, e.g. local://, docker://name, "
                         "ssh://gpu-node (repeatable).")
    group.addoption("--agent-report", dest="reb_agent_report", metavar="PATH",
                    help="the agent's report.json on this machine (default: read "
                         "/opt/scimlopsbench/report.json from the target)")
    group.addoption("--reb-python", metavar="PATH",
                    help="interpreter to run in the target instead of the report's python_path")
    group.addoption("--reb-repo-dir", metavar="DIR", default=None,
                    help="repository checkout in the target (default /data/project/repo)")
    group.addoption("--reb-repo", metavar="OWNER/NAME",
                    help="which repository module applies to the targets (default: by commit)")
    group.addoption("--reb-allow-commit-mismatch", action="store_true", default=False,
                    help="judge a target whose checkout is not the module's pinned commit (a "
                         "fork, a later commit) against its own commit; outcomes carry the "
                         "mismatch (default: refused, or failed commit_mismatch)")
    group.addoption("--reb-trust-hook", dest="reb_trust_hook", action="append", default=[],
                    metavar="SHA256", type=optiontypes.sha256,
                    help="a startup hook this machine's operator vouches for, by the sha256 "
                         "of its bytes (strict C3/C4 fail on hooks no distribution owns; the "
                         "failure names each one's digest); repeatable")
    group.addoption("--reb-keep-outputs", action="store_true", default=False,
                    help="keep each stage's {out} folder (checkpoints, logs) in the target "
                         "after the stage (default: removed, so local:// leaves nothing in "
                         "/tmp and a container's disk holds only the current stage's)")
    group.addoption("--reb-outdir", metavar="DIR", default=None,
                    help="where runs write outcomes.jsonl and summary.json (default reports/ "
                         "in the working directory; a checkout's own reports/ in a checkout)")
    group.addoption("--reb-network", metavar="MODE", default="none",
                    help="Docker network mode for probe containers (default none)")
    group.addoption("--reb-gpus", metavar="IDS", type=optiontypes.gpu_indices,
                    help="GPU indices the run may use, e.g. 0,1 (default all visible)")
    group.addoption("--reb-timeout-scale", type=optiontypes.positive_float, default=1.0,
                    metavar="X",
                    help="multiply every stage timeout by X (slow machines)")
    group.addoption("--reb-compat", action="store_true", default=False,
                    help="decide like the official harness (exit codes only); strict is default")
    group.addoption("--reb-resume", nargs="?", const="latest", default=None, metavar="RUN",
                    help="continue a run (default the latest under --reb-outdir): only "
                         "items without an outcome run")
    group.addoption("--reb-matrix", metavar="FILE",
                    help="run matrix: TOML [[target]] tables or JSON lines with repo, agent, "
                         "image or host, report")
    group.addoption("--reb-shard", metavar="I/N",
                    help="run only shard I of N of the (repository, target) pairs; "
                         "join shards with `reb merge`")
    group.addoption("--reb-memory", default="16g", metavar="SIZE", type=optiontypes.size,
                    help="memory limit of each probe container (default 16g)")
    group.addoption("--reb-pids", type=optiontypes.positive_int, default=2048, metavar="N",
                    help="process limit of each probe container (default 2048)")
    group.addoption("--reb-disk", default="20g", metavar="SIZE", type=optiontypes.size,
                    help="most a probe container may hold on disk (writable layer, its "
                         "volumes' growth, unlinked files held open); a command past it "
                         "fails disk_limit (default 20g)")
    group.addoption("--reb-official-layout", metavar="DIR",
                    help="also write the run as the official harness lays out its jobs: "
                         "DIR/jobs/<job>/job_summary.json and build_output/<stage>/results.json")
    group.addoption("--reb-ext-sweep", dest="reb_ext_sweep", default="auto",
                    choices=("auto", "always", "never"),
                    help="C2's native-extension sweep, a diagnosis that loads every compiled "
                         "module the repository's imports reach (seconds per target on a "
                         "small environment, minutes on a multi-GB one, 240 s at most; it "
                         "decides no verdict).  auto (default): where nothing else would "
                         "explain or exercise them: C2 failed for a cause its probe cannot "
                         "name, or C2 passed and no C3 or C4 of the run loads the code on "
                         "the GPU; always; never")
    group.addoption("--reb-no-ext-sweep", dest="reb_ext_sweep", action="store_const",
                    const="never", default="auto", help="the same as --reb-ext-sweep=never")
    group.addoption("--reb-serial", action="store_true", default=False,
                    help="run each target's tiers one after another in one container, as the "
                         "official harness did (default: C1 runs beside C0 then C2, each lane "
                         "in containers of its own, where the cores are at least twice the "
                         "xdist workers; --reb-compat always runs them in turn).  A pair's "
                         "lanes use two cores, so -n N speeds a matrix up only with more than "
                         "2 cores (about 2N cores for N workers); with lanes on 2 cores, -n 2 "
                         "buys nothing, and on one GPU each C2 probe holds the card in turn "
                         "(docs/scaling.md)")
    group.addoption("--reb-prepare", action="store_true", default=False,
                    help="fetch and make the assets of the collected repositories into the "
                         "asset cache before the tiers run (the only step that uses the network)")
    group.addoption("--reb-assets", metavar="DIR",
                    help="the asset cache (default $REB_ASSETS or ~/.cache/pytest-reb/assets); "
                         "its view of a repository is mounted read-only at {assets}")
    _DEFAULTS.update({arg.dest: getattr(arg, "default", None) for arg in group.options})


def _asked_for(config: pytest.Config) -> bool:
    """Whether the command line (or ini addopts) gave any option of ours."""
    return any(config.getoption(dest) != default for dest, default in _DEFAULTS.items())


def _activate(config: pytest.Config) -> RebSession:
    """Make this process's run and register the hook objects that serve it.

    A module object is imported as ``import a.b as b``: ``from a import b`` would take
    a stale attribute of the package once pytester's in-process runs reset ``sys.modules``.
    """
    import pytest_reb.plugin.fixtures as fixtures
    from pytest_reb.plugin.session import RebSession

    session = RebSession.open(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(fixtures, "reb-fixtures")
    if session.controller:
        from pytest_reb.plugin.report_hooks import ReportHooks

        config.pluginmanager.register(ReportHooks(session, config), "reb-report")
    if config.pluginmanager.hasplugin("html") and config.getoption("htmlpath", None):
        from pytest_reb.plugin.html import HtmlReport  # its imports only where a page is made

        config.pluginmanager.register(HtmlReport(session), "reb-html")
    _freeze_imports()
    return session


def _freeze_imports() -> None:
    """Keep what is alive once the imports are done out of every later garbage collection.

    pytest ends each session with five full collections (to flush unraisable exceptions)
    and the interpreter's exit with one more; over the Docker SDK's, pydantic's and our
    modules they took 0.3 s, a sixth of a demo pyramid's own time.  A collection of the
    young generations first, so what the imports just dropped is not kept (a full one found
    nothing more there and cost 15-80 ms before the first command); what is alive then
    lives to the end anyway, and what a test makes is collected as before.  Never in a run
    nested in another (pytester's in-process runs): that process goes on, and what it froze
    would never be collected.
    """
    import gc

    if _sessions_on_stack() == 1:
        gc.collect(1)
        gc.freeze()


def _sessions_on_stack() -> int:
    """How many pytest sessions this call is inside (``_pytest/main.py``'s ``wrap_session``
    frames): 1 in a process's own run, an xdist worker's included; more in a nested run."""
    found, frame = 0, sys._getframe()
    while frame is not None:
        code = frame.f_code
        found += code.co_name == "wrap_session" and code.co_filename.endswith(_MAIN_PY)
        frame = frame.f_back
    return found


_MAIN_PY = os.path.join("_pytest", "main.py")


def _active(config: pytest.Config) -> RebSession | None:
    return config.stash.get(SESSION_KEY, None)


@pytest.hookimpl
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    if _asked_for(config):
        _activate(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run."""
    session = _active(node.config)
    if session is not None:
        node.workerinput["reb_run_id"] = session.run_id


@pytest.hookimpl
def pytest_report_header(config: pytest.Config) -> list[str] | None:
    session = _active(config)
    return session.header() if session is not None else None


@pytest.hookimpl
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str,
                              obj: object) -> list[pytest.Item] | None:
    """A module's ``repo = Repo(...)`` becomes its tier items (and makes the plugin active).

    A ``Repo`` can exist only once ``pytest_reb.spec`` is imported, so in other
    projects this costs a dictionary lookup per name, and nothing is imported.  A module of
    a ``repos/`` folder whose ``Repo`` has another name (a typo) is a collection error, not
    a repository silently left out (elsewhere a test may hold a repository's ``Repo``).
    """
    spec = sys.modules.get("pytest_reb.spec")
    if spec is None or not isinstance(obj, spec.Repo) or not isinstance(collector, pytest.Module):
        return None
    if name != "repo":  # a repos/ module's Repo under another name is a typo
        if (collector.path.parent.name == "repos"
                and not isinstance(getattr(collector.obj, "repo", None), spec.Repo)):
            raise collector.CollectError(
                f"{collector.path.name} holds a Repo named {name!r}: a repository module names "
                "it `repo` (repo = Repo(...)), and no other name is collected")
        return None
    if _active(collector.config) is None:
        _activate(collector.config)
    from pytest_reb.plugin.collect import tier_items

    return tier_items(collector)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """A module in a ``repos/`` folder that imports pytest-reb but defines no ``repo =
    Repo(...)`` fails its collection: left alone, it would be a repository the run never
    measures, with nothing said."""
    report = yield
    if (isinstance(collector, pytest.Module) and collector.path.parent.name == "repos"
            and report.passed and "pytest_reb.spec" in sys.modules):
        from pytest_reb.plugin.collect import missing_repo

        problem = missing_repo(collector.obj)
        if problem is not None:
            report.outcome, report.longrepr = "failed", f"{collector.path}: {problem}"
    return report


@pytest.hookimpl
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    session = _active(metafunc.config)
    if session is None or "reb_target_spec" not in metafunc.fixturenames:
        return
    from pytest_reb.plugin.collect import targets_of

    targets = targets_of(metafunc.module, session.options.targets)
    if targets:
        metafunc.parametrize("reb_target_spec", targets, ids=[t.id for t in targets],
                             scope="module", indirect=True)


@pytest.hookimpl
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Keep each target only on the repository module it belongs to, and only this shard's."""
    reb = _active(config)
    if reb is None:
        return
    from pytest_reb.plugin.collect import kept

    keep = kept(items, reb.options)
    reb.refused.update(keep.refused)
    if keep.drop:
        dropped = set(keep.drop)
        config.hook.pytest_deselected(items=keep.drop)
        items[:] = [i for i in items if i not in dropped]


@pytest.hookimpl
def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]
                                   ) -> list[str] | None:
    """A run made active by its modules alone had no header: say once why its items skip."""
    session = _active(config)
    if session is None or _asked_for(config) or config.option.verbose < 0:
        return None
    from pytest_reb.plugin.session import NO_TARGET

    return [NO_TARGET]


@pytest.hookimpl
def pytest_collection_finish(session: pytest.Session) -> None:
    reb = _active(session.config)
    if reb is None:
        return
    if reb.options.prepare:
        reb.prepare(session.items, session.config.pluginmanager.get_plugin("terminalreporter"))
    if reb.options.targets:
        import pytest_reb.plugin.fixtures as fixtures

        fixtures.prestart(session.config, reb, session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n``, all items of one (repository, target) pair go to one worker."""
    reb = _active(config)
    if reb is not None and reb.options.targets and config.getvalue("dist") in ("load",
                                                                                "loadscope"):
        from pytest_reb.plugin.scheduling import TargetScheduling

        return TargetScheduling(config, log)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    """A tier's outcome rides on its report, so it reaches the xdist controller; an item
    that failed in its setup or call without one gets ``infra`` (``collect.unrecorded``)."""
    report = yield
    last = call.when == "call" or (call.when == "setup" and report.failed)
    if last and _active(item.config) is not None:
        from pytest_reb.plugin.collect import OUTCOME_KEY, unrecorded

        outcome = item.stash.get(OUTCOME_KEY, None)
        if outcome is None and report.failed:
            outcome = unrecorded(item, call.excinfo)
        if outcome is not None:
            report.reb_outcome = outcome.to_json()  # type: ignore[attr-defined]
            item.user_properties.extend([("reb.tier", outcome.tier),
                                         ("reb.category", outcome.category or "")])
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Once the items have run (or were interrupted), Ctrl-C and SIGTERM wait for the run's
    end to be done (``signals.FinishHold``; released in ``pytest_unconfigure``)."""
    try:
        return (yield)
    finally:
        reb = _active(session.config)
        if reb is not None:
            reb.hold_finish(session)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    reb = _active(session.config)
    if reb is not None:
        reb.close()


@pytest.hookimpl
def pytest_unconfigure(config: pytest.Config) -> None:
    reb = _active(config)
    if reb is not None:
        try:
            reb.finish()
        finally:
            reb.release_finish()

