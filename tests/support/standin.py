"""A stand-in CUDA runtime for the witness's launch attribution on a machine without a GPU.

``libstandin_cudart.so`` defines ``cudaLaunchKernel`` and ``cuLaunchKernel`` (and hands out the
latter through ``cuGetProcAddress_v2``, as the real driver does); ``libstandin_op.so``, like a
framework's kernel library, calls them through its PLT (the path torch's own kernels take);
``libstandin_dl.so`` finds them at run time (Triton's launcher, cuBLAS).  Python reaches them
through ``standin_gpu`` with ``ctypes``, the way a framework's extension module would.
``run`` runs a command under the witness, watched by the host's observer as a target watches a
stage, and returns what the host and the record saw with the attribution verdict.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from pytest_reb import witness
from support.watched import watched

LIB = witness.library_path()
CC = shutil.which("cc") or shutil.which("gcc")

RUNTIME = r"""
typedef struct { unsigned int x, y, z; } dim3;
static int n;
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **a, unsigned long s, void *st) {
    (void)f; (void)a; (void)s; (void)st;
    n++;
    return (g.x == 7 && b.z == 9) ? 0 : 1; /* arguments arrive as given */
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void *st, void **p, void **e) {
    (void)f; (void)gy; (void)gz; (void)bx; (void)by; (void)sh; (void)st; (void)p; (void)e;
    n++;
    return (gx == 7 && bz == 9) ? 0 : 1;
}
int launched(void) { return n; }
/* the driver hands out its launch entry point at run time, as the real one does */
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long flags,
                        void *status) {
    (void)version; (void)flags; (void)status;
    if (symbol[0] == 'c' && symbol[1] == 'u' && symbol[2] == 'L') {
        *pfn = (void *)cuLaunchKernel;
        return 0;
    }
    *pfn = 0;
    return 500;
}
"""
OP = r"""
typedef struct { unsigned int x, y, z; } dim3;
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **a, unsigned long s, void *st);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void *st, void **p, void **e);
int op(void) { dim3 g = {7, 1, 1}, b = {1, 1, 9}; return cudaLaunchKernel(0, g, b, 0, 0, 0); }
int driver_op(void) { return cuLaunchKernel(0, 7, 1, 1, 1, 1, 9, 0, 0, 0, 0); }
"""
#: Libraries that find the driver's entry points at run time (Triton's launcher, cuBLAS, the
#: CUDA runtime itself): by dlsym on a handle, and through cuGetProcAddress.
DL_OP = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
typedef int (*proc_fn)(const char *, void **, int, unsigned long, void *);
int dl_op(const char *runtime) {
    void *h = dlopen(runtime, RTLD_LAZY | RTLD_LOCAL);
    launch_fn f = h ? (launch_fn)dlsym(h, "cuLaunchKernel") : 0;
    return f ? f(0, 7, 1, 1, 1, 1, 9, 0, 0, 0, 0) : 99;
}
int proc_op(const char *runtime) {
    void *h = dlopen(runtime, RTLD_LAZY | RTLD_LOCAL), *fn = 0;
    proc_fn get = h ? (proc_fn)dlsym(h, "cuGetProcAddress_v2") : 0;
    if (!get || get("cuLaunchKernel", &fn, 12000, 0, 0) != 0 || !fn)
        return 98;
    return ((launch_fn)fn)(0, 7, 1, 1, 1, 1, 9, 0, 0, 0, 0);
}
/* caller-relative lookups keep their meaning: the next definition after this library */
int next_is_libc(void) {
    return dlsym(RTLD_NEXT, "getpid") != 0 && dlsym(RTLD_DEFAULT, "getpid") != 0;
}
"""
#: What the entrypoint and the hooks import to launch: a framework's extension, in short.
GPU_MODULE = """\
import ctypes, os
_lib = ctypes.CDLL(os.path.join(os.environ["STANDIN_LIBS"], "libstandin_op.so"))
_rt = ctypes.CDLL(os.path.join(os.environ["STANDIN_LIBS"], "libstandin_cudart.so"))


def launch():
    assert _lib.op() == 0, "arguments reached the runtime changed"


def launch_driver():
    assert _lib.driver_op() == 0


def launched():
    return _rt.launched()


_dl = ctypes.CDLL(os.path.join(os.environ["STANDIN_LIBS"], "libstandin_dl.so"))
_runtime = os.path.join(os.environ["STANDIN_LIBS"], "libstandin_cudart.so").encode()


def launch_found_at_run_time():
    assert _dl.dl_op(_runtime) == 0 and _dl.proc_op(_runtime) == 0
    assert _dl.next_is_libc() == 1
"""


def build(where: Path) -> Path:
    """The stand-in runtime and the op library linked against it, and ``standin_gpu``, built
    into ``where``."""
    (where / "rt.c").write_text(RUNTIME)
    (where / "op.c").write_text(OP)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(where / "libstandin_cudart.so"),
                    str(where / "rt.c")], check=True)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(where / "libstandin_op.so"),
                    str(where / "op.c"), f"-L{where}", "-lstandin_cudart",
                    "-Wl,-rpath,$ORIGIN"], check=True)
    (where / "dl.c").write_text(DL_OP)
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(where / "libstandin_dl.so"),
                    str(where / "dl.c"), "-ldl"], check=True)
    site = where / "site"
    site.mkdir()
    (site / "standin_gpu.py").write_text(GPU_MODULE)
    return where


class Watched(NamedTuple):
    """A command run under the witness: its output, its processes as the host and the record
    saw them, what it was held to, and the two verdicts (None: granted)."""

    res: subprocess.CompletedProcess[str]
    procs: dict[int, witness.Process]
    expect: witness.Expect
    finish: str | None  # witness.judge: the entrypoint seen run to its end (C1)
    attribution: str | None  # witness.attribution: the GPU work the run's own (C3/C4)


def stage(libs: Path, repo: Path, argv: list[str], *, hooks: Path | None = None,
          nproc: int = 1, entrypoint: str | None = None, timeout: float = 60) -> Watched:
    """``argv`` under the witness in ``repo``, watched by the host's observer as a target
    watches a stage."""
    record = repo.parent / f"{repo.name}-witness.log"
    record.unlink(missing_ok=True)
    exp = witness.expect(argv, python=sys.executable, entrypoint=entrypoint, checkout=str(repo),
                         cwd=str(repo), nproc=nproc, ranks=nproc > 1, server=False,
                         stopped=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REB_"))}
    path = [str(libs / "site")] + ([str(hooks)] if hooks else [])
    env.update(STANDIN_LIBS=str(libs), PYTHONPATH=os.pathsep.join(path),
               **witness.env_vars(str(LIB), str(record), exp.entries, None, str(repo),
                                  witness.stops_for(exp)))
    res, procs = watched(argv, repo, env, str(LIB), record, timeout)
    return Watched(res, procs, exp, witness.judge(exp, procs), witness.attribution(exp, procs))


def run(libs: Path, repo: Path, argv: list[str], *, hooks: Path | None = None,
        nproc: int = 1) -> tuple[subprocess.CompletedProcess[str], dict[int, witness.Process],
                                 str | None]:
    """``stage``'s output, processes and attribution verdict."""
    seen = stage(libs, repo, argv, hooks=hooks, nproc=nproc)
    return seen.res, seen.procs, seen.attribution


def repo_with(tmp_path: Path, train: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(train)
    return repo


def hook_dir(tmp_path: Path, sitecustomize: str) -> Path:
    """Startup code: a ``sitecustomize`` on the path, as an image's PYTHONPATH would put it."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(sitecustomize)
    return hooks


