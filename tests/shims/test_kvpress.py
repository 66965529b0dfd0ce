"""kvpress's shims (``repos/shims/test_NVIDIA__kvpress``): the setup step that computes the
fraction of the split that keeps one row.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.repomodules import module as repo_module
from support.repomodules import write_tree
from support.shims import SHIMS, fill, python


def kvpress_fraction(tmp_path: Path, rows: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the module's setup step against a stand-in ``datasets`` whose split has ``rows``."""
    site = write_tree(tmp_path / "site", {"datasets/__init__.py": f"""
        import json, os
        def load_dataset(path, data_dir=None, split=None, **kw):
            with open(os.environ["LOAD_LOG"], "w") as f:
                json.dump([path, data_dir, split, kw], f)
            return list(range({rows}))
    """})
    run = repo_module("test_NVIDIA__kvpress").repo.cpu
    (step,) = run.setup
    out_dir = tmp_path / "out"
    argv = [fill(a, python=sys.executable, shims=str(SHIMS / "test_NVIDIA__kvpress"),
                 out=str(out_dir)) for a in step]
    assert argv[0] == sys.executable
    done = python(argv[1:], [site], tmp_path, LOAD_LOG=str(tmp_path / "load.json"))
    return done, out_dir


@pytest.mark.parametrize("rows", [1, 7, 1041, 100_003])
def test_kvpress_fraction_selects_one_row(tmp_path: Path, rows: int) -> None:
    done, out_dir = kvpress_fraction(tmp_path, rows)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "load.json").read_text()) == [
        "simonjegou/loogle", "shortdep_qa", "test", {}]
    run = repo_module("test_NVIDIA__kvpress").repo.cpu
    at = list(run.argv).index("--fraction") + 1
    assert run.argv[at] == "{file:{out}/fraction}"
    text = (out_dir / "fraction").read_text().strip()
    fraction = float(text)
    assert fraction == min(1.0, (1 + 1e-6) / rows)
    assert 0.0 < fraction <= 1.0  # evaluate.py asserts this
    assert round(fraction * rows) == 1  # what DataFrame.sample(frac=...) keeps


def test_kvpress_fraction_fails_on_an_empty_split(tmp_path: Path) -> None:
    done, out_dir = kvpress_fraction(tmp_path, 0)
    assert done.returncode != 0
    assert "the split has no rows" in done.stderr
    assert not (out_dir / "fraction").exists()


def test_kvpress_every_stage_computes_its_fraction() -> None:
    repo = repo_module("test_NVIDIA__kvpress").repo
    for run in (repo.cpu, repo.single_gpu, repo.multi_gpu):
        assert run is not None and run.shim_dir and len(run.setup) == 1
        assert "{file:{out}/fraction}" in run.argv
