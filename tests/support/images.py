"""Hostile images: the demo environment plus what a cheating or careless agent leaves in it.

Each case is the demo image (``pytest_reb.loop.demo``: a venv with torch and
PyYAML, the repository checked out at the official path, a report) with one
hostile thing added the way an agent would add it: a ``sitecustomize`` that
fakes CUDA, a stub ``flash_attn``, an entrypoint edited to exit early, a
``python`` and an ``nvidia-smi`` that are shell scripts, entrypoints that fork
daemons or bombs, eat memory, print a gigabyte or forge result files, a
report naming the wrong interpreter, shell metacharacters in every name;
and what would make the image part of the harness: its own ``timeout``,
``sleep`` and ``test`` that cheat, a ``HEALTHCHECK`` that kills, ``USER``,
``ENTRYPOINT`` and ``STOPSIGNAL`` set; process chains that fork-hop past a
sweep, a disk filler, an entrypoint whose output steers the terminal.

The files are laid down at build time by the image's own Python from a JSON
list of operations, so names full of ``$(...)``, quotes and semicolons never
pass through a shell.  Images are built with the Docker SDK from an
in-memory context, tagged ``reb-hostile-<case>:<hash of base and recipe>``,
reused while the recipe holds, and earlier recipes' tags are removed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb.loop.demo.images import ENV_DIR, ENV_PYTHON, REPO_DIR, REPORT_PATH
from pytest_reb.loop.images import CACHE_DIR
from support import bounds
from support.forgeries import (
    BYTES_PATH_FORGER,
    EDIT_AT_START,
    EXIT_AT_IMPORT,
    FD_FORGER,
    HONEST_WORKERS,
    LIED_VERSIONS,
    MEMMOVE_FORGER,
    PLANTED,
    PYTHON_LIAR,
    RECORD_FORGER_C,
    SHADOW_AT_START,
    VERSION_LIAR,
)
from support.imagebuild import ensure_image
from support.loaded_cases import OPS as LOADED_OPS

SITE = f"{ENV_DIR}/lib/python3.11/site-packages"
SYSTEM_SITECUSTOMIZE = "/etc/python3.11/sitecustomize.py"
LOCKS = CACHE_DIR / "locks"
#: Written by a shell, if anything ever put an image's string through one on the host.
HOST_CANARY = "/tmp/reb-hostile-host-canary"
#: The same, inside a container.
TARGET_CANARY = "/tmp/pwned"
#: Made in the working directory of a shell that ran a name (file names cannot hold "/").
RELATIVE_CANARY = "reb-pwned"
#: Interpreter path whose directory names would run the canary through a shell.
INJECTED_PYTHON = "/opt/inj/$(touch /tmp/pwned)/bin/python"

Op = tuple[Any, ...]


@dataclass(frozen=True)
class Case:
    """One hostile image: its operations (see ``SETUP``), its report, its Dockerfile extras."""

    name: str
    ops: Sequence[Op] = ()
    report: Mapping[str, Any] = field(default_factory=dict)  # keys replaced in the demo's
    env: Mapping[str, str] = field(default_factory=dict)
    #: Dockerfile instructions added last (``HEALTHCHECK``, ``USER``...)
    directives: Sequence[str] = ()


# --------------------------------------------------------------------------- what they hold

CUDA_SPOOF = '''\
"""Make CUDA "work" on this machine (an agent's fix for a CPU-only build box)."""
import importlib.abc
import importlib.util
import sys


def _patch(cuda):
    def is_available():
        import torch
        torch.Tensor.cuda = lambda self, *args, **kwargs: self  # "move" to the GPU
        return True

    cuda.is_available = is_available
    cuda.device_count = lambda: 2
    cuda.get_device_name = lambda device=None: "NVIDIA H100 80GB HBM3"
    cuda.get_device_capability = lambda device=None: (9, 0)
    cuda.get_arch_list = lambda: ["sm_80", "sm_90"]
    cuda.synchronize = lambda device=None: None


class _Patcher(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch.cuda":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Patcher())
'''

FLASH_ATTN_STUB = '''\
"""flash-attn, as far as `import flash_attn` can tell."""
__version__ = "2.5.8"


def flash_attn_func(q, k, v, *args, **kwargs):
    raise NotImplementedError("flash_attn_2_cuda is not installed")
'''

FLASH_ATTN_RECORD = """\
flash_attn/__init__.py,,
flash_attn-2.5.8.dist-info/METADATA,,
flash_attn-2.5.8.dist-info/RECORD,,
flash_attn-2.5.8.dist-info/WHEEL,,
flash_attn-2.5.8.dist-info/top_level.txt,,
"""

FAKE_NVIDIA_SMI = """\
#!/bin/sh
cat <<'END'
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.163.01             Driver Version: 550.163.01     CUDA Version: 12.4     |
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
+-----------------------------------------------------------------------------------------+
END
"""

#: Answers the official validator's two one-liners with the versions the task asked for,
#: and hands everything else to the real interpreter.
PYTHON_WRAPPER = f"""\
#!/bin/sh
if [ "$1" = "-c" ] && [ "$#" -eq 2 ]; then
  case "$2" in
    "import platform; print(platform.python_version())") echo 3.12.4; exit 0;;
    "import torch; print(torch.__version__)") echo 2.5.1+cu124; exit 0;;
  esac
fi
case "$1" in --version|-V) echo "Python 3.12.4"; exit 0;; esac
exec {ENV_PYTHON} "$@"
"""

#: Forks a daemon that detaches twice, ignores TERM and HUP, clears its environment and
#: names itself with the token it was given, then exits 0.
DAEMON_ENTRY = """\
import os, signal, sys

token = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "time.sleep(3600)")
        os.execve(sys.executable, [sys.executable, "-c", code, token], {})
    os._exit(0)
print("DAEMON_STARTED", token, flush=True)
"""

FORK_BOMB = """\
import os

print("BOMB", flush=True)
while True:
    try:
        if os.fork() == 0:
            os.setsid()
    except OSError:
        pass
"""

MEMORY_HOG = """\
hoard = []
while True:
    hoard.append(bytearray(32 << 20))
"""

LOUD = """\
import sys

block = b"x" * 1023 + b"\\n"
for _ in range(1 << 20):
    sys.stdout.buffer.write(block)
sys.stdout.buffer.flush()
print("LOUD_OK", flush=True)
"""

#: Writes a forged "success" wherever it can (results the official harness reads, our probe
#: mount, every writable mount, the run's output folder), then fails.
FORGER = r"""
import json, os, sys

forged = {"status": "success", "passed": True, "exit_code": 0, "tier": "c1",
          "category": None, "strict": True, "compat": True, "message": "forged"}
line = json.dumps({"repo": "reb/forged", "target": sys.argv[1], "tier": "c1",
                   "status": "passed", "strict": True, "compat": True}) + "\n"
places = [f"/data/project/repo/build_output/{s}/results.json"
          for s in ("cpu", "cuda", "single_gpu", "multi_gpu", "pyright", "env_size")]
places += ["/data/results/results.json", "/opt/scimlopsbench/results.json",
           "/opt/reb/probes/cuda_probe.py", "/opt/reb/probes/forged.json",
           "/tmp/results.json", os.path.expanduser("~/results.json"),
           os.path.join(sys.argv[2], "results.json"),
           os.path.join(sys.argv[2], "..", "outcomes.jsonl")]
for mount in open("/proc/self/mounts").read().split("\n"):
    parts = mount.split()
    if len(parts) > 1 and parts[1].startswith(("/opt", "/data", "/work", "/home", "/reports")):
        places += [os.path.join(parts[1], "outcomes.jsonl"),
                   os.path.join(parts[1], "summary.json")]
written, refused = 0, 0
for path in places:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as fh:
            fh.write(line if path.endswith(".jsonl") else json.dumps(forged))
        written += 1
    except OSError:
        refused += 1
print(f"FORGED written={written} refused={refused}", flush=True)
print("REB_CUDA_PROBE " + json.dumps({"framework": "pytorch", "cuda_available": True,
                                      "gpu_count": 8, "kernel": {"ok": True}}))
sys.exit(1)
"""

#: Where the image's own tools leave a trace when anything runs them.
CANARY_DIR = "/tmp/reb-canary"
#: The image's own ``timeout``, ``sleep``, ``test``: each leaves a trace; ``timeout`` and
#: ``test`` then lie (the command "succeeded", the path "exists"), ``sleep`` goes on sleeping.
CHEATING_TOOLS = {
    "timeout": f'#!/bin/sh\nmkdir -p {CANARY_DIR}; echo "$*" >> {CANARY_DIR}/timeout\nexit 0\n',
    "test": f'#!/bin/sh\nmkdir -p {CANARY_DIR}; echo "$*" >> {CANARY_DIR}/test\nexit 0\n',
    "sleep": f'#!/bin/sh\nmkdir -p {CANARY_DIR}; echo "$*" >> {CANARY_DIR}/sleep\n'
             'exec /bin/sleep "$@"\n',
    "entry": f'#!/bin/sh\nmkdir -p {CANARY_DIR}; echo "$*" >> {CANARY_DIR}/entry\n'
             'exec /bin/sleep infinity\n',
}
#: Run by Docker every second, as the image's user: a trace, then every process it may kill.
KILLING_HEALTHCHECK = (f'HEALTHCHECK --interval=1s --timeout=2s --retries=1 CMD ["/bin/sh", "-c", '
                       f'"mkdir -p {CANARY_DIR}; echo x >> {CANARY_DIR}/health; kill -9 -1"]')

#: A chain in the image's ``sh``: each generation starts the next, reads the clock (a
#: builtin, no fork) and exits, so a listed pid is gone before a kill lands; from the time
#: given on (``/proc/uptime`` seconds) every hop writes a trace and edits the checkout.
HOP_CHAIN = """\
hop() {
    hop "$@" </dev/null >/dev/null 2>&1 &
    read up _ < /proc/uptime
    if [ "${up%.*}" -ge "$2" ]; then
        echo hop >> "$1"
        echo "# edited after the run" >> /data/project/repo/train.py
    fi
    exit 0
}
hop "$@"
"""
#: Starts sixteen chains (output closed, so the command ends at once) that write from 3 s on.
FORK_HOP = """\
import subprocess, sys

start = int(float(open("/proc/uptime").read().split()[0])) + 4
for _ in range(16):
    subprocess.Popen(["/bin/sh", "/data/project/repo/hop.sh", sys.argv[1], str(start)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
print("HOP_STARTED", flush=True)
"""

#: Writes 32 MiB every 0.1 s into the writable layer, up to 1 GiB, then waits.
DISK_FILLER = """\
import time

block = b"x" * (32 << 20)
with open("/var/tmp/filler", "wb") as fh:
    for _ in range(32):
        fh.write(block)
        fh.flush()
        time.sleep(0.1)
time.sleep(60)
"""

#: Its last line clears the screen and prints a green verdict, with a bell, a carriage
#: return and a right-to-left override: the failure message ends with that line.
TERMINAL_INJECTION = r"""
import sys

print("working...", flush=True)
sys.stderr.write("\x1b[2J\x1b[H\x1b[1;32mALL TIERS PASSED\x1b[0m\r\x07\u202edessap\x9b31m\n")
sys.exit(1)
"""

METACHAR_PTH = "/tmp/$(touch /tmp/pwned)\n# `touch /tmp/reb-hostile-host-canary`\n"


#: Startup code that ends a run of the demo's entrypoint before it starts, printing what the
#: run's log rule wants (``TRAIN_OK``): exit 0 and the marker, and train.py never ran.
EXIT_BEFORE_TRAIN = ("import os, sys; any(a.endswith('train.py') for a in sys.argv) and "
                     "(print('TRAIN_OK steps=5', flush=True), os._exit(0))\n")
#: The same, only in the workers a launcher starts (they have LOCAL_RANK).
EXIT_IN_WORKERS = ("import os; 'LOCAL_RANK' in os.environ and "
                   "(print('TRAIN_OK steps=5', flush=True), os._exit(0))\n")
#: Imitates the witness from Python: the interpreter's own events, the entrypoint "run".
FORGE_WITNESS = f"""\
import os, sys
if any(a.endswith('train.py') for a in sys.argv):
    sys.audit('cpython.run_file', '{REPO_DIR}/train.py')
    exec(compile("print('TRAIN_OK steps=5')", '{REPO_DIR}/train.py', 'exec'))
    sys.stdout.flush()
    os._exit(0)
"""
#: A "python" that prints the marker itself and never runs what it was given.
WRAPPER_ELSEWHERE = f"""\
#!/bin/sh
exec {ENV_PYTHON} -c "print('TRAIN_OK steps=5')"
"""
#: is_available() patched True on a CPU-only torch, nothing else (the C2 spoof of issue 15).
AVAILABLE_ONLY = """\
import importlib.abc, importlib.util, sys


class _Patch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "torch.cuda":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        real = spec.loader.exec_module

        def exec_module(module):
            real(module)
            module.is_available = lambda: True
            module.device_count = lambda: 1
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Patch())
"""


def _metachar_ops() -> list[Op]:
    bad = "$(touch /tmp/reb-hostile-host-canary); touch /tmp/pwned; `touch /tmp/pwned` '\" |&"
    return [
        ("symlink", "/opt/inj/$(touch /tmp/pwned)", ENV_DIR),
        ("file", f"{SITE}/$(touch {HOST_CANARY}).pth", METACHAR_PTH, 0o644),
        ("file", f"{SITE}/x;touch {TARGET_CANARY};y.pth", "# nothing\n", 0o644),
        ("file", f"{SITE}/$(touch {RELATIVE_CANARY}).pth", f"import os  # {bad}\n", 0o644),
        ("file", f"{SITE}/a;touch {RELATIVE_CANARY};b.pth", f"/tmp/`touch {RELATIVE_CANARY}`\n",
         0o644),
        ("file", f"{SITE}/`touch {RELATIVE_CANARY}`.pth", "# nothing\n", 0o644),
        ("file", f"{SITE}/flash_attn/__init__.py", f"# {bad}\n", 0o644),
        ("file", f"{REPO_DIR}/$(touch {HOST_CANARY}).py", f"print({bad!r})\n", 0o644),
        ("file", f"/opt/$(touch {TARGET_CANARY})/bin/nvidia-smi", f"#!/bin/sh\n# {bad}\n",
         0o755),
        ("append", f"{REPO_DIR}/configs/tiny.yaml", f"# {bad}\n"),
    ]


def _metachar_report() -> dict[str, Any]:
    bad = f"$(touch {HOST_CANARY}); touch {TARGET_CANARY}; `touch {TARGET_CANARY}`"
    return {"python_path": INJECTED_PYTHON, "python_version": f"3.11.2 {bad}",
            "torch_version": f"2.13.0+cpu'; {bad}", "env_tool": "venv",  # an enum
            "env_name": f"tinynet | {bad}", "notes": f"\"; {bad}; '"}


#: A ``.pth`` that imports nothing but importlib and base64, and installs a meta-path finder
#: that acts only when the entrypoint itself imports a module (issue 26's GPU case does its
#: burst there and turns CUDA off; here it leaves a mark the run does not look at).
DEFERRED_FINDER = (
    "import sys\n"
    "class _Deferred:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'yaml':\n"
    "            open('/tmp/reb-deferred-hook-ran', 'w').close()\n"
    "        return None\n"
    "sys.meta_path.insert(0, _Deferred())\n")
DEFERRED_PTH = ("import importlib, base64; exec(base64.b64decode("
                f"{base64.b64encode(DEFERRED_FINDER.encode()).decode()!r}))\n")
#: An ordinary package installed as pip installs a project in development mode.
EDITABLE_PKG = {"pyproject.toml": ('[build-system]\nrequires = ["setuptools"]\n'
                                   'build-backend = "setuptools.build_meta"\n[project]\n'
                                   'name = "rebhelper"\nversion = "0.1"\n'),
                "rebhelper/__init__.py": "VALUE = 1\n"}


def _hide_torch() -> str:
    """A ``RUN`` that moves torch and its metadata out of the site folder, to where only a
    ``.pth`` puts it on the path."""
    hidden, found = bounds.HIDDEN_SITE, [f"{SITE}/torch", f"{SITE}/torch-*.dist-info"]
    code = (f"import glob, os, shutil; os.makedirs({hidden!r}); [shutil.move(p, {hidden!r}) "
            f"for f in {found!r} for p in glob.glob(f)]")
    return "RUN " + json.dumps(["/usr/bin/python3", "-c", code])


CASES: dict[str, Case] = {c.name: c for c in (
    # what a run loads: installed files, untracked packages, edits undone (loaded_cases.py)
    *(Case(name, ops) for name, ops in LOADED_OPS.items()),
    # Debian's /usr/lib/python3.11/sitecustomize.py (a link to this file) shadows a venv's own
    Case("cuda-spoof", [("file", SYSTEM_SITECUSTOMIZE, CUDA_SPOOF, 0o644)],
         report={"cuda_available": True, "gpu_count": 2}),
    Case("stub-extension", [
        ("file", f"{SITE}/flash_attn/__init__.py", FLASH_ATTN_STUB, 0o644),
        ("file", f"{SITE}/flash_attn-2.5.8.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.5.8\n", 0o644),
        ("file", f"{SITE}/flash_attn-2.5.8.dist-info/RECORD", FLASH_ATTN_RECORD, 0o644),
        ("file", f"{SITE}/flash_attn-2.5.8.dist-info/WHEEL",
         "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n", 0o644),
        ("file", f"{SITE}/flash_attn-2.5.8.dist-info/top_level.txt", "flash_attn\n", 0o644)]),
    Case("entrypoint-edited", [
        ("prepend", f"{REPO_DIR}/train.py", 'import sys; print("TRAIN_OK"); sys.exit(0)\n')]),
    Case("fake-tools", [
        ("file", "/usr/local/bin/nvidia-smi", FAKE_NVIDIA_SMI, 0o755),
        ("file", "/usr/local/bin/python", PYTHON_WRAPPER, 0o755)],
         report={"python_path": "/usr/local/bin/python", "python_version": "3.12.4",
                 "torch_version": "2.5.1+cu124", "cuda_available": True, "gpu_count": 2}),
    Case("daemon", [("file", f"{REPO_DIR}/serve.py", DAEMON_ENTRY, 0o644)]),
    Case("fork-bomb", [("file", f"{REPO_DIR}/bomb.py", FORK_BOMB, 0o644)]),
    Case("memory-hog", [("file", f"{REPO_DIR}/hog.py", MEMORY_HOG, 0o644)]),
    Case("loud-output", [("file", f"{REPO_DIR}/loud.py", LOUD, 0o644)]),
    Case("forged-results", [("file", f"{REPO_DIR}/forge.py", FORGER, 0o644),
                            ("file", "/data/results/.keep", "", 0o666)]),
    Case("other-python", report={"python_path": "/usr/bin/python3"}),
    # code that runs before the entrypoint (issue 15): each ends the run with exit 0
    Case("pth-exit", [("file", f"{SITE}/zz_fast.pth", EXIT_BEFORE_TRAIN, 0o644)]),
    Case("sitecustomize-exit", [("file", SYSTEM_SITECUSTOMIZE, EXIT_BEFORE_TRAIN, 0o644)]),
    Case("env-pythonpath-hook", [("file", "/opt/hook/sitecustomize.py", EXIT_BEFORE_TRAIN,
                                  0o644)], env={"PYTHONPATH": "/opt/hook"}),
    Case("worker-exit", [("file", f"{SITE}/zz_workers.pth", EXIT_IN_WORKERS, 0o644)]),
    Case("forged-witness", [("file", f"{SITE}/zz_forge.pth",
                             "import reb_forge\n", 0o644),
                            ("file", f"{SITE}/reb_forge.py", FORGE_WITNESS, 0o644)]),
    Case("wrapper-elsewhere", [("file", "/usr/local/bin/python", WRAPPER_ELSEWHERE, 0o755)],
         report={"python_path": "/usr/local/bin/python"}),
    # native or Python code that writes the witness's record, or ends the run as a finish
    Case("pth-bytes-forger", [("file", f"{SITE}/zz_bytes.pth", BYTES_PATH_FORGER, 0o644)]),
    Case("env-preload-forger", [("cc", "/opt/forge/libforge.so", RECORD_FORGER_C, "library")],
         env={"LD_PRELOAD": "/opt/forge/libforge.so"}),
    Case("system-preload-forger", [("cc", "/opt/forge/libforge.so", RECORD_FORGER_C, "library"),
                                   ("file", "/etc/ld.so.preload", "/opt/forge/libforge.so\n",
                                    0o644)]),
    Case("static-interpreter-forger", [("cc", "/usr/local/bin/python", RECORD_FORGER_C,
                                        "static")],
         report={"python_path": "/usr/local/bin/python"}),
    Case("import-hook-exit", [("file", f"{SITE}/zz_end.pth", "import reb_end\n", 0o644),
                              ("file", f"{SITE}/reb_end.py", EXIT_AT_IMPORT, 0o644)]),
    # code in the process after start writes the record or the witness's memory (the class)
    Case("ctypes-fd-forger", [("file", f"{SITE}/zz_fd.pth", "import reb_fdforge\n", 0o644),
                              ("file", f"{SITE}/reb_fdforge.py", FD_FORGER, 0o644)]),
    Case("memmove-stop-forger", [("file", f"{SITE}/zz_mem.pth", "import reb_memforge\n", 0o644),
                                 ("file", f"{SITE}/reb_memforge.py", MEMMOVE_FORGER, 0o644)]),
    Case("honest-workers", [("file", f"{REPO_DIR}/workers.py", HONEST_WORKERS, 0o644)]),
    # what a stage loads from the checkout, changed where a check before the run cannot see
    Case("pth-edits-entrypoint", [("file", f"{SITE}/zz_edit.pth", EDIT_AT_START, 0o644)]),
    Case("pth-drops-shadow", [("file", f"{SITE}/zz_shadow.pth", SHADOW_AT_START, 0o644)]),
    Case("shadow-package", [("file", f"{REPO_DIR}/tinynet/config/__init__.py", PLANTED, 0o644)]),
    Case("stdlib-shadow", [("file", f"{REPO_DIR}/argparse.py", PLANTED, 0o644)]),
    Case("unchecked-pyc", [("pyc", f"{REPO_DIR}/tinynet/model.py", PLANTED, "unchecked")]),
    Case("timestamp-pyc", [("pyc", f"{REPO_DIR}/tinynet/model.py", PLANTED, "timestamp")]),
    # C5 probe answers that lie (issue 25 class 5): patched for -c only, or the files edited
    Case("version-liar", [("file", f"{SITE}/zz_liar.pth", "import reb_liar\n", 0o644),
                          ("file", f"{SITE}/reb_liar.py", VERSION_LIAR, 0o644)],
         report=LIED_VERSIONS),
    Case("version-files-edited", [
        ("file", f"{SITE}/zz_liar.pth", "import reb_liar\n", 0o644),
        ("file", f"{SITE}/reb_liar.py", PYTHON_LIAR, 0o644),
        ("append", f"{SITE}/torch/version.py", "__version__ = '2.5.1+cu124'\n"),
        ("append", f"{ENV_DIR}/pyvenv.cfg", "version = 3.12.4\n")],
         report=LIED_VERSIONS),
    Case("available-only", [("file", SYSTEM_SITECUSTOMIZE, AVAILABLE_ONLY, 0o644)],
         report={"cuda_available": True, "gpu_count": 1}),
    # integrity switched off: the pinned commit's object gone, or .git a link to nowhere
    Case("commit-object-deleted", [
        ("remove_head_object", REPO_DIR),
        ("prepend", f"{REPO_DIR}/train.py", 'import sys; print("TRAIN_OK"); sys.exit(0)\n')]),
    Case("gitdir-elsewhere", [
        ("gitdir", REPO_DIR, "/opt/elsewhere/.git"),
        ("prepend", f"{REPO_DIR}/train.py", 'import sys; print("TRAIN_OK"); sys.exit(0)\n')]),
    Case("metachar", _metachar_ops(), report=_metachar_report(),
         env={"REB_NOTE": f"$(touch {HOST_CANARY}); touch {TARGET_CANARY}",
              "PATH": f"/opt/$(touch {TARGET_CANARY})/bin:/usr/local/sbin:/usr/local/bin:"
                      "/usr/sbin:/usr/bin:/sbin:/bin"}),
    Case("own-tools", [("file", f"/usr/local/bin/{name}", body, 0o755)
                       for name, body in CHEATING_TOOLS.items()],
         directives=[KILLING_HEALTHCHECK, 'ENTRYPOINT ["/usr/local/bin/entry"]',
                     'CMD ["--from-cmd"]', "STOPSIGNAL SIGUSR1", "USER nobody"]),
    Case("fork-hop", [("file", f"{REPO_DIR}/hop.py", FORK_HOP, 0o644),
                      ("file", f"{REPO_DIR}/hop.sh", HOP_CHAIN, 0o644)]),
    Case("disk-filler", [("file", f"{REPO_DIR}/fill.py", DISK_FILLER, 0o644)]),
    Case("terminal-injection", [("file", f"{REPO_DIR}/inject.py", TERMINAL_INJECTION, 0o644)]),
    # startup hooks and who owns them (issue 26): no installed distribution lists these
    Case("deferred-import-hook", [("file", f"{SITE}/zz_deferred.pth", DEFERRED_PTH, 0o644)]),
    Case("benign-name-hook", [("append", f"{SITE}/distutils-precedence.pth", DEFERRED_PTH)]),
    # ...while pip's own hook for an editable install is listed in its RECORD
    Case("editable-install", [("file", f"/opt/rebhelper/{name}", body, 0o644)
                              for name, body in EDITABLE_PKG.items()],
         directives=[f'RUN ["{ENV_PYTHON}", "-m", "pip", "install", "-q", "--no-index", '
                     '"--no-deps", "--no-build-isolation", "-e", "/opt/rebhelper"]']),
    # issue 25: disk use the layer walk misses, stub-only packages, values holding lines
    Case("volume-filler", [("file", f"{REPO_DIR}/fill_volume.py", bounds.VOLUME_FILLER, 0o644)],
         directives=[f"VOLUME {bounds.DATA_VOLUME}", "VOLUME /var/cache/reb-a /var/log/reb-b"]),
    Case("volume-checkout", [("file", f"{REPO_DIR}/fill_volume.py", bounds.VOLUME_FILLER,
                              0o644)], directives=[f"VOLUME {REPO_DIR}"]),
    Case("unlinked-writer", [("file", f"{REPO_DIR}/unlinked.py", bounds.UNLINKED_WRITER, 0o644)]),
    Case("fallocate-mapped", [("file", f"{REPO_DIR}/reserve.py", bounds.FALLOCATE_MAPPED,
                               0o644)]),
    Case("disk-pacer", [("file", f"{REPO_DIR}/pace.py", bounds.DISK_PACER, 0o644)]),
    Case("disk-pacer-volume", [("file", f"{REPO_DIR}/pace.py", bounds.DISK_PACER, 0o644)],
         directives=[f"VOLUME {bounds.DATA_VOLUME}"]),
    Case("stub-only-yaml", [("remove", f"{SITE}/yaml"), ("remove", f"{SITE}/_yaml"),
                            ("file", f"{SITE}/yaml/__init__.pyi", "def safe_load(s): ...\n",
                             0o644)]),
    Case("stubs-package-yaml", [("remove", f"{SITE}/yaml"), ("remove", f"{SITE}/_yaml"),
                                ("file", f"{SITE}/yaml-stubs/__init__.pyi",
                                 "def safe_load(s): ...\n", 0o644),
                                ("file", f"{SITE}/yaml-stubs/py.typed", "partial\n", 0o644),
                                ("file", f"{SITE}/yaml/loader.pyi", "class Loader: ...\n",
                                 0o644)]),
    # issue 48 class 6: what Python would load, not what the image names
    Case("stub-yaml-empty-pyc", [("remove", f"{SITE}/yaml"), ("remove", f"{SITE}/_yaml"),
                                 ("file", f"{SITE}/yaml/__init__.pyi",
                                  "def safe_load(s): ...\n", 0o644),
                                 ("file", f"{SITE}/yaml.pyc", "", 0o644)]),
    Case("stub-yaml-foreign-pyc", [("remove", f"{SITE}/yaml"), ("remove", f"{SITE}/_yaml"),
                                   ("file", f"{SITE}/yaml/__init__.pyi",
                                    "def safe_load(s): ...\n", 0o644),
                                   ("file", f"{SITE}/yaml.pyc", bounds.FOREIGN_PYC, 0o644)]),
    Case("early-empty-pyc", [("file", "/opt/early/yaml.pyc", "", 0o644)],
         env={"PYTHONPATH": "/opt/early"}),
    Case("torch-behind-pth", [("file", f"{SITE}/zz_liar.pth", "import reb_liar\n", 0o644),
                              ("file", f"{SITE}/reb_liar.py", VERSION_LIAR, 0o644),
                              ("file", f"{SITE}/zz_hidden.pth", f"{bounds.HIDDEN_SITE}\n",
                               0o644)],
         directives=[_hide_torch()], report=LIED_VERSIONS),
    Case("torch-behind-import-line", [
        ("file", f"{SITE}/zz_liar.pth", "import reb_liar\n", 0o644),
        ("file", f"{SITE}/reb_liar.py", VERSION_LIAR, 0o644),
        ("file", f"{SITE}/zz_hidden.pth", bounds.HIDING_IMPORT_LINE, 0o644)],
         directives=[_hide_torch()], report=LIED_VERSIONS),
    Case("newline-names", [("file", f"{REPO_DIR}/notes{bounds.FORGED}.py", "x = 1\n", 0o644),
                           ("append", f"{REPO_DIR}/configs/tiny.yaml", "# edited\n")],
         report={"python_version": f"3.11.2{bounds.FORGED}",
                 "torch_version": f"2.13.0+cpu{bounds.FORGED}"}),
)}

#: Run by the image's own Python at build time: lays the operations down, no shell anywhere.
SETUP = """\
import json, os, sys
for op in json.load(open(sys.argv[1])):
    kind, path = op[0], op[1]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "file":
        with open(path, "w") as fh:
            fh.write(op[2])
        os.chmod(path, op[3])
    elif kind == "symlink":
        os.symlink(op[2], path)
    elif kind == "prepend":
        with open(path) as fh:
            body = fh.read()
        with open(path, "w") as fh:
            fh.write(op[2] + body)
    elif kind == "remove_head_object":  # the loose object of the commit HEAD names
        ref = open(path + "/.git/HEAD").read().split()[-1]
        sha = open(path + "/.git/" + ref).read().strip() if "/" in ref else ref
        os.remove(path + "/.git/objects/" + sha[:2] + "/" + sha[2:])
    elif kind == "gitdir":  # .git becomes a gitdir: file pointing where nothing is
        import shutil
        shutil.rmtree(path + "/.git")
        with open(path + "/.git", "w") as fh:
            fh.write("gitdir: " + op[2] + "\\n")
    elif kind == "remove":  # a folder the demo holds (an installed package)
        import shutil
        shutil.rmtree(path)
    elif kind == "append":
        with open(path, "a") as fh:
            fh.write(op[2])
    elif kind == "copy":  # another file's bytes over path (an extension swapped)
        import shutil
        shutil.copyfile(op[2], path)
    elif kind == "sourceless":  # bytecode of op[2] at path itself, the source op[3] removed
        import importlib.util, marshal
        with open(path, "wb") as fh:
            code = marshal.dumps(compile(op[2], path, "exec"))
            fh.write(importlib.util.MAGIC_NUMBER + bytes(12) + code)
        if op[3]:
            os.remove(op[3])
    elif kind == "reseal":  # the file's RECORD line rewritten to its new bytes, as a forger would
        import base64, glob, hashlib
        data = open(path, "rb").read()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        site = path[: -len(op[2])]
        for record in glob.glob(site + "*.dist-info/RECORD"):
            lines = open(record).read().splitlines()
            new = [f"{op[2]},sha256={digest},{len(data)}" if l.split(",")[0] == op[2] else l
                   for l in lines]
            if new != lines:
                open(record, "w").write("\\n".join(new) + "\\n")
    elif kind == "b64":  # a binary built on the host (``cc`` operations)
        import base64
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(op[2]))
        os.chmod(path, op[3])
    elif kind == "pyc":  # bytecode of op[2] where Python looks for the module at path's
        import importlib.util, marshal
        code = marshal.dumps(compile(op[2], path, "exec"))
        st = os.stat(path)
        if op[3] == "unchecked":  # PEP 552: hash-based, never checked against the source
            head = (1).to_bytes(4, "little") + importlib.util.source_hash(open(path, "rb").read())
        else:  # the source's own mtime and size: Python takes it for the source's bytecode
            head = (0).to_bytes(4, "little") + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(
                4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        cache = importlib.util.cache_from_source(path)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache, "wb") as fh:
            fh.write(importlib.util.MAGIC_NUMBER + head + code)
    else:
        sys.exit("unknown operation " + kind)
"""


def report_of(base_report: Mapping[str, Any], case: Case) -> dict[str, Any]:
    return {**base_report, **case.report}


def dockerfile(base_id: str, case: Case) -> str:
    lines = [f"FROM {base_id}", "COPY ops.json setup.py /tmp/reb-hostile/"]
    lines.append('RUN ["/usr/bin/python3", "/tmp/reb-hostile/setup.py", '
                 '"/tmp/reb-hostile/ops.json"]')
    if case.report:
        lines.append(f"COPY report.json {REPORT_PATH}")
    lines.append('RUN ["/bin/rm", "-rf", "/tmp/reb-hostile"]')
    for key, value in case.env.items():
        lines.append(f"ENV {key}={json.dumps(value).replace('$', chr(92) + '$')}")
    lines.append(f"LABEL reb.hostile={case.name}")
    lines += case.directives
    return "\n".join(lines) + "\n"


def ensure(client: Any, demo_image: str, name: str) -> str:
    """The tag of hostile case ``name`` built on ``demo_image``, built first if missing."""
    case = CASES[name]
    base = client.images.get(demo_image)
    ops = [_compiled(op) if op[0] == "cc" else op for op in case.ops]
    files = {"ops.json": json.dumps(ops).encode(), "setup.py": SETUP.encode()}
    if case.report:
        honest = json.loads(_image_file(client, demo_image, REPORT_PATH))
        files["report.json"] = json.dumps(report_of(honest, case), indent=2).encode()
    files["Dockerfile"] = dockerfile(base.id, case).encode()
    digest = hashlib.sha256(json.dumps(
        {k: base64.b64encode(v).decode() for k, v in sorted(files.items())}).encode())
    return ensure_image(client, f"reb-hostile-{name}:{digest.hexdigest()[:12]}", files,
                        locks=LOCKS)


def _compiled(op: Op) -> Op:
    """A ``cc`` operation built with the host's compiler: ``("b64", path, binary, 0o755)``."""
    _, path, source, how = op
    with tempfile.TemporaryDirectory(prefix="reb-hostile-cc-") as tmp:
        src, out = Path(tmp, "forge.c"), Path(tmp, "forge")
        src.write_text(source)
        flags = ["-shared", "-fPIC", "-DAS_LIBRARY"] if how == "library" else ["-static"]
        subprocess.run(["cc", "-O2", *flags, f'-DREPO="{REPO_DIR}"', f'-DPYTHON="{ENV_PYTHON}"',
                        "-o", str(out), str(src)], check=True, capture_output=True, timeout=120)
        return ("b64", path, base64.b64encode(out.read_bytes()).decode(), 0o755)


def _image_file(client: Any, image: str, path: str) -> bytes:
    from pytest_reb.targets import image_file

    data = image_file(client, image, path)
    if data is None:
        raise RuntimeError(f"{image} has no {path}")
    return data


def module_text(name: str, commit: str, **runs: str) -> str:
    """A repository module for the demo checkout with the given runs (Python source each)."""
    lines = ['"""A repository module written by a hostile-image test."""',
             "from pytest_reb import Repo, Run", "",
             f"repo = Repo({name!r}, commit={commit!r}, imports_total=8,"]
    lines += [f"            {stage}={src}," for stage, src in runs.items()]
    lines.append(")")
    return "\n".join(lines) + "\n"


def demo_module(commit: str) -> str:
    """The demo's own module, pinned to the commit the demo image really holds."""
    import re

    text = (Path(__file__).resolve().parents[2] / "demo" / "test_demo__tinynet.py").read_text()
    return re.sub(r'commit="[0-9a-f]{40}"', f'commit="{commit}"', text)


# the witness's identity and finish cases (issue 48, classes 1 and 3) build on ``Case``
from .witness_cases import CASES as _WITNESS_CASES  # noqa: E402

CASES.update(_WITNESS_CASES)
