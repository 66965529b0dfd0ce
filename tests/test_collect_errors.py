"""A repository module that would be left out silently is a collection error instead.

A module whose ``Repo`` has another name than ``repo`` (a typo) and a module of
a ``repos/`` folder that uses pytest-reb but defines no ``Repo`` would otherwise
be repositories the run never measures; a ``repos/`` module that does not use
pytest-reb is not ours to judge.  Real pytest runs through ``pytester``,
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
