"""Run matrices (``--reb-matrix``, TOML or JSON lines): parsing, the errors that name the file
and row, and each module getting only its own rows (``matrix.load_matrix``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_reb.runs.matrix import MatrixError, load_matrix
from pytest_reb.targets import ImageRef


def test_matrix_toml_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(
        '[[target]]\nrepo = "me/mini"\nagent = "alpha"\nimage = "img:1"\nreport = "r.json"\n'
        '[[target]]\nrepo = "me/mini"\nagent = "beta"\nhost = "ssh://gpu"\n')
    alpha, beta = load_matrix(tmp_path / "m.toml")
    assert (alpha.id, alpha.url, alpha.repo) == ("alpha@img:1", ImageRef("img:1"), "me/mini")
    assert alpha.report == str(tmp_path / "r.json")  # relative to the matrix file
    assert (beta.id, beta.url, beta.report) == ("beta@ssh://gpu", "ssh://gpu", None)
    (tmp_path / "m.jsonl").write_text('# agents\n{"repo": "me/mini", "image": "img:1"}\n\n'
                                      '{"repo": "me/mini", "agent": "a", "image": "img:1"}\n')
    assert [s.id for s in load_matrix(tmp_path / "m.jsonl")] == ["img:1", "a@img:1"]


@pytest.mark.parametrize(("name", "text", "error"), [
    ("m.toml", "[[target]\nrepo = 1", r"m\.toml is not TOML"),
    ("m.toml", '[[target]]\nimage = "x"\ngpu = "0"\n', r"row 1: unknown key\(s\) \['gpu'\]"),
    ("m.toml", '[[target]]\nimage = "x"\nhost = "local://"\n', "row 1: give exactly one of"),
    ("m.toml", '[[target]]\nagent = "a"\n', "row 1: give exactly one of image or host"),
    ("m.toml", '[[target]]\nimage = "x"\n[[target]]\nimage = "x"\n', "targets named twice.*x"),
    ("m.toml", '[[target]]\nimage = ""\n', "image must be a non-empty string"),
    ("m.jsonl", '{"image": "x"}\n{"image": "x", "agent": "a"}\n{"image": "x"',
     r"m\.jsonl:3: not JSON"),
    ("m.jsonl", '["image", "x"]\n', "row 1: a row is a table/object, not list"),
    ("m.jsonl", '{"image": "x", "agent": 7}\n', "agent must be a non-empty string"),
])
def test_matrix_errors_name_the_file_and_row(tmp_path: Path, name: str, text: str,
                                             error: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(MatrixError, match=error):
        load_matrix(tmp_path / name)


def test_one_agent_on_one_host_for_two_repositories(tmp_path: Path) -> None:
    """A name is unique per repository; a row without one meets every module, so it clashes."""
    rows = '[[target]]\nrepo = "me/a"\nagent = "x"\nhost = "ssh://gpu"\n' \
           '[[target]]\nrepo = "me/b"\nagent = "x"\nhost = "ssh://gpu"\n'
    (tmp_path / "m.toml").write_text(rows)
    assert [(s.repo, s.id) for s in load_matrix(tmp_path / "m.toml")] == [
        ("me/a", "x@ssh://gpu"), ("me/b", "x@ssh://gpu")]
    (tmp_path / "m.toml").write_text(rows + '[[target]]\nagent = "x"\nhost = "ssh://gpu"\n')
    with pytest.raises(MatrixError, match=r"named twice.*x@ssh://gpu"):
        load_matrix(tmp_path / "m.toml")


def test_each_module_gets_only_its_own_rows(pytester: pytest.Pytester) -> None:
    """Two repositories on one local agent: each module's items carry the one plain id."""
    for name in ("a", "b"):
        pytester.makepyfile(**{f"test_me__{name}": (
            "from pytest_reb import Repo, Run\n"
            f"repo = Repo('me/{name}', commit='0' * 40, imports_total=1,\n"
            "            cpu=Run(['{python}', '-c', 'print(1)'], timeout=60))\n")})
    rows = [{"repo": f"me/{n}", "agent": "x", "host": "local://"} for n in ("a", "b")]
    (pytester.path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-matrix", "m.jsonl", "--reb-python",
        sys.executable, "--reb-repo-dir", str(pytester.path), "-m", "c1", "-p",
        "no:cacheprovider", "--reb-outdir", str(pytester.path / "r"), "--collect-only", "-q")
    assert result.ret == 0
    ids = sorted(line for line in result.stdout.lines if "::test_c1_cpu[" in line)
    assert ids == ["test_me__a.py::test_c1_cpu[x@local://]",
                   "test_me__b.py::test_c1_cpu[x@local://]"]


def test_missing_matrix_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--reb-matrix", "nowhere.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--reb-matrix: cannot read nowhere.toml*"])
