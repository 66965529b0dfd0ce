"""pytest-reb's pytest plugin: options, markers and hooks, nothing else.

Heavy work lives in the modules these hooks call; this file only wires
them to pytest (and to pytest-xdist when it is active).
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_reb import fixtures
from pytest_reb.collect import OUTCOME_KEY, RepoModule, repo_commits, repo_of
from pytest_reb.distribute import shard_keys
from pytest_reb.fixtures import SESSION_KEY, reb_session
from pytest_reb.matrix import MatrixError, TargetSpec
from pytest_reb.outcome import TIER_TITLES, Outcome
from pytest_reb.report import official, summary, terminal
from pytest_reb.session import (
    RebOptions,
    RebSession,
    TargetError,
    describe_gpus,
    docker_available,
    install_sigterm,
    missing_images,
    resolve_run,
    sweep,
)
from pytest_reb.spec import Repo
from pytest_reb.target import checkout_commit

MARKERS = {
    "c0": "C0 static: pyright finds the imports the environment cannot resolve",
    "c1": "C1 CPU: the repository's own entrypoint runs on CPU",
    "c2": "C2 CUDA alignment: the framework sees the GPU and a real kernel runs on it",
    "c3": "C3 single GPU: the entrypoint really computes on one GPU",
    "c4": "C4 distributed: the multi-GPU entrypoint runs over NCCL on >= 2 GPUs",
    "c5": "C5 audit: the agent's self-report against what C0-C4 observed",
    "container": "needs a running Docker engine (pytest-reb's own tests)",
    "gpu": "needs an NVIDIA GPU on this machine (skipped with a reason elsewhere)",
}


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
    group.addoption("--reb-outdir", metavar="DIR", default="reports",
                    help="where runs write outcomes.jsonl and summary.json (default reports/)")
    group.addoption("--reb-network", metavar="MODE", default="none",
                    help="Docker network mode for probe containers (default none)")
    group.addoption("--reb-gpus", metavar="IDS",
                    help="GPU indices the run may use, e.g. 0,1 (default all visible)")
    group.addoption("--reb-timeout-scale", type=float, default=1.0, metavar="X",
                    help="multiply every stage timeout by X (slow machines)")
    group.addoption("--reb-compat", action="store_true",
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
    group.addoption("--reb-memory", default="16g", metavar="SIZE",
                    help="memory limit of each probe container (default 16g)")
    group.addoption("--reb-pids", type=int, default=2048, metavar="N",
                    help="process limit of each probe container (default 2048)")
    group.addoption("--reb-official-layout", metavar="DIR",
                    help="also write the run as the official harness lays out its jobs: "
                         "DIR/jobs/<job>/job_summary.json and build_output/<stage>/results.json")
    group.addoption("--reb-no-ext-sweep", dest="reb_ext_sweep", action="store_false",
                    help="skip C2's native-extension sweep (informational diagnosis of every "
                         "compiled extension; 5-10 s per target)")
    group.addoption("--reb-prepare", action="store_true",
                    help="fetch and make the assets of the collected repositories into the "
                         "asset cache before the tiers run (the only step that uses the network)")
    group.addoption("--reb-assets", metavar="DIR",
                    help="the asset cache (default $REB_ASSETS or ~/.cache/pytest-reb/assets); "
                         "its view of a repository is mounted read-only at {assets}")


def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    try:
        options = RebOptions.from_config(config)
    except (MatrixError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    workerinput = getattr(config, "workerinput", None)
    controller = workerinput is None
    try:
        run_id = workerinput["reb_run_id"] if workerinput else resolve_run(options.outdir,
                                                                            options.resume)
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None
    images = sorted({t.image for t in options.targets if t.image})
    if controller and images:
        problem = docker_available()
        if problem:
            raise pytest.UsageError(f"pytest-reb: {problem}; --reb-image needs it")
        missing = missing_images(images)
        if missing:
            raise pytest.UsageError(
                f"pytest-reb: image(s) not on this Docker engine: {', '.join(missing)} "
                "(pytest-reb never pulls; build or `docker load` them first)")
    session = RebSession(options, run_id, controller)
    session.load_resume()
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(fixtures, "reb-fixtures")
    if controller:
        config.pluginmanager.register(_Recorder(session), "reb-recorder")
    if config.pluginmanager.hasplugin("html"):
        from pytest_reb.report.html import HtmlReport

        config.pluginmanager.register(HtmlReport(session), "reb-html")
    install_sigterm()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker writes into the controller's run."""
    node.workerinput["reb_run_id"] = reb_session(node.config).run_id


def pytest_report_header(config: pytest.Config) -> list[str]:
    session = reb_session(config)
    opts = session.options
    lines = [f"reb: run {session.run_id} -> {session.run_dir} "
             f"({'compat: official exit-code rules' if opts.compat else 'strict'})",
             f"reb: host {describe_gpus()}"]
    if opts.targets:
        lines.append("reb: targets " + ", ".join(t.id for t in opts.targets))
    else:
        lines.append("reb: no target given (--reb-image / --reb-host): tier items will skip")
    return lines


