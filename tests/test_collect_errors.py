"""A repository module that would be left out silently is a collection error instead.

A module of a ``repos/`` folder whose ``Repo`` has another name than ``repo`` (a
typo), or that uses pytest-reb but defines no ``Repo``, would otherwise be a
repository the run never measures; a ``repos/`` module that does not use
pytest-reb is not ours to judge, and a test elsewhere may hold a repository's
``Repo`` under any name.  Real pytest runs through ``pytester``,
collection only (nothing is started).
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

HEADER = 'from pytest_reb import Repo, Run\n'


def collect(pytester: pytest.Pytester, name: str, source: str) -> pytest.RunResult:
    folder = pytester.path / "repos"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(source)
    return pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                         str(folder))


def test_a_repo_under_another_name_is_a_collection_error(pytester: pytest.Pytester) -> None:
    result = collect(pytester, "test_typo.py",
                     HEADER + 'rpeo = Repo("me/typo", commit="0" * 40)\n')
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*test_typo.py holds a Repo named 'rpeo'*"])


def test_a_repos_module_without_a_repo_is_a_collection_error(pytester: pytest.Pytester) -> None:
    result = collect(pytester, "test_forgot.py", HEADER + 'CPU = Run(["{python}", "x.py"])\n')
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*test_forgot.py: a repository module defines `repo = "
                                 "Repo(...)`*"])


def test_a_repository_module_collects_its_tiers(pytester: pytest.Pytester) -> None:
    result = collect(pytester, "test_fine.py", HEADER + 'repo = Repo("me/fine", commit="0" * 40)\n')
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_c0_imports*"])


def test_a_repos_module_not_of_ours_is_left_alone(pytester: pytest.Pytester) -> None:
    result = collect(pytester, "test_other.py", "def test_own():\n    pass\n")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_own*"])


def test_a_test_may_hold_a_repository_under_any_name(pytester: pytest.Pytester) -> None:
    (pytester.path / "test_uses.py").write_text(
        HEADER + 'DEMO = Repo("me/demo", commit="0" * 40)\n\ndef test_it():\n'
        '    assert DEMO.name == "me/demo"\n')
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "test_uses.py")
    assert result.ret == pytest.ExitCode.OK
