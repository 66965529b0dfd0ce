"""What the hostile images of ``images.CASES`` hold: the files an agent that cheats, or one that
is careless, leaves in the demo environment, and the names that would reach a shell.

A CUDA spoof, a stub ``flash_attn``, a fake ``nvidia-smi`` and ``python``, entrypoints that
fork daemons or bombs, eat memory, print a gigabyte or forge result files, the image's own
``timeout``, ``sleep`` and ``test``, process chains that fork-hop past a sweep, a disk
filler, output that steers the terminal, startup code that ends the run before the
entrypoint, shell metacharacters in every name.  Bodies and operations only; the cases
themselves are in ``images.CASES``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pytest_reb.loop.demo.images import ENV_DIR, ENV_PYTHON, REPO_DIR
from support import bounds
from support.imagecase import SITE, Op

#: Written by a shell, if anything ever put an image's string through one on the host.
HOST_CANARY = "/tmp/reb-hostile-host-canary"
#: The same, inside a container.
TARGET_CANARY = "/tmp/pwned"
#: Made in the working directory of a shell that ran a name (file names cannot hold "/").
RELATIVE_CANARY = "reb-pwned"
#: Interpreter path whose directory names would run the canary through a shell.
INJECTED_PYTHON = "/opt/inj/$(touch /tmp/pwned)/bin/python"


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


def metachar_ops() -> list[Op]:
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


def metachar_report() -> dict[str, Any]:
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


def hide_torch() -> str:
    """A ``RUN`` that moves torch and its metadata out of the site folder, to where only a
    ``.pth`` puts it on the path."""
    hidden, found = bounds.HIDDEN_SITE, [f"{SITE}/torch", f"{SITE}/torch-*.dist-info"]
    code = (f"import glob, os, shutil; os.makedirs({hidden!r}); [shutil.move(p, {hidden!r}) "
            f"for f in {found!r} for p in glob.glob(f)]")
    return "RUN " + json.dumps(["/usr/bin/python3", "-c", code])
