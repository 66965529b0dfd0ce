"""The pure parts of ``bench/scaling.py``: the matrix rows and the pytest command of each mode
(the demo image, or ``local://`` with the interpreter, checkout and report), and what the lanes
column says.  Nothing here runs pytest or Docker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import localmode
import pytest
import scaling as bench  # bench/ is on the suite's pythonpath

from pytest_reb.runs.matrix import load_matrix


def test_docker_rows_name_the_demo_image() -> None:
    rows = bench.matrix_rows(3, image="reb-demo:good")
    assert rows == [{"repo": "reb/tinynet", "agent": f"a{i}", "image": "reb-demo:good"}
                    for i in (1, 2, 3)]


def test_local_rows_name_the_machine_and_a_report_beside_the_matrix(tmp_path: Path) -> None:
    local = bench.Local(python="/usr/bin/python3", checkout=tmp_path / "co")
    rows = bench.matrix_rows(2, local=local)
    assert rows == [{"repo": "reb/tinynet", "agent": f"a{i}", "host": "local://",
                     "report": "report.json"} for i in (1, 2)]
    matrix = tmp_path / "matrix.jsonl"
    matrix.write_text("".join(json.dumps(r) + "\n" for r in rows))
    specs = load_matrix(matrix)  # the plugin accepts them as written
    assert [(s.url, s.id, s.report) for s in specs] == [
        ("local://", f"a{i}@local://", str(tmp_path / "report.json")) for i in (1, 2)]


def test_rows_need_exactly_one_place() -> None:
    with pytest.raises(ValueError):
        bench.matrix_rows(1)
    with pytest.raises(ValueError):
        bench.matrix_rows(1, image="x", local=bench.Local("py", Path("co")))


def test_only_n_differs_between_sides_and_local_adds_python_and_checkout(tmp_path: Path) -> None:
    one, two = (bench.pytest_argv(tmp_path, n, "t") for n in (1, 2))
    assert [a for a, b in zip(one, two, strict=True) if a != b] == ["1"]
    assert one[one.index("matrix.jsonl") + 1:one.index("matrix.jsonl") + 3] == ["-m", "c1 or c2"]
    assert "--reb-python" not in one and "--reb-repo-dir" not in one
    local = bench.Local(python="/opt/py/bin/python3", checkout=tmp_path / "co")
    argv = bench.pytest_argv(tmp_path, 4, "n4-0", serial=True, local=local,
                             plugin=["-p", "pytest_reb.plugin.hooks"])
    assert argv[argv.index("-n") + 1] == "4"
    assert argv[argv.index("--reb-python") + 1] == "/opt/py/bin/python3"
    assert argv[argv.index("--reb-repo-dir") + 1] == str(tmp_path / "co")
    assert argv[argv.index("--reb-outdir") + 1] == str(tmp_path / "n4-0")
    assert argv[argv.index("pytest_reb.plugin.hooks") - 1] == "-p"
    assert "--reb-serial" in argv


def test_lanes_are_off_on_local_under_serial_and_without_two_cores_a_worker() -> None:
    assert bench.lanes(1, 2) == "on"
    assert bench.lanes(2, 2) == "off"
    assert bench.lanes(8, 16) == "on"
    assert bench.lanes(1, 16, serial=True) == "off"
    assert bench.lanes(1, 16, local=True) == "off"


def test_the_report_is_the_interpreters_own_facts(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-", str(tmp_path / "r.json")],
                          input=localmode.REPORT_SNIPPET, text=True, check=True)
    assert done.returncode == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["python_path"] == sys.executable
    assert report["cuda_available"] in (True, False)
    assert report["torch_version"] is None or isinstance(report["torch_version"], str)
