"""Images in which each root-cause fault really happens (a helper of the tests, not collected).

Each is the demo image (a venv with torch and PyYAML, the repository at the
official path, a report) plus one real breakage, made the way it happens to
agents: a compiled module deleted, a shared library an extension links
against removed, a library "upgraded" to a version without a symbol an
extension imports, a package forced past another's pin, a program the code
calls that is not installed, a run that needs more memory than it is given.
Nothing is simulated: the error a run prints is what the loader, pip or
Python really print.

The images have no compiler, so the C code is compiled here on the host
(gcc, this interpreter's headers) against the limited API of 3.11, which
the image's CPython 3.11 loads whatever the host's minor version.  Wheels
are assembled here too (a wheel is a zip with a RECORD) and installed in
the image by its own pip, offline.  Images are tagged
``reb-test-<fault>:<hash of the recipe>`` and reused while the recipe holds.

    cd tests && python -m support.breakage capture   # build the images, capture each fault's output
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.imagebuild import ensure_image

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / ".cache" / "locks"
ENV = "/opt/envs/tinynet"
SITE = f"{ENV}/lib/python3.11/site-packages"
REPO = "/data/project/repo"
#: What each fault's entrypoint printed, captured from its image (``capture`` rewrites them).
CAPTURED = Path(__file__).resolve().parents[1] / "data" / "breakage"

# --------------------------------------------------------------------------- C sources

#: The shared library extensions link against, as first released ...
TINYBLAS_V1 = r"""
double tb_dot_v1(const double *a, const double *b, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
"""
#: ... and its next release, which renamed the entry point (same SONAME: an ABI break).
TINYBLAS_V2 = r"""
double tb_dot(const double *a, const double *b, long n, long stride) {
    double s = 0.0;
    for (long i = 0; i < n; i += stride) s += a[i] * b[i];
    return s;
}
"""
#: ``rebdot._dot``: a C extension calling the library (limited API, loads on any 3.11+).
DOT_EXTENSION = r"""
#define Py_LIMITED_API 0x030B0000
#include <Python.h>
#include <stdlib.h>

double tb_dot_v1(const double *a, const double *b, long n);

static PyObject *dot(PyObject *self, PyObject *args) {
    PyObject *x, *y;
    if (!PyArg_ParseTuple(args, "OO", &x, &y)) return NULL;
    Py_ssize_t n = PyList_Size(x);
    if (n < 0 || PyList_Size(y) != n) {
        PyErr_SetString(PyExc_ValueError, "two lists of one length");
        return NULL;
    }
    double *a = malloc(sizeof(double) * (n + 1)), *b = malloc(sizeof(double) * (n + 1));
    for (Py_ssize_t i = 0; i < n; i++) {
        a[i] = PyFloat_AsDouble(PyList_GetItem(x, i));
        b[i] = PyFloat_AsDouble(PyList_GetItem(y, i));
    }
    double s = tb_dot_v1(a, b, (long)n);
    free(a);
    free(b);
    return PyFloat_FromDouble(s);
}

static PyMethodDef methods[] = {{"dot", dot, METH_VARARGS, "dot product"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dot", NULL, -1, methods};
PyMODINIT_FUNC PyInit__dot(void) { return PyModule_Create(&module); }
"""

# --------------------------------------------------------------------------- entrypoints

#: Scripts put into the checkout, as a repository's own tools would be.
SCRIPTS = {
    "tools/stats.py": "import numpy as np\n\nprint('mean', np.arange(10).mean())\n",
    "tools/dot.py": "from rebdot import dot\n\nprint('dot', dot([1.0, 2.0], [3.0, 4.0]))\n",
    "tools/plugin.py": "import rebplugin\n\nprint(rebplugin.describe())\n",
    "tools/make_clip.py": (
        "\"\"\"Render a one-second test tone to WAV, as audio repositories do with ffmpeg.\"\"\"\n"
        "import subprocess\n\n"
        "subprocess.run(['ffmpeg', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1',\n"
        "                '/tmp/tone.wav'], check=True)\n"
        "print('tone written')\n"),
    "tools/hog.py": (
        "\"\"\"Materialise a 2 GiB tensor: far more than the run's memory limit.\"\"\"\n"
        "import torch\n\n"
        "x = torch.ones(1 << 29)\n"
        "print('sum', float(x.sum()))\n"),
}

# --------------------------------------------------------------------------- wheels


def wheel(name: str, version: str, files: Mapping[str, bytes], *, requires: Sequence[str] = (),
          tag: str = "py3-none-any") -> tuple[str, bytes]:
    """A wheel file (name, bytes): the files, METADATA, WHEEL and a RECORD with hashes."""
    info = f"{name}-{version}.dist-info"
    meta = "".join([f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                    *(f"Requires-Dist: {r}\n" for r in requires)])
    pure = "true" if tag.endswith("none-any") else "false"
    members = {**files, f"{info}/METADATA": meta.encode(),
               f"{info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: reb-tests\n"
                                 f"Root-Is-Purelib: {pure}\nTag: {tag}\n").encode(),
               f"{info}/top_level.txt": f"{name}\n".encode()}
    record = []
    for path, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in members.items():
            zi = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, data)
    return f"{name}-{version}-{tag}.whl", buf.getvalue()


def compiler_problem() -> str | None:
    """Why the C parts cannot be built on this host, or None."""
    if shutil.which("gcc") is None:
        return "gcc is not installed on the host"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return f"Python.h is missing from {sysconfig.get_paths()['include']}"
    return None


def gcc(out: Path, source: str, *args: str) -> bytes:
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(out), str(src), *args],
                   check=True, capture_output=True)
    return out.read_bytes()


def native_parts() -> dict[str, bytes]:
    """libtinyblas v1 and v2 (SONAME libtinyblas.so.1) and the rebdot wheel built against v1."""
    with tempfile.TemporaryDirectory(prefix="reb-breakage-") as tmp:
        d = Path(tmp)
        (d / "v1").mkdir()
        (d / "v2").mkdir()
        soname = "-Wl,-soname,libtinyblas.so.1"
        v1 = gcc(d / "v1" / "libtinyblas.so.1", TINYBLAS_V1, soname)
        v2 = gcc(d / "v2" / "libtinyblas.so.1", TINYBLAS_V2, soname)
        ext = gcc(d / "_dot.abi3.so", DOT_EXTENSION, f"-I{sysconfig.get_paths()['include']}",
                  f"-L{d / 'v1'}", "-l:libtinyblas.so.1")
    name, data = wheel("rebdot", "1.0", {"rebdot/__init__.py": b"from rebdot._dot import dot\n",
                                         "rebdot/_dot.abi3.so": ext},
                       tag="cp311-abi3-linux_x86_64")
    return {"lib/v1/libtinyblas.so.1": v1, "lib/v2/libtinyblas.so.1": v2, f"wheels/{name}": data}


def pure_wheels() -> dict[str, bytes]:
    """rebcore 1.0 and 2.0 (2.0 removed ``legacy_api``), and rebplugin pinning rebcore==1.0."""
    out = {}
    for name, version, files, requires in (
        ("rebcore", "1.0", {"rebcore/__init__.py": b"def legacy_api():\n    return 'v1'\n"}, ()),
        ("rebcore", "2.0", {"rebcore/__init__.py": b"def new_api():\n    return 'v2'\n"}, ()),
        ("rebplugin", "1.0", {"rebplugin/__init__.py": (
            b"from rebcore import legacy_api\n\n\ndef describe():\n"
            b"    return 'plugin on ' + legacy_api()\n")}, ("rebcore==1.0",)),
    ):
        wname, data = wheel(name, version, files, requires=requires)
        out[f"wheels/{wname}"] = data
    return out


# --------------------------------------------------------------------------- the faults

PIP = f"{ENV}/bin/pip install --no-index --find-links /tmp/wheels --no-cache-dir " \
      "--disable-pip-version-check -q"


@dataclass(frozen=True)
class Fault:
    """One broken image: what breaks it (Dockerfile lines), what runs, what it must be."""

    name: str
    steps: str
    argv: Sequence[str]
    expect: str  # the root-cause class the failed run must get first
    parts: str = ""  # "native", "pure" or "" (which host-made files the build needs)
    memory: str | None = None  # --reb-memory for the run
    sweep: Mapping[str, Any] = field(default_factory=dict)  # what C2's sweep must report


FAULTS: dict[str, Fault] = {f.name: f for f in (
    Fault("ext-deleted", f"RUN rm {SITE}/numpy/_core/_multiarray_umath.cpython-311-*.so",
          ["{python}", "tools/stats.py"], "native_extension",
          sweep={"module": "numpy._core._multiarray_umath", "class": "native_extension"}),
    Fault("lib-removed",
          "COPY lib/v1/libtinyblas.so.1 /usr/local/lib/\n"
          f"RUN ldconfig && {PIP} rebdot && rm /usr/local/lib/libtinyblas.so.1 && ldconfig",
          ["{python}", "tools/dot.py"], "system_dependency", parts="native",
          sweep={"module": "rebdot._dot", "class": "system_dependency"}),
    Fault("symbol-gone",
          "COPY lib/v1/libtinyblas.so.1 /usr/local/lib/\n"
          f"RUN ldconfig && {PIP} rebdot\n"
          "COPY lib/v2/libtinyblas.so.1 /usr/local/lib/\nRUN ldconfig",
          ["{python}", "tools/dot.py"], "abi_mismatch", parts="native",
          sweep={"module": "rebdot._dot", "class": "abi_mismatch"}),
    Fault("pin-conflict", f"RUN {PIP} rebplugin && {PIP} rebcore==2.0",
          ["{python}", "tools/plugin.py"], "version_conflict", parts="pure",
          sweep={"conflict": "rebplugin 1.0 has requirement rebcore==1.0, but you have "
                             "rebcore 2.0."}),
    Fault("no-ffmpeg", "", ["{python}", "tools/make_clip.py"], "system_dependency"),
    Fault("memory-hog", "", ["{python}", "tools/hog.py"], "out_of_memory", memory="512m"),
)}


def dockerfile(base: str, fault: Fault) -> str:
    lines = [f"FROM {base}"]
    if fault.parts:
        lines.append("COPY wheels/ /tmp/wheels/")
    if fault.steps:
        lines.append(fault.steps)
    if fault.parts:
        lines.append("RUN rm -rf /tmp/wheels")
    lines.append(f"RUN rm -rf {REPO}")
    lines.append(f"COPY repo/ {REPO}/")
    lines.append(f"COPY fault {FAULT_FILE}")
    return "\n".join(lines) + "\n"


#: Where a fault image names the tool its ``entry.py`` runs (outside the checkout).
FAULT_FILE = "/etc/reb-fault"
#: ``entry.py``: the same entrypoint, the same file, in every fault image.
ENTRY = ('"""The entrypoint of every fault image: the tool its image names."""\n'
         f"import runpy\n\nrunpy.run_path(open({FAULT_FILE!r}).read().strip(), "
         "run_name='__main__')\n")


@functools.cache
def checkout() -> tuple[tuple[tuple[str, bytes], ...], str]:
    """The fault images' checkout, as (path, bytes) pairs under ``repo/``, and its commit.

    The demo's checkout with the tools and ``entry.py`` committed on top: one commit in
    every fault image, so one repository module, pinned at it, runs every image of a run
    as one of the 44 modules runs every agent's image, and the integrity verdict finds
    the checkout at its pinned commit.
    """
    from support.checkouts import committed_demo

    def add_tools(root: Path) -> None:
        for path, text in {**SCRIPTS, "entry.py": ENTRY}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)

    files, _, commit = committed_demo("tools of the fault images", add_tools)
    return tuple(files.items()), commit


def ensure_fault_image(client: Any, base: str, fault: Fault) -> str:
    """The tag of ``fault``'s image on top of ``base`` (the demo image), built if missing."""
    docker_file = dockerfile(base, fault)
    files_in_repo, commit = checkout()
    recipe = json.dumps([client.images.get(base).id, docker_file, commit, fault.argv[1],
                         TINYBLAS_V1,
                         TINYBLAS_V2, DOT_EXTENSION, fault.parts, pure_wheels_recipe()])
    tag = f"reb-test-{fault.name}:{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"

    def files() -> dict[str, bytes]:
        made = {"Dockerfile": docker_file.encode(), "fault": fault.argv[1].encode(),
                **dict(files_in_repo)}
        if fault.parts == "native":
            problem = compiler_problem()
            if problem:
                raise RuntimeError(f"cannot build {tag}: {problem}")
            made.update(native_parts())
        elif fault.parts == "pure":
            made.update(pure_wheels())
        return made

    return ensure_image(client, tag, files, locks=LOCKS, labels={"reb.test.fault": fault.name})


def pure_wheels_recipe() -> str:
    """The pure wheels' content, stable across builds (their zip bytes are deterministic)."""
    return hashlib.sha256(b"".join(pure_wheels().values())).hexdigest()


def capture(client: Any, base: str, fault: Fault) -> dict[str, Any]:
    """Run the fault's entrypoint in a plain container (as the tiers do) and return its output."""
    from pytest_reb.targets import DockerTarget, Limits

    tag = ensure_fault_image(client, base, fault)
    target = DockerTarget(tag, run_id="capture", gpus=[],
                          limits=Limits(memory=fault.memory or "2g", pids=512))
    try:
        argv = [f"{ENV}/bin/python" if a == "{python}" else a for a in fault.argv]
        res = target.exec(argv, timeout=120, cwd=REPO)
    finally:
        target.close()
    return {"image": tag, "exit_code": res.exit_code, "oom_killed": res.oom_killed,
            "timed_out": res.timed_out, "output": res.output}


def main(argv: Sequence[str]) -> int:
    import docker

    from pytest_reb.loop.demo.images import ensure_demo_image

    if argv[:1] != ["capture"]:
        print(__doc__)
        return 2
    client = docker.from_env()
    base = ensure_demo_image(client, "good")
    CAPTURED.mkdir(parents=True, exist_ok=True)
    for fault in FAULTS.values():
        seen = capture(client, base, fault)
        print(seen.pop("image"), fault.name, seen["exit_code"])
        record = {"fault": fault.name, "argv": list(fault.argv), "memory": fault.memory, **seen}
        (CAPTURED / f"{fault.name}.json").write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
