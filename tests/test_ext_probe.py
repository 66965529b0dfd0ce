"""The extension sweep counts what the C2 probe already loaded, and loads only the rest.

Each compiled module is loaded in an interpreter of its own, so on a torch
environment every one of torch's costs an ``import torch``: the largest part of
the sweep's time, spent proving again what the CUDA probe's own ``import torch``
had just shown.  The probe now lists the compiled modules it loaded, with their
real paths; the sweep takes those as loaded only for the same file, and loads
every other one as before.  Both probes run here for real, under this host's
interpreter, with a stand-in ``torch`` package that loads a real compiled module.

The modules of one package share its import in a fork server (one interpreter
imports ``scipy.linalg``, a child per module): a success there is a success,
anything else is loaded again in a fresh interpreter, whose answer counts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pydantic_core._pydantic_core as compiled
import pytest
from support.torchsite import cpu_torch_site

from pytest_reb.pyramid import ext_sweep
from pytest_reb.targets import marked_json

PROBES = Path(__file__).resolve().parents[1] / "pytest_reb" / "pyramid" / "probes"
MODULE = "pydantic_core._pydantic_core"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A ``torch`` stand-in whose import loads a real compiled module, as torch's does."""
    return cpu_torch_site(tmp_path, first="import pydantic_core._pydantic_core\n")


def run(probe: str, site: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, str(PROBES / probe), *args], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def sweep(site: Path, checkout: Path, loaded: dict[str, str]) -> dict:
    spec = {"checkout": str(checkout), "per_module": 60, "deadline": 120, "jobs": 2,
            "loaded": ext_sweep._bounded(loaded)}
    found = marked_json(run("ext_probe.py", site, json.dumps(spec)), "REB_EXT_SWEEP")
    assert found is not None
    return found


def test_the_cuda_probe_lists_the_compiled_modules_it_loaded(site: Path) -> None:
    out = run("cuda_probe.py", site)
    loaded = marked_json(out, "REB_CUDA_PROBE_LOADED")
    assert loaded is not None and loaded[MODULE] == os.path.realpath(compiled.__file__)
    assert out.splitlines()[-1].startswith("REB_CUDA_PROBE {")  # the main line stays last


def test_the_sweep_takes_the_probes_modules_and_loads_the_rest(site: Path,
                                                               tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    checkout.mkdir()
    (checkout / "main.py").write_text("import pydantic_core\nimport yaml\n")
    loaded = marked_json(run("cuda_probe.py", site), "REB_CUDA_PROBE_LOADED") or {}
    reused = sweep(site, checkout, loaded)
    fresh = sweep(site, checkout, {})
    assert MODULE in reused["loaded"] and MODULE in fresh["loaded"]
    assert reused["loaded"] == fresh["loaded"] and reused["failed"] == fresh["failed"] == []
    assert reused["pip_check"]["ran"] == fresh["pip_check"]["ran"]
    assert reused["loaded_by_c2_probe"] == [MODULE] and fresh["loaded_by_c2_probe"] == []


def test_another_file_of_the_same_name_is_loaded_again(site: Path, tmp_path: Path) -> None:
    """A module is taken as loaded only for the file the probe loaded: a name alone is not."""
    checkout = tmp_path / "repo"
    checkout.mkdir()
    (checkout / "main.py").write_text("import pydantic_core\n")
    elsewhere = sweep(site, checkout, {MODULE: "/nowhere/_pydantic_core.so"})
    assert MODULE in elsewhere["loaded"] and elsewhere["loaded_by_c2_probe"] == []


def test_the_list_passed_on_is_bounded_and_only_strings() -> None:
    hostile = {f"m{i}": "/" + "x" * 500 for i in range(1000)}
    hostile.update({"odd": 3})  # type: ignore[dict-item]
    kept = ext_sweep._bounded(hostile)
    assert len(json.dumps(kept)) <= ext_sweep.LOADED_CHARS + 1000
    assert all(isinstance(v, str) for v in kept.values())


CC = shutil.which("cc") or shutil.which("gcc")
#: A library whose loading aborts unless the package was imported by this very process: what a
#: package whose import a fork cannot carry (threads, a pid it remembers) does to a child.
FORK_UNSAFE_C = """
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void check(void) {
    const char *pid = getenv("FORKPKG_PID");
    if (!pid || atoi(pid) != getpid()) abort();
}
int op(void) { return 1; }
"""


def package_of_two(tmp_path: Path, name: str, init: str, c_source: str) -> Path:
    """A checkout importing package ``name`` (``__init__.py`` is ``init``) with two libraries
    built from ``c_source``: two, so the package's modules share a fork server."""
    checkout = tmp_path / "repo"
    pkg = checkout / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init)
    (checkout / "main.py").write_text(f"import {name}\n")
    src = tmp_path / f"{name}.c"
    src.write_text(c_source)
    for lib in ("_a.so", "_b.so"):
        subprocess.run([str(CC), "-shared", "-fPIC", "-o", str(pkg / lib), str(src)], check=True)
    return checkout


def test_the_modules_of_one_package_share_its_import(tmp_path: Path) -> None:
    """numpy's compiled modules load in children of one interpreter that imported numpy; those
    that import already loaded there from the same file need no child."""
    pytest.importorskip("numpy")
    checkout = tmp_path / "repo"
    checkout.mkdir()
    (checkout / "main.py").write_text("import numpy\n")
    out = sweep(tmp_path / "nothing", checkout, {})
    numpy = [m for m in out["loaded"] if m.startswith("numpy.")]
    assert len(numpy) > 2 and out["failed"] == []
    shared = out["loaded_in_fork"] + out["loaded_by_package_import"]
    assert shared >= len(numpy) - 3  # groups of one load fresh
    assert out["loaded_by_package_import"] >= 1  # numpy's own import loads _multiarray_umath
    assert out["loaded_in_fork"] >= 1  # its test modules it does not


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_what_fails_in_a_fork_is_decided_by_a_fresh_interpreter(tmp_path: Path) -> None:
    checkout = package_of_two(tmp_path, "forkpkg",
                              "import os\nos.environ['FORKPKG_PID'] = str(os.getpid())\n",
                              FORK_UNSAFE_C)
    out = sweep(tmp_path / "nothing", checkout, {})
    assert {"forkpkg._a", "forkpkg._b"} <= set(out["loaded"]), out["failed"]
    assert out["loaded_in_fork"] == 0 and out["failed"] == []


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_a_package_whose_import_fails_fails_each_module_with_the_fresh_error(
        tmp_path: Path) -> None:
    checkout = package_of_two(tmp_path, "brokenpkg",
                              "raise ImportError('brokenpkg needs libfoo 2')\n",
                              "int op(void) { return 1; }\n")
    out = sweep(tmp_path / "nothing", checkout, {})
    failed = {r["module"]: r["error"] for r in out["failed"]}
    assert set(failed) == {"brokenpkg._a", "brokenpkg._b"}
    assert all("brokenpkg needs libfoo 2" in e for e in failed.values())
