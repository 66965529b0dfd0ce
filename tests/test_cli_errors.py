"""Every bad input to ``reb`` and to the plugin's options is one clear line and a non-zero
exit, never a traceback; ``reb`` alone shows what it can do.

The CLI cases are the ones a newcomer met (issue 28 item 7); the options are checked when
pytest parses the command line (``pytest_reb.plugin.optiontypes``), so pytest prints the usage
error with the option's name before any target is touched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_reb.loop.cli import main as reb
from pytest_reb.outcome import Outcome


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    o = Outcome(repo="me/x", target="t", tier="c1", status="passed", strict=True, compat=True)
    (run / "outcomes.jsonl").write_text(json.dumps(o.to_json()) + "\n")
    return run


def _one_line(err: str, *words: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err


def test_merge_with_a_missing_expect_writes_nothing(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    assert reb(["merge", str(run), "--out", str(tmp_path / "m"), "--expect",
                str(tmp_path / "nowhere.json")]) == 2
    _one_line(capsys.readouterr().err, "reb merge: --expect", "No such file")
    assert not (tmp_path / "m").exists()


def test_merge_of_no_valid_outcome_is_refused_as_table_refuses_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "outcomes.jsonl").write_text("not json\n")
    assert reb(["merge", str(empty), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "reb merge:" in err
    assert not (tmp_path / "m" / "outcomes.jsonl").exists()
    assert reb(["table", str(empty), "--out", str(tmp_path / "t")]) == 2


def test_table_into_an_unwritable_folder(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert reb(["table", str(run), "--out", str(blocker / "sub")]) == 2
    _one_line(capsys.readouterr().err.splitlines()[-1], "reb table: cannot write")


def test_a_matrix_error_names_the_file_not_an_option(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "runs.toml"
    bad.write_text("[[target]]\nrepo = 'a/b'\n")
    assert reb(["slurm", str(bad), "--dry-run"]) != 0
    err = capsys.readouterr().err
    assert "--reb-matrix" not in err and str(bad) in err and "Traceback" not in err


def test_reb_alone_shows_its_commands_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert reb([]) == 2
    err = capsys.readouterr().err
    assert "COMMAND" in err and "examples:" in err and "reb: choose a command" in err
    with pytest.raises(SystemExit) as done:
        reb(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("reb ")


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--reb-timeout-scale", "0", "above 0"), ("--reb-timeout-scale", "-1", "above 0"),
    ("--reb-timeout-scale", "fast", "not a number"), ("--reb-memory", "lots", "not a size"),
    ("--reb-disk", "0g", "not a size"), ("--reb-pids", "-5", "above 0"),
    ("--reb-pids", "many", "not a whole number"), ("--reb-trust-hook", "abc", "not a sha256"),
    ("--reb-gpus", "x,y", "not a list of GPU indices"), ("--reb-gpus", "0,GPU-1", "indices")])
def test_a_bad_option_value_is_a_usage_error(pytester: pytest.Pytester, option: str,
                                             value: str, says: str) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest(f"{option}={value}")
    assert result.ret == 4
    err = result.stderr.str()
    assert option in err and says in err and "Traceback" not in err
