"""GPU architecture not in the build, on a real GPU (``--reb-host=local://``).

Skipped where torch sees no CUDA device or there is no nvcc (CI).  On a GPU
machine without an installed pytest-reb, run it with ``-p pytest_reb.plugin.hooks``
and this tree on ``PYTHONPATH`` (as ``docs/gpu_run.sh`` does).

Two CUDA extension modules are compiled here with nvcc, one for sm_75 only
(machine code, no PTX: a card newer than Turing cannot run it) and one for the
card's own architecture.  C2's native-extension sweep must list both
modules' architectures with cuobjdump and flag the first against the card;
a C3 entrypoint that launches its kernel fails with the driver's own "no
kernel image" error and must be diagnosed ``gpu_arch``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.minirepo import commit_all

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.plugin import load_args

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device on this machine", allow_module_level=True)
NVCC = shutil.which("nvcc") or next(
    (p for p in ("/usr/local/cuda/bin/nvcc",) if Path(p).exists()), None)
if NVCC is None:
    pytest.skip("no nvcc to build a CUDA extension", allow_module_level=True)
if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
    pytest.skip("no Python.h for this interpreter", allow_module_level=True)

OLD_ARCH = "75"
MAJOR, MINOR = torch.cuda.get_device_capability(0)
CARD_ARCH = f"{MAJOR}{MINOR}"
if MAJOR < 8:
    pytest.skip(f"the card (sm_{CARD_ARCH}) could run sm_{OLD_ARCH} code", allow_module_level=True)

KERNEL = r"""
#include <Python.h>
#include <cuda_runtime.h>

__global__ void add_one(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

static PyObject *run(PyObject *self, PyObject *args) {
    float *d = NULL;
    int n = 256;
    cudaError_t e = cudaMalloc(&d, n * sizeof(float));
    if (e == cudaSuccess) {
        add_one<<<1, 256>>>(d, n);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        cudaFree(d);
    }
    if (e != cudaSuccess) {
        PyErr_Format(PyExc_RuntimeError, "CUDA error: %s", cudaGetErrorString(e));
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"run", run, METH_NOARGS, "launch the kernel"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_k", NULL, -1, methods};
PyMODINIT_FUNC PyInit__k(void) { return PyModule_Create(&module); }
"""

MAIN = """\
import torch
from old_arch import _k

x = torch.ones(8, device="cuda")
print("torch on the GPU:", float(x.sum()))
_k.run()
print("kernel ran")
"""


def build(checkout: Path, package: str, arch: str) -> None:
    (checkout / package).mkdir()
    (checkout / package / "__init__.py").write_text("")
    source = checkout / f"{package}.cu"
    source.write_text(KERNEL)
    out = checkout / package / f"_k{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run([NVCC, "-shared", "-Xcompiler", "-fPIC", "-O2",
                    f"-gencode=arch=compute_{arch},code=sm_{arch}",
                    f"-I{sysconfig.get_paths()['include']}", "-o", str(out), str(source)],
                   check=True)
    source.unlink()


@pytest.fixture
def outcomes(pytester: pytest.Pytester, tmp_path: Path) -> dict[str, Outcome]:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    build(checkout, "old_arch", OLD_ARCH)
    build(checkout, "new_arch", CARD_ARCH)
    (checkout / "main.py").write_text(MAIN)
    (checkout / "check_new.py").write_text("from new_arch import _k\n\n_k.run()\n")
    commit = commit_all(checkout)  # a real checkout: the integrity verdict fails closed on a folder
    pytester.makepyfile(test_archcheck=(
        "from pytest_reb import Repo, Run\n"
        f"repo = Repo('reb/archcheck', commit='{commit}', imports_total=3,\n"
        "            single_gpu=Run(['{python}', 'main.py'], timeout=300,\n"
        "                           env={'CUDA_VISIBLE_DEVICES': '0'}))\n"))
    result = pytester.runpytest(*load_args(), "--rootdir", str(pytester.path),
                                "--reb-host", "local://", "--reb-python", sys.executable,
                                "--reb-repo-dir", str(checkout), "--reb-repo", "reb/archcheck",
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-m", "c2 or c3", "-p", "no:cacheprovider",
                                "--reb-ext-sweep=always")  # C3 runs the code: auto sweeps not
    print(result.stdout.str()[-4000:])
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    return {o.tier: o for o in OutcomeLog(log).latest().values()}


def test_missing_architecture_is_found_by_the_sweep_and_diagnosed_on_c3(
        outcomes: dict[str, Outcome]) -> None:
    c3 = outcomes["c3"]
    print("C3", c3.status, c3.category, c3.message, c3.diagnosis)
    assert c3.status == "failed"
    first = c3.diagnosis[0]
    assert first["class"] == "gpu_arch", c3.diagnosis
    assert any("no kernel image is available" in line for line in first["evidence"])

    sweep = outcomes["c2"].evidence["native_extensions"]
    print("C2", outcomes["c2"].status, outcomes["c2"].message)
    print("sweep", {k: v for k, v in sweep.items() if k != "imports_without_distribution"})
    assert sweep["ran"] and sweep["cuobjdump"], sweep
    archs = {row["module"]: row for row in sweep["device_code"]}
    card = f"{MAJOR}.{MINOR}"
    assert archs["old_arch._k"]["archs"] == [f"sm_{OLD_ARCH}"]
    assert archs["old_arch._k"]["supported"] is False
    assert archs["old_arch._k"]["unsupported_cards"] == [card]
    assert archs["new_arch._k"]["archs"] == [f"sm_{CARD_ARCH}"]
    assert archs["new_arch._k"]["supported"] is True
    [flagged] = [f for f in sweep["failed"] if f["module"] == "old_arch._k"]
    assert flagged["class"] == "gpu_arch"
    assert not [f for f in sweep["failed"] if f["module"] == "new_arch._k"]
