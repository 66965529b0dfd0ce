"""The ``repos/`` modules hold the official facts: denominators, commits, commands and assets.

Each module under ``repos/`` is imported by path and compared with the facts of
the official release kept in ``tests/data/reference/official_facts.toml`` (its
header names the source), so every clone checks the same facts.  Plain pytest,
no Docker: this guards the data the tiers run, not the tiers.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_reb.spec import PYTEST_NODE, Repo, Run

ROOT = Path(__file__).resolve().parents[1]
REPOS_DIR = ROOT / "repos"
FACTS_TOML = ROOT / "tests" / "data" / "reference" / "official_facts.toml"
STAGES = ("cpu", "single_gpu", "multi_gpu")
TIER_OF_STAGE = {"cpu": "c1", "single_gpu": "c3", "multi_gpu": "c4"}


def module_stem(name: str) -> str:
    """``owner/name`` -> ``test_<owner>__<name>``; characters invalid in a module name -> ``_``."""
    owner, repo = name.split("/")
    return f"test_{re.sub(r'[^0-9A-Za-z_]', '_', owner)}__{re.sub(r'[^0-9A-Za-z_]', '_', repo)}"


@cache
def facts() -> list[dict[str, Any]]:
    """The 44 ``[[repo]]`` entries of the official facts, in the release's order."""
    return tomllib.loads(FACTS_TOML.read_text(encoding="utf-8"))["repo"]


