"""Diagnosis classes from a real VisionMamba run that got every verdict right and the why wrong.

Each on real breakage where this machine allows it: the native-extension
sweep's probe runs under this host's interpreter over real packages (scipy's
private modules, Pillow's Tk binding with Tk made unimportable, a real
compiled library inside a package, healthy and broken); pyright runs for the
shim-blame case; the torchvision error is the verbatim line of the run.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_reb.evidence import diagnose
from pytest_reb.pyramid.ext_sweep import summarise
from pytest_reb.targets import PROBES_DIR

PROBE = PROBES_DIR / "ext_probe.py"
CC = shutil.which("cc") or shutil.which("gcc")


def sweep(checkout: Path, *, pythonpath: str | None = None) -> dict:
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    spec = {"checkout": str(checkout), "per_module": 60, "deadline": 200, "jobs": 2}
    res = subprocess.run([sys.executable, str(PROBE), json.dumps(spec)], capture_output=True,
                         text=True, timeout=300, env=env)
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("REB_EXT_SWEEP "))
    return json.loads(line.split(" ", 1)[1])


def test_torchvision_ops_missing_is_a_torch_mismatch() -> None:
    line = "RuntimeError: operator torchvision::nms does not exist"
    [found] = diagnose.diagnose(f"Traceback (most recent call last):\n{line}\n", exit_code=1)
    assert found.cls == "abi_mismatch"
    assert "torchvision was built for another torch" in found.hint


def test_c0_hint_names_the_distribution_not_the_import() -> None:
    [d] = diagnose.missing_packages(["zeta", "einops"], {}, "/py")
    assert "install zetascale, einops" in d["hint"]
    # the environment's own metadata wins over the map and the guess
    [d] = diagnose.missing_packages(["zeta"], {}, "/py", {"zeta": ["zetascale-nightly"]})
    assert "zetascale-nightly" in d["hint"]


def test_tkinter_is_a_system_package_not_a_pip_one() -> None:
    [found] = diagnose.diagnose("ModuleNotFoundError: No module named 'tkinter'\n", exit_code=1)
    assert (found.cls, "python3-tk" in found.hint, "pip" in found.hint) == (
        "system_dependency", True, True)
    assert "not pip" in found.hint


def probe_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reb_ext_sweep_probe", PROBE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_private_scipy_module_and_pillow_without_tk_are_no_failures(tmp_path: Path) -> None:
    """Loaded one by one as the sweep does, in children of this interpreter."""
    pytest.importorskip("scipy.linalg")
    pil = pytest.importorskip("PIL")
    import scipy.linalg

    probe = probe_module()
    triu = next(Path(scipy.linalg.__file__).parent.glob("_matfuncs_sqrtm_triu.*.so"))
    imagingtk = next(Path(pil.__file__).parent.glob("_imagingtk.*.so"))
    no_tk = tmp_path / "no_tk" / "tkinter"  # what Debian's Python is without python3-tk
    no_tk.mkdir(parents=True)
    (no_tk / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'tkinter'\", name='tkinter')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(no_tk.parent)}
    rows = []
    for module, path in (("scipy.linalg._matfuncs_sqrtm_triu", triu),
                         ("PIL._imagingtk", imagingtk)):
        row = {"module": module, "path": str(path),
               **probe.load(module, str(path), "module", str(tmp_path), 120, env)}
        rows.append(row)
    triu_row, tk_row = rows
    assert triu_row["ok"] is True, triu_row  # alone it is a circular import; via its package
    assert "circular import" in triu_row["note"]
    assert tk_row["ok"] is False and "tkinter" in tk_row["error"]
    out = summarise({"loaded": [triu_row["module"]], "failed": [tk_row]})
    assert out["failed"] == []
    [tk] = out["optional_missing"]
    assert tk["module"] == "PIL._imagingtk" and "python3-tk" in tk["hint"]


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_a_plain_library_in_a_package_is_loaded_and_its_breakage_seen(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    pkg = checkout / "opsx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (checkout / "main.py").write_text("import opsx\n")
    src = tmp_path / "ops.c"
    src.write_text("int reb_op(void) { return 1; }\n")
    subprocess.run([str(CC), "-shared", "-fPIC", "-o", str(pkg / "_C.so"), str(src)], check=True)
    # a second one linked against a library that is not there (a build for another torch)
    subprocess.run([str(CC), "-shared", "-fPIC", "-o", str(tmp_path / "libgone.so"), str(src)],
                   check=True)
    subprocess.run([str(CC), "-shared", "-fPIC", "-o", str(pkg / "_broken.so"), str(src),
                    "-Wl,--no-as-needed", f"-L{tmp_path}", "-lgone"], check=True)
    (tmp_path / "libgone.so").unlink()
    obs = sweep(checkout)
    assert "opsx._C" in obs["loaded"]
    [broken] = [r for r in obs["failed"] if r["module"] == "opsx._broken"]
    assert broken["kind"] == "library" and "libgone.so" in broken["error"]
    [row] = summarise(obs)["failed"]
    assert row["class"] in ("system_dependency", "abi_mismatch")


def test_c0_names_the_distribution_and_the_repositorys_file(tmp_path: Path,
                                                            bare_python: str) -> None:
    """Real pyright on a VisionMamba-shaped tree: the hint says zetascale for ``import zeta``,
    and the missing einops is the repository's (our shim folder is never C0's to count)."""
    from support.c0 import local_ctx
    from support.repomodules import write_tree

    from pytest_reb.pyramid.c0_imports import imports_total, probe

    repo = write_tree(tmp_path / "repo", {
        "benchmark_scripts/vim_patch.py": "import einops_absent_xyz\n",
        "vim/models_mamba.py": "import os\nimport einops_absent_xyz\nimport zeta\n",
    })
    o = probe(local_ctx(repo, bare_python, total=imports_total(repo)))
    where = o.evidence["missing_where"]
    assert where["einops_absent_xyz"].endswith("vim/models_mamba.py:2"), where
    [d] = o.diagnosis
    assert "zetascale" in d["hint"] and "install zeta," not in d["hint"]


def test_a_missing_dependency_is_blamed_on_the_repositorys_file(tmp_path: Path) -> None:
    """Real tracebacks: our shim (in benchmark_scripts/) runs the repository, which imports a
    module that is not installed; and a shim that imports it first, before the repository."""
    repo = tmp_path / "repo"
    (repo / "vision_mamba").mkdir(parents=True)
    (repo / "vision_mamba" / "__init__.py").write_text("from .model import Vim\n")
    (repo / "vision_mamba" / "model.py").write_text("import os\nimport einops_absent_xyz\n")
    (repo / "benchmark_scripts").mkdir()
    (repo / "benchmark_scripts" / "good.py").write_text(
        "import vision_mamba\nimport einops_absent_xyz\n")
    (repo / "benchmark_scripts" / "early.py").write_text(
        "import einops_absent_xyz\nimport vision_mamba\n")
    for shim, blamed in (("good.py", 'vision_mamba/model.py", line 2'), ("early.py", None)):
        res = subprocess.run([sys.executable, f"benchmark_scripts/{shim}"], cwd=repo,
                             capture_output=True, text=True, env={"PYTHONPATH": str(repo)})
        [d] = diagnose.diagnose(res.stderr, exit_code=res.returncode)
        assert d.cls == "missing_package"
        assert all(line in res.stderr for line in d.evidence)  # verbatim lines only
        named = [line for line in d.evidence if line.startswith("File ")]
        assert [blamed in line for line in named] == ([True] if blamed else []), d.evidence
        assert not any("benchmark_scripts" in line for line in d.evidence)  # never the shim
