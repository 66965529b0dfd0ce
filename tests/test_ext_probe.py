"""The extension sweep counts what the C2 probe already loaded, and loads only the rest.

Each compiled module is loaded in an interpreter of its own, so on a torch
environment every one of torch's costs an ``import torch``: the largest part of
the sweep's time, spent proving again what the CUDA probe's own ``import torch``
had just shown.  The probe now lists the compiled modules it loaded, with their
real paths; the sweep takes those as loaded only for the same file, and loads
every other one as before.  Both probes run here for real, under this host's
interpreter, with a stand-in ``torch`` package that loads a real compiled module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pydantic_core._pydantic_core as compiled
import pytest

from pytest_reb.targets import marked_json
from pytest_reb.tiers import ext_sweep

PROBES = Path(__file__).resolve().parents[1] / "pytest_reb" / "tiers" / "probes"
MODULE = "pydantic_core._pydantic_core"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A ``torch`` stand-in whose import loads a real compiled module, as torch's does."""
    torch = tmp_path / "site" / "torch"
    torch.mkdir(parents=True)
    (torch / "__init__.py").write_text(
        "import pydantic_core._pydantic_core\n__version__ = '2.4.0'\n"
        "class version:\n    cuda = None\n"
        "class cuda:\n    is_available = staticmethod(lambda: False)\n"
        "    device_count = staticmethod(lambda: 0)\n")
    return torch.parent


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
