"""The plugin through pytest itself (pytester): options, markers, collection, skips, resume.

These run on any machine: the target is ``local://`` with this interpreter,
so no Docker is needed.  Container behaviour is in test_docker_target.py.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support.minirepo import git_checkout

from pytest_reb.outcome import Outcome, OutcomeLog

TIER_NAMES = ["test_c0_imports", "test_c1_cpu", "test_c2_cuda", "test_c3_single_gpu",
              "test_c4_multi_gpu", "test_c5_audit"]


def module(commit: str, *, cpu: str = 'Run(["{python}", "main.py"], timeout=30)',
           extra: str = "") -> str:
    return (f"from pytest_reb import Repo, Run, torchrun\n"
            f"repo = Repo('me/mini', commit='{commit}', imports_total=1, cpu={cpu},\n"
            f"            single_gpu=Run(['{{python}}', 'main.py']), multi_gpu=None,\n"
            f"            skip={{'multi_gpu': 'repo_not_supported'}}{extra})\n")


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "checkout"
    commit = git_checkout(repo, {"main.py": "print('hello from main')\n",
                                 "broken.py": "import not_a_real_module_xyz\n",
                                 "hang.py": "import time\ntime.sleep(600)\n"})
    return repo, commit


def local_args(pytester: pytest.Pytester, repo: Path, *extra: str) -> list[str]:
    return ["--rootdir", str(pytester.path), "--reb-host", "local://", "--reb-python",
            sys.executable, "--reb-repo-dir", str(repo), "--reb-outdir",
            str(pytester.path / "reports"), "-p", "no:cacheprovider", *extra]


def outcomes(pytester: pytest.Pytester) -> list[Outcome]:
    logs = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    assert logs, "no outcomes.jsonl written"
    return list(OutcomeLog(logs[-1]))


def test_markers_are_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    for tier in ("c0", "c1", "c2", "c3", "c4", "c5"):
        result.stdout.fnmatch_lines([f"@pytest.mark.{tier}: C{tier[1]} *"])


def test_options_are_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    for opt in ("--reb-image=IMAGE", "--reb-host=URL", "--agent-report=PATH", "--reb-python=PATH",
                "--reb-repo-dir=DIR", "--reb-repo=OWNER/NAME", "--reb-outdir=DIR",
                "--reb-network=MODE", "--reb-gpus=IDS", "--reb-timeout-scale=X", "--reb-compat",
                "--reb-resume*"):
        result.stdout.fnmatch_lines([f"*{opt}*"])


def test_a_repository_module_becomes_six_tier_items(pytester: pytest.Pytester,
                                                    checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    result = pytester.runpytest("--collect-only", "-q", "--strict-markers",
                                *local_args(pytester, repo))
    result.stdout.fnmatch_lines([f"test_mini.py::{name}[[]local://[]]" for name in TIER_NAMES])
    assert result.ret == 0


def test_marker_selects_one_tier(pytester: pytest.Pytester, checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    result = pytester.runpytest("--strict-markers", "-m", "c1", *local_args(pytester, repo))
    result.assert_outcomes(passed=1, deselected=5)
    [o] = outcomes(pytester)
    assert (o.tier, o.status, o.exit_code) == ("c1", "passed", 0)
    assert "hello from main" in o.stdout_tail
    # a pass says what was checked, from its own evidence (this host's known fakes may follow)
    assert re.match(rf"`{re.escape(sys.executable)} main.py`: exit 0 within 30 s; no GPU "
                    rf"visible; the witness saw {re.escape(str(repo))}/main.py run to its end",
                    o.message), o.message


def test_without_target_items_skip_with_a_reason(pytester: pytest.Pytester,
                                                 checkout: tuple[Path, str]) -> None:
    _, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider", "--rootdir", str(pytester.path))
    result.assert_outcomes(skipped=6)
    result.stdout.fnmatch_lines(["*no target: pass --reb-image IMAGE or --reb-host URL*"])


def test_tier_that_does_not_apply_skips_with_the_official_reason(
        pytester: pytest.Pytester, checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    result = pytester.runpytest("-rs", "-m", "c4", *local_args(pytester, repo))
    result.assert_outcomes(skipped=1, deselected=5)
    result.stdout.fnmatch_lines(["*not_applicable: repo_not_supported*"])
    [o] = outcomes(pytester)
    assert (o.status, o.category) == ("skipped", "not_applicable")


def test_missing_dependency_fails_c1_as_deps(pytester: pytest.Pytester,
                                             checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit, cpu='Run(["{python}", "broken.py"])'))
    result = pytester.runpytest("-m", "c1", *local_args(pytester, repo))
    result.assert_outcomes(failed=1, deselected=5)
    # the headline names the cause the diagnosis found, with its class
    result.stdout.fnmatch_lines(["*C1 deps: exit 1 (deps): missing_package: "
                                 "ModuleNotFoundError: No module named 'not_a_real_module_xyz'*"])


def test_hanging_entrypoint_times_out_and_leaves_nothing(pytester: pytest.Pytester,
                                                        checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit, cpu='Run(["{python}", "hang.py"], timeout=2)'))
    result = pytester.runpytest("-m", "c1", *local_args(pytester, repo))
    result.assert_outcomes(failed=1, deselected=5)
    [o] = outcomes(pytester)
    assert (o.category, o.timed_out) == ("timeout", True)
    assert 2 <= o.duration < 15
    import subprocess

    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(repo / "hang.py") not in ps and "hang.py" not in ps


def test_cpu_machine_fails_gpu_tiers_with_the_right_categories(
        pytester: pytest.Pytester, checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit, extra=", multi_gpu=torchrun('main.py')")
                        .replace("multi_gpu=None,", "").replace(
                            "skip={'multi_gpu': 'repo_not_supported'}", "skip={}"))
    result = pytester.runpytest("-m", "c3 or c4", "--reb-gpus", "", *local_args(pytester, repo))
    result.assert_outcomes(failed=2, deselected=4)
    cats = {o.tier: o.category for o in outcomes(pytester)}
    assert cats == {"c3": "insufficient_hardware", "c4": "insufficient_hardware"}


def test_modules_are_matched_to_targets_by_commit(pytester: pytest.Pytester,
                                                  checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mine=module(commit),
                        test_other=module("0" * 40).replace("me/mini", "other/repo"))
    result = pytester.runpytest("-m", "c1", *local_args(pytester, repo))
    result.assert_outcomes(passed=1, deselected=11)
    assert [o.repo for o in outcomes(pytester)] == ["me/mini"]
    # forcing a module onto another module's checkout is refused, naming that module
    forced = pytester.runpytest("-m", "c1", "--reb-repo", "other/repo",
                                *local_args(pytester, repo))
    forced.assert_outcomes(failed=1, deselected=11)
    forced.stdout.fnmatch_lines([f"*refused: checkout is at commit {commit}, not other/repo's "
                                 "pinned 0000000000000000000000000000000000000000; it is the "
                                 "pinned commit of module me/mini*"])
    allowed = pytester.runpytest("-m", "c1", "--reb-repo", "other/repo",
                                 "--reb-allow-commit-mismatch", *local_args(pytester, repo))
    allowed.assert_outcomes(passed=1, deselected=11)


def test_resume_reruns_only_what_is_missing(pytester: pytest.Pytester,
                                            checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    first = pytester.runpytest("-m", "c1", *local_args(pytester, repo))
    first.assert_outcomes(passed=1, deselected=5)
    before = outcomes(pytester)
    again = pytester.runpytest("-m", "c1 or c4", "--reb-resume", *local_args(pytester, repo))
    again.assert_outcomes(passed=1, skipped=1, deselected=4)
    after = outcomes(pytester)
    # the c1 line was not written again (not re-run); c4 was added
    assert [o.tier for o in after] == ["c1", "c4"]
    assert after[0].started == before[0].started
    summary = json.loads(next((pytester.path / "reports").glob("*/summary.json")).read_text())
    assert summary["totals"]["c1"]["passed"] == 1


def test_summary_and_pyramid(pytester: pytest.Pytester, checkout: tuple[Path, str]) -> None:
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    result = pytester.runpytest("-m", "c1 or c3 or c4", "--reb-gpus", "",
                                *local_args(pytester, repo))
    result.stdout.fnmatch_lines(["*reb pyramid*", "local://  (me/mini)", "*C1 CPU*PASS*",
                                 "total: C1 1/1  C3 0/1*"])
    summary = json.loads(next((pytester.path / "reports").glob("*/summary.json")).read_text())
    assert summary["mode"] == "strict"
    assert summary["totals"]["c4"] == {**summary["totals"]["c4"], "applicable": 0,
                                       "not_applicable": 1}


def test_other_plugins_get_every_outcome(pytester: pytest.Pytester,
                                         checkout: tuple[Path, str]) -> None:
    """``pytest_reb_outcome``: a conftest sees each outcome the run records, as recorded."""
    repo, commit = checkout
    pytester.makepyfile(test_mini=module(commit))
    pytester.makeconftest(
        "import json\n"
        "def pytest_reb_outcome(outcome, config):\n"
        f"    with open({str(pytester.path / 'seen.jsonl')!r}, 'a') as fh:\n"
        "        fh.write(json.dumps([outcome.to_json(), config.getoption('reb_repo_dir')])"
        " + '\\n')\n")
    result = pytester.runpytest("-m", "c1 or c4", *local_args(pytester, repo))
    result.assert_outcomes(passed=1, skipped=1, deselected=4)
    seen = [json.loads(line) for line in (pytester.path / "seen.jsonl").read_text().splitlines()]
    assert [Outcome.from_json(o) for o, _ in seen] == outcomes(pytester)
    assert [o["tier"] for o, _ in seen] == ["c1", "c4"]
    assert {d for _, d in seen} == {str(repo)}


def test_demo_module_pins_the_demo_commit() -> None:
    """The demo module is pinned like the 44; a change to demo/tinynet must update the pin."""
    import importlib.util

    from pytest_reb.loop.demo.checkout import demo_commit

    path = Path(__file__).resolve().parent.parent / "demo" / "test_demo__tinynet.py"
    spec = importlib.util.spec_from_file_location("demo_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.repo.commit == demo_commit()


def test_every_option_is_in_the_options_page(pytester: pytest.Pytester) -> None:
    """docs/options.md holds the option table people read (the README is one screen and
    links it): no option of ours may be missing from it, and the README must link it."""
    import re

    result = pytester.runpytest("--help", "-p", "no:cacheprovider")
    ours = set(re.findall(r"(--reb-[a-z-]+|--agent-report)\b", result.stdout.str()))
    root = Path(__file__).resolve().parents[1]
    options = (root / "docs" / "options.md").read_text()
    assert len(ours) > 15
    assert sorted(o for o in ours if f"`{o}" not in options) == []
    assert "(docs/options.md)" in (root / "README.md").read_text()


def test_files_the_targets_need_are_package_data() -> None:
    """Probes and the shim library are not packages; an installed plugin ships them only
    through package-data (an editable install would hide a missing glob)."""
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["pytest_reb"]
    package = root / "pytest_reb"
    needed = [p.relative_to(package).as_posix() for folder in ("pyramid/probes", "pyramid/shimlib")
              for p in (package / folder).iterdir() if p.is_file()]
    assert needed
    assert [f for f in needed if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def test_a_local_run_needs_no_docker_sdk() -> None:
    """A GPU machine verifying itself (``local://``) may lack the Docker SDK: the tiers load.

    Found on the H200: the fixtures imported the agent runner, and with it ``docker``.
    """
    import subprocess
    import sys

    code = ("import sys; sys.modules['docker'] = None\n"
            "import pytest_reb.plugin.hooks, pytest_reb.plugin.fixtures\n"
            "import pytest_reb.plugin.session\n"
            "from pytest_reb.pyramid.context import TIER_TESTS, tier_probe\n"
            "[tier_probe(t) for t in TIER_TESTS]\n"
            "from pytest_reb.targets.container import Limits\n"
            "assert Limits(disk='20g').disk_bytes() == 20 << 30\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("keep", [False, True])
def test_a_local_stage_leaves_no_output_folder_unless_asked(
        pytester: pytest.Pytester, tmp_path: Path, keep: bool) -> None:
    """A stage's ``{out}`` (checkpoints, logs) is this machine's ``/tmp`` on ``local://``: it is
    removed when the stage ends; ``--reb-keep-outputs`` keeps it where the run put it."""
    repo = tmp_path / "out-checkout"
    marker = f"reb-keep-{keep}-{tmp_path.name}"
    commit = git_checkout(repo, {"main.py": (
        "import pathlib, sys\n"
        "out = pathlib.Path(sys.argv[1])\n"
        f"(out / 'ckpt.bin').write_text({marker!r})\n"
        "print('OUT', out)\n")})
    pytester.makepyfile(test_mini=module(commit, cpu='Run(["{python}", "main.py", "{out}"], '
                                                       'timeout=30)'))
    extra = ("--reb-keep-outputs",) if keep else ()
    pytester.runpytest(*local_args(pytester, repo, "-m", "c1", *extra))
    [c1] = [o for o in outcomes(pytester) if o.tier == "c1"]
    assert c1.status == "passed", c1.message
    out = Path(next(line.split()[1] for line in c1.stdout_tail.splitlines()
                    if line.startswith("OUT ")))
    assert out.is_relative_to("/tmp") and out.name == "c1"
    assert (out / "ckpt.bin").is_file() is keep and out.parent.exists() is keep
    if keep:
        import shutil

        shutil.rmtree(out.parent)


def test_an_asset_cache_that_is_a_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    (pytester.path / "a-file").write_text("x")
    result = pytester.runpytest_subprocess("--reb-assets", str(pytester.path / "a-file"),
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reb-assets *a-file: not a folder*"])