def pytest_pycollect_makemodule(module_path: Any, parent: Any) -> Any:
    if module_path.name == "__init__.py":
        return None
    return RepoModule.from_parent(parent, path=module_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "reb_target_spec" not in metafunc.fixturenames:
        return
    targets = reb_session(metafunc.config).options.targets
    repo = repo_of(metafunc.module)
    if repo is not None:  # a matrix row pinned to another repository is not this module's
        names = (repo.name.lower(), metafunc.module.__name__.lower())
        targets = [t for t in targets if not t.repo or t.repo.lower() in names] or targets
    if targets:
        metafunc.parametrize("reb_target_spec", targets, ids=[t.id for t in targets],
                             scope="module", indirect=True)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Keep each target only on the repository module it belongs to, and only this shard's."""
    reb = reb_session(config)
    modules = {id(r) for r in (repo_of(getattr(i, "module", None)) for i in items) if r}
    pinned = reb.options.repo or any(t.repo for t in reb.options.targets)
    commits: dict[str, str | None] = {}

    def belongs(item: pytest.Item, repo: Repo, target: TargetSpec) -> bool:
        wanted = (target.repo or reb.options.repo or "").lower()
        if wanted:
            return wanted in (repo.name.lower(), item.module.__name__.lower())  # type: ignore[attr-defined]
        if len(modules) <= 1:
            return True
        if target.url not in commits:
            commits[target.url] = checkout_commit(target.url, reb.options.repo_dir or repo.repo_dir)
        return commits[target.url] == repo.commit.lower()

    pairs: dict[pytest.Item, str] = {}
    drop = []
    for item in items:
        repo = repo_of(getattr(item, "module", None))
        callspec = getattr(item, "callspec", None)
        target = callspec.params.get("reb_target_spec") if callspec else None
        if repo is None or target is None:
            continue
        if (pinned or len(modules) > 1) and not belongs(item, repo, target):
            drop.append(item)
        else:
            pairs[item] = f"{repo.name}|{target.id}"
    if reb.options.shard:
        mine = shard_keys(set(pairs.values()), reb.options.shard)
        drop += [item for item, key in pairs.items() if key not in mine]
    if drop:
        dropped = set(drop)
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if i not in dropped]


#: The tiers that run a stage, and so read assets (C5 asks for them).
_STAGE_TESTS = ("test_c1_cpu", "test_c3_single_gpu", "test_c4_multi_gpu", "test_c5_audit")


def pytest_collection_finish(session: pytest.Session) -> None:
    """``--reb-prepare``: the asset step, after collection and before any tier runs.

    Under xdist each worker gets here; the cache's per-repository lock makes
    the first do the work and the others find it done.
    """
    reb = reb_session(session.config)
    if not reb.options.prepare:
        return
    pairs: dict[str, tuple[Repo, TargetSpec | None]] = {}
    for item in session.items:
        repo = repo_of(getattr(item, "module", None))
        if repo is None or getattr(item, "originalname", item.name) not in _STAGE_TESTS:
            continue
        callspec = getattr(item, "callspec", None)
        spec = callspec.params.get("reb_target_spec") if callspec else None
        pairs.setdefault(repo.name, (repo, spec))
    writer = session.config.pluginmanager.get_plugin("terminalreporter")
    if writer is not None and pairs:
        writer.section(f"reb prepare -> {reb.asset_cache.root}")
    for repo, spec in pairs.values():
        for result in reb.prepare_assets(repo, spec):
            if writer is not None:
                writer.write_line(f"{repo.name}: {result.line()}")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n``, all items of one (repository, target) pair go to one worker."""
    if config.getvalue("dist") in ("load", "loadscope") and reb_session(config).options.targets:
        from pytest_reb.scheduling import TargetScheduling

        return TargetScheduling(config, log)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    report = yield
    outcome = item.stash.get(OUTCOME_KEY, None)
    if outcome is not None and call.when == "call":
        report.reb_outcome = outcome.to_json()  # type: ignore[attr-defined]
        item.user_properties.extend([("reb.tier", outcome.tier),
                                     ("reb.category", outcome.category or "")])
    return report


class _Recorder:
    """Controller only: every outcome that arrives (from this process or a worker) is logged."""

    def __init__(self, session: RebSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "reb_outcome", None)
        if data is not None:
            self.session.record(Outcome.from_json(data))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reb = reb_session(session.config)
    reb.close()
    if not reb.controller:
        return
    if reb.outcomes or reb.resumed:
        outcomes = {**reb.resumed, **reb.outcomes}
        path = reb.run_dir / "summary.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = summary.build(list(outcomes.values()), run_id=reb.run_id,
                             compat=reb.options.compat)
        path.write_text(json.dumps(data, indent=2, sort_keys=True))
        layout = session.config.getoption("reb_official_layout")
        if layout:
            official.write_layout(Path(layout), list(outcomes.values()), run_id=reb.run_id,
                                  mode=data["mode"], commits=repo_commits(session.items))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    reb = reb_session(config)
    if not reb.controller:
        return
    outcomes = {**reb.resumed, **reb.outcomes}
    if not outcomes:
        return
    terminalreporter.section("reb pyramid")
    for line in terminal.pyramid(list(outcomes.values()), titles=TIER_TITLES):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"outcomes: {reb.log.path}")
    terminalreporter.write_line(f"summary:  {reb.run_dir / 'summary.json'}")


def pytest_unconfigure(config: pytest.Config) -> None:
    reb = config.stash.get(SESSION_KEY, None)
    if reb is None:
        return
    reb.close()
    if reb.controller:
        sweep(reb.run_id)
