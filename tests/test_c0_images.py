"""The C0 tier on the demo images through pytest itself: the missing-dep image shows exactly
``yaml`` missing, a wrong interpreter never passes, an answer is kept per image, and the
environment is left byte-for-byte as it was.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.c0 import DEMO_SOURCE

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.pyramid.c0_imports import _question, imports_total, probe
from pytest_reb.pyramid.context import Context
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import load_report
from pytest_reb.spec import OFFICIAL_REPORT_PATH, Repo
from pytest_reb.targets import DockerTarget, image_file

ENV_PYTHON = "/opt/envs/tinynet/bin/python"


MODULE = """
from pytest_reb import Repo, Run

repo = Repo("reb/tinynet", commit="{commit}", imports_total={total},
            cpu=Run(["{{python}}", "train.py", "--device", "cpu", "--steps", "2",
                     "--out", "{{out}}"], timeout=120))
"""


def run_c0(pytester: pytest.Pytester, image: str, commit: str, *args: str) -> tuple[
        pytest.RunResult, Outcome]:
    """``pytest --reb-image IMAGE -m c0`` on a one-repository module; the C0 outcome logged."""
    pytester.makepyfile(test_tinynet=MODULE.format(commit=commit,
                                                   total=imports_total(DEMO_SOURCE)))
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"), "-m", "c0",
                                "-p", "no:cacheprovider", *args)
    logs = list((pytester.path / "reports").glob("*/outcomes.jsonl"))
    assert len(logs) == 1, result.stdout.str()
    outcomes = {o.tier: o for o in OutcomeLog(logs[0])}
    assert set(outcomes) == {"c0"}, outcomes
    return result, outcomes["c0"]


@pytest.mark.container
def test_missing_dep_image_lists_exactly_yaml(pytester: pytest.Pytester, missing_dep_image: str,
                                              demo_commit: str) -> None:
    result, o = run_c0(pytester, missing_dep_image, demo_commit)
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict, o.compat) == ("deps", False, True)
    assert o.evidence["missing"] == ["yaml"] and o.evidence["missing_count"] == 1
    assert o.message == (f"1 of {imports_total(DEMO_SOURCE)} imports unresolved: yaml; "
                         "pyright analysed 5 of 5 tracked Python files")
    assert o.evidence["bound"] is True and o.evidence["python"] == ENV_PYTHON
    assert "/opt/envs/tinynet/lib/python3.11/site-packages" in o.evidence["search_paths"]
    assert o.evidence["targets"] == ["tinynet", "train.py"]
    # PyYAML has stubs in pyright's typeshed: the official count never sees it missing.
    assert o.evidence["missing_official"] == []
    result.stdout.fnmatch_lines(["*C0 deps: 1 of * imports unresolved: yaml*"])


@pytest.mark.container
def test_missing_dep_image_in_compat_mode_counts_like_the_official(
        pytester: pytest.Pytester, missing_dep_image: str, demo_commit: str) -> None:
    result, o = run_c0(pytester, missing_dep_image, demo_commit, "--reb-compat")
    result.assert_outcomes(passed=1)
    assert (o.status, o.strict, o.compat) == ("passed", False, True)
    assert o.evidence["missing"] == [] and o.evidence["missing_strict"] == ["yaml"]


@pytest.mark.container
def test_good_image_has_nothing_missing(pytester: pytest.Pytester, demo_image: str,
                                        demo_commit: str) -> None:
    result, o = run_c0(pytester, demo_image, demo_commit)
    result.assert_outcomes(passed=1)
    assert (o.status, o.strict, o.compat) == ("passed", True, True)
    assert o.evidence["missing"] == [] and o.evidence["missing_count"] == 0
    assert o.evidence["files_analyzed"] == 5 and o.evidence["bound"] is True


@pytest.fixture
def wrong_report(docker_client: Any, demo_image: str, tmp_path: Path) -> Path:
    """The image's own report, naming an interpreter that does not exist."""
    raw = image_file(docker_client, demo_image, OFFICIAL_REPORT_PATH)
    assert raw is not None
    report = json.loads(raw)
    report["python_path"] = "/opt/envs/gone/bin/python"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(report))
    return path


@pytest.mark.container
def test_a_report_naming_a_wrong_interpreter_never_passes(
        pytester: pytest.Pytester, demo_image: str, demo_commit: str, wrong_report: Path) -> None:
    result, o = run_c0(pytester, demo_image, demo_commit, "--agent-report", str(wrong_report))
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict, o.compat) == ("entrypoint_not_found", False, False)
    assert "/opt/envs/gone/bin/python" in o.message and o.evidence["missing_count"] is None


@pytest.mark.container
def test_an_interpreter_pyright_cannot_use_is_caught(pytester: pytest.Pytester, demo_image: str,
                                                     demo_commit: str) -> None:
    """``--reb-python python3``: runs from PATH, but pyright silently ignores it."""
    result, o = run_c0(pytester, demo_image, demo_commit, "--reb-python", "python3")
    result.assert_outcomes(failed=1)
    assert (o.category, o.strict) == ("pyright_wrong_interpreter", False)
    assert "only its bundled typeshed" in o.message