@cache
def modules() -> dict[str, ModuleType]:
    """Every ``repos/test_*.py``, imported by path under a private package name."""
    loaded = {}
    for path in sorted(REPOS_DIR.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_reb_repos.{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded[path.stem] = module
    return loaded


def repo_of(fact: dict[str, Any]) -> Repo:
    module = modules()[module_stem(fact["name"])]
    assert isinstance(module.repo, Repo), f"{module.__name__}: `repo` is not a Repo"
    return module.repo


def stage_params() -> list[Any]:
    return [pytest.param(f, s, id=f"{f['name']}:{s}")
            for f in facts() for s in STAGES if s in f.get("stages", {})]


def repo_params() -> list[Any]:
    return [pytest.param(f, id=f["name"]) for f in facts()]


# --------------------------------------------------------------------------- denominators


def test_one_module_per_repository() -> None:
    names = [f["name"] for f in facts()]
    assert len(names) == 44
    assert sorted(modules()) == sorted(module_stem(n) for n in names)
    assert len({module_stem(n) for n in names}) == 44, "the naming rule must stay unique"
    for fact in facts():
        repo = repo_of(fact)
        assert repo.name == fact["name"]
        assert repo.commit == fact["commit"]
        assert repo.imports_total == fact["c0_import_total"]
        assert repo.domain == fact["domain"]


def test_denominators() -> None:
    repos = [repo_of(f) for f in facts()]
    count = {t: sum(r.applicable[t] for r in repos) for t in ("c0", "c1", "c2", "c3", "c4", "c5")}
    assert count == {"c0": 44, "c1": 29, "c2": 44, "c3": 43, "c4": 32, "c5": 44}
    assert sum(r.imports_total for r in repos) == 2858


@pytest.mark.parametrize("fact", repo_params())
def test_applicability_and_skip_reasons(fact: dict[str, Any]) -> None:
    repo = repo_of(fact)
    for stage in STAGES:
        tier = TIER_OF_STAGE[stage]
        supported = fact["supports"][stage]
        assert repo.applicable[tier] == supported, stage
        assert supported == (stage in fact.get("stages", {})), stage
        if supported:
            assert stage not in repo.skip, f"{stage} runs, so it has no skip reason"
        else:
            assert repo.skip_reason(tier) == fact["skip_reason"][stage], stage
    assert all(reason != "not_applicable" for reason in repo.skip.values()), \
        "not_applicable is the default and is left out"


# --------------------------------------------------------------------------- stage commands


#: Run-time tokens of the reference spelled the same way by every module.
COMMON_TOKENS: dict[str, list[str]] = {"<free port>": ["{port}"]}

#: Stages whose official shim we deliberately do not reproduce, and why.
DECLINED_SHIMS = {
    "vllm-project/vllm-omni": "its pre-flight pip-installs vllm into the environment under test; "
                              "a missing vllm is what the run must report, not repair",
}


def tokens_of(fact: dict[str, Any]) -> dict[str, list[str]]:
    """How a module spells the reference's run-time tokens (``<fraction>``, ``<inline: ...>``,
    harness paths): its ``TOKENS`` table (reference text -> our argv elements)."""
    module = modules()[module_stem(fact["name"])]
    return {**COMMON_TOKENS, **{k: list(v) for k, v in getattr(module, "TOKENS", {}).items()}}


def spelled(values: list[str], tokens: dict[str, list[str]]) -> list[str]:
    """``values`` with each token replaced: a whole element by its elements (none drops it),
    a ``<token>`` inside an element by its one replacement (only those: a key like ``-``
    must not rewrite every element that contains a dash)."""
    out: list[str] = []
    for value in values:
        if value in tokens:
            out.extend(tokens[value])
            continue
        for token, ours in tokens.items():
            if len(ours) == 1 and token.startswith("<") and token.endswith(">"):
                value = value.replace(token, ours[0])
        out.append(value)
    return out


def expected_env(stage: dict[str, Any], tokens: dict[str, list[str]]) -> dict[str, str]:
    """The reference env, tokens spelled; a variable whose token spells as nothing is gone
    (a ``Helper`` exports it)."""
    return {k: spelled([v], tokens)[0] for k, v in stage["env"].items()
            if tokens.get(v, [v]) != []}


@pytest.mark.parametrize(("fact", "stage"), stage_params())
def test_stage_command(fact: dict[str, Any], stage: str) -> None:
    want = fact["stages"][stage]
    run = getattr(repo_of(fact), stage)
    assert isinstance(run, Run)
    tokens = tokens_of(fact)
    official = spelled(want["argv"], tokens)
    if run.launcher == "pytest":  # spec.pytest_node: the same node through the host's -c command
        assert official[1:4] == ["-m", "pytest", "-q"]
        official = [official[0], "-c", PYTEST_NODE, "-q", "-p", "no:cacheprovider",
                    "--assert=plain", *official[4:]]
    assert list(run.argv) == official
    assert run.cwd == want["cwd"]
    assert dict(run.env) == expected_env(want, tokens)
    assert run.timeout == want["timeout_s"]
    assert run.launcher == want["launcher"]
    assert run.nproc == want.get("nproc", 1)
    assert run.min_gpus == want.get("min_gpus", 0)
    assert run.shim == want.get("shim")
    assert run.note.startswith(want.get("note", "")), "the reference note comes first, verbatim"


@pytest.mark.parametrize(("fact", "stage"), stage_params())
def test_success_rule(fact: dict[str, Any], stage: str) -> None:
    """Each official success rule is spelled with the vocabulary, never with code."""
    rule = fact["stages"][stage]["success"]
    run = getattr(repo_of(fact), stage)
    special = {"expect_log": list(run.expect_log), "reject_log": list(run.reject_log),
               "stop_after": run.stop_after, "http": run.http is not None,
               "retry": run.retry is not None, "together": len(run.together)}
    plain = {"expect_log": [], "reject_log": [], "stop_after": None, "http": False,
             "retry": False, "together": 0}
    if rule == "exit0":
        assert special == plain
    elif rule.startswith("exit0+log:"):
        assert special == {**plain, "expect_log": [rule.removeprefix("exit0+log:")]}
    elif rule.startswith("exit0+no-log:"):
        assert special == {**plain, "reject_log": rule.removeprefix("exit0+no-log:").split("|")}
    elif rule == "run 8s then SIGINT, exit0":
        assert special == {**plain, "stop_after": 8}
        assert run.stop_signal == "SIGINT"
    elif rule.startswith("http:"):
        assert special == {**plain, "http": True}
        assert run.launcher == "server_http"
        assert run.http is not None and rule.removeprefix("http:").count(run.http.request) == 1
        assert (run.http.expect_json_key is not None) or run.http.min_bytes > 0
        if within := re.search(r"within (\d+) s", rule):
            assert run.http.ready_within == int(within.group(1))
        if min_bytes := re.search(r">= (\d+) bytes", rule):
            assert run.http.min_bytes == int(min_bytes.group(1))
        if json_key := re.search(r"json has (\w+)", rule):
            assert run.http.expect_json_key == json_key.group(1)
        if "{port}" in run.argv:
            assert run.http.port == 0
    elif rule.startswith("exit0, retry with"):
        assert special == {**plain, "retry": True}
        assert run.retry is not None
        pattern = re.search(r"when log matches '([^']*)'", rule)
        assert pattern is not None and run.retry.when == pattern.group(1)
        assert run.retry_for(f"... {pattern.group(1)} ...") is run.retry.run
    elif rule == "pytest node passes":
        assert special == plain
        assert run.launcher == "pytest"
        assert list(run.argv[:3]) == ["{python}", "-c", PYTEST_NODE]
    elif rule == "all procs exit0":
        assert special == {**plain, "together": 1}
        other = run.together[0]
        assert other.env["REPLICA_GROUP_ID"] == "1" and run.env["REPLICA_GROUP_ID"] == "0"
        assert other.cwd == run.cwd and other.launcher == run.launcher
    else:  # pragma: no cover - a new rule needs a word in the vocabulary first
        pytest.fail(f"unknown success rule {rule!r}")


def _runs(run: Run) -> list[Run]:
    return [run, *run.together, *([run.retry.run] if run.retry else [])]


@pytest.mark.parametrize(("fact", "stage"), stage_params())
def test_stage_is_executable(fact: dict[str, Any], stage: str) -> None:
    """No ``<token>`` the reference left to run time remains, and every official shim is
    reproduced by our own files (or declined, with the reason)."""
    run = getattr(repo_of(fact), stage)
    for r in _runs(run):
        texts = r.texts()
        left = [t for t in texts if re.search(r"<[A-Za-z][^<>]*>", t)]
        assert not left, f"run-time tokens not spelled: {left}"
        uses_shims = any("{shims}" in t for t in texts)
        assert not uses_shims or r.shim_dir, "{shims} needs a shim_dir"
    if run.shim and fact["name"] not in DECLINED_SHIMS:
        assert any(r.shim_dir for r in _runs(run)), "the official shim is not reproduced"
    for r in _runs(run):
        if r.shim_dir:
            folder = Path(r.shim_dir) if Path(r.shim_dir).is_absolute() else ROOT / r.shim_dir
            for text in r.texts():
                for name in re.findall(r"\{shims\}/([\w./-]+)", text):
                    assert (folder / name).is_file(), f"{name} is not in {folder}"


@pytest.mark.parametrize(("fact", "stage"), stage_params())
def test_entrypoint_is_repo_relative(fact: dict[str, Any], stage: str) -> None:
    run = getattr(repo_of(fact), stage)
    for r in (run, *run.together, *([run.retry.run] if run.retry else [])):
        if r.entrypoint is not None:
            assert not r.entrypoint.startswith("/"), r.entrypoint
            assert not re.search(r"[{}<>]", r.entrypoint), r.entrypoint


# --------------------------------------------------------------------------- assets


#: How the note of an asset the official prepare did not fetch begins: pytest-reb's addition,
#: something the official stage downloaded at run time with the network (ours has none).
ADDITION = "pytest-reb's addition (not fetched by the official prepare"


def official_and_added(repo: Repo) -> tuple[list[Any], list[Any]]:
    """The module's assets as the official facts list them, and pytest-reb's additions after
    them, each marked as such by its note (repos/README.md)."""
    added = [a for a in repo.assets if a.note.startswith(ADDITION)]
    official = [a for a in repo.assets if not a.note.startswith(ADDITION)]
    assert list(repo.assets) == official + added, "additions come after the official assets"
    return official, added


@pytest.mark.parametrize("fact", repo_params())
def test_assets(fact: dict[str, Any]) -> None:
    got, added = official_and_added(repo_of(fact))
    want = fact.get("assets", [])
    assert [a.name for a in got] == [a["name"] for a in want]
    official_names = {a["name"] for a in want}
    for asset in added:
        assert asset.name not in official_names, asset.name
        assert asset.network, f"{asset.name}: an addition is what a stage downloaded at run time"
        assert "downloaded it at run time" in asset.note, asset.name
    for asset, ref in zip(got, want, strict=True):
        assert asset.kind == ref["kind"]
        assert asset.source == ref["source"]
        assert asset.id == ref.get("id")
        assert asset.url == ref.get("url")
        assert asset.path == ref.get("path")
        assert list(asset.files) == ref.get("files", [])
        assert asset.note == ref["note"]
        assert asset.network == ref["network"]