#: (path, size, sha256) of every file, (path, "dir"), (path, "->target") under the roots,
#: digested in the target (the listing of torch alone is megabytes); per-root digests say where.
LISTING = r"""
import hashlib, json, os, sys
out = {}
for root in sys.argv[1:]:
    rows = []
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            p = os.path.join(base, name)
            if os.path.islink(p):
                rows.append(f"{p}\t->{os.readlink(p)}")
            elif os.path.isdir(p):
                rows.append(f"{p}\tdir")
            else:
                with open(p, "rb") as fh:
                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
                rows.append(f"{p}\t{os.path.getsize(p)}\t{digest}")
    out[root] = [len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest()]
print(json.dumps(out))
"""


@pytest.fixture
def env_target(missing_dep_image: str) -> Iterator[DockerTarget]:
    target = DockerTarget(missing_dep_image, run_id="tests-c0", gpus=[])
    yield target
    target.close()


def env_listing(target: DockerTarget, roots: list[str]) -> dict[str, list[Any]]:
    res = target.exec([ENV_PYTHON, "-I", "-S", "-B", "-c", LISTING, *roots], timeout=300)
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def _c0_of(target: DockerTarget, **kw: Any) -> Outcome:
    raw = target.read_file(OFFICIAL_REPORT_PATH)
    ctx = Context(repo=Repo("reb/tinynet", commit="0" * 40, imports_total=8),
                  target_name="missing-dep", connect=lambda: target,
                  read_report=lambda _: load_report(raw, source=OFFICIAL_REPORT_PATH), **kw)
    return probe(ctx)


@pytest.mark.container
def test_a_second_c0_of_the_image_reads_the_answer_kept_for_it(
        env_target: DockerTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's complete answers are kept by image id: the same verdict, no command run;
    an answer that is not complete (an interpreter that does not run) is never kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first, second = _c0_of(env_target), _c0_of(env_target)
    assert "cached" not in first.evidence and second.evidence["cached"] is True
    for o in (first, second):
        assert (o.status, o.category, o.strict, o.compat) == ("failed", "deps", False, True)
        assert o.evidence["missing"] == ["yaml"] and o.evidence["bound"] is True, o.message
    assert first.message == second.message
    # each run names its own scratch directory, in the search paths the kept answer gives
    assert first.evidence["scratch"] != second.evidence["scratch"]
    assert f"{second.evidence['scratch']}/reb-no-stubs" in second.evidence["search_paths"]
    assert second.duration == 0.0
    for _ in range(2):
        gone = _c0_of(env_target, options=RebOptions(python="/opt/envs/gone/bin/python"))
        assert gone.category == "entrypoint_not_found" and "cached" not in gone.evidence


def test_a_kept_answer_is_keyed_by_the_question_not_by_the_run() -> None:
    spec = {"scratch": "/tmp/reb-c0-aaaa", "python": "/p", "main_timeout_ms": 1,
            "files": {"c.json": {"gz": base64.b64encode(gzip.compress(
                b'{"root": "/tmp/reb-c0-aaaa"}')).decode()}, "b.py": ""}}
    other_run = {**spec, "scratch": "/tmp/reb-c0-bbbb", "main_timeout_ms": 9,
                 "files": {"c.json": '{"root": "/tmp/reb-c0-bbbb"}', "b.py": ""}}
    assert _question("analyse", spec) == _question("analyse", other_run)
    assert _question("analyse", spec) != _question("analyse", {**spec, "python": "/q"})
    assert _question("analyse", spec) != _question("survey", spec)


@pytest.mark.container
def test_c0_leaves_the_environment_byte_for_byte_unchanged(
        env_target: DockerTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing (path, size, sha256) of the interpreter's prefix, import dirs and the checkout,
    before and after C0 in the same container; then a planted change shows the listing sees it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # C0 runs, nothing kept is read
    info = env_target.exec([ENV_PYTHON, "-B", "-c", "import json, sys; print(json.dumps("
                            "[sys.prefix] + [p for p in sys.path if p.startswith('/')]))"],
                           timeout=60)
    roots = sorted(set(json.loads(info.stdout)) | {"/data/project/repo"})
    assert "/opt/envs/tinynet/lib/python3.11/site-packages" in roots
    assert "/usr/lib/python3.11/lib-dynload" in roots
    before = env_listing(env_target, roots)
    o = _c0_of(env_target)
    assert o.evidence["missing"] == ["yaml"], o.message
    assert "cached" not in o.evidence
    assert o.evidence["python"] == ENV_PYTHON  # from the image's report
    after = env_listing(env_target, roots)
    assert after == before
    left = env_target.exec(["sh", "-c", "ls -d /tmp/reb-c0-* 2>/dev/null || true"], timeout=30)
    assert left.stdout.strip() == ""
    # The control: one empty file planted in a (small) listed root changes its listing.
    small = "/usr/lib/python3.11/lib-dynload"
    assert env_target.exec(["touch", f"{small}/planted.pth"], timeout=30).exit_code == 0
    assert env_listing(env_target, [small])[small] != before[small]
