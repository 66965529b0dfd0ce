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

What a case is and how its operations are laid down is in ``imagecase.py``; what
the cases hold in ``payloads.py`` (and ``forgeries.py``, ``bounds.py``,
``loaded_cases.py``, ``witness_cases.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import tempfile
from collections.abc import Mapping
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
from support.imagecase import SETUP, SITE, SYSTEM_SITECUSTOMIZE, Case, Op
from support.loaded_cases import OPS as LOADED_OPS
from support.payloads import (
    AVAILABLE_ONLY,
    CHEATING_TOOLS,
    CUDA_SPOOF,
    DAEMON_ENTRY,
    DEFERRED_PTH,
    DISK_FILLER,
    EDITABLE_PKG,
    EXIT_BEFORE_TRAIN,
    EXIT_IN_WORKERS,
    FAKE_NVIDIA_SMI,
    FLASH_ATTN_RECORD,
    FLASH_ATTN_STUB,
    FORGE_WITNESS,
    FORGER,
    FORK_BOMB,
    FORK_HOP,
    HOP_CHAIN,
    HOST_CANARY,
    KILLING_HEALTHCHECK,
    LOUD,
    MEMORY_HOG,
    PYTHON_WRAPPER,
    TARGET_CANARY,
    TERMINAL_INJECTION,
    WRAPPER_ELSEWHERE,
    hide_torch,
    metachar_ops,
    metachar_report,
)
from support.witness_cases import CASES as WITNESS_CASES

LOCKS = CACHE_DIR / "locks"

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
    Case("metachar", metachar_ops(), report=metachar_report(),
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
         directives=[hide_torch()], report=LIED_VERSIONS),
    Case("torch-behind-import-line", [
        ("file", f"{SITE}/zz_liar.pth", "import reb_liar\n", 0o644),
        ("file", f"{SITE}/reb_liar.py", VERSION_LIAR, 0o644),
        ("file", f"{SITE}/zz_hidden.pth", bounds.HIDING_IMPORT_LINE, 0o644)],
         directives=[hide_torch()], report=LIED_VERSIONS),
    Case("newline-names", [("file", f"{REPO_DIR}/notes{bounds.FORGED}.py", "x = 1\n", 0o644),
                           ("append", f"{REPO_DIR}/configs/tiny.yaml", "# edited\n")],
         report={"python_version": f"3.11.2{bounds.FORGED}",
                 "torch_version": f"2.13.0+cpu{bounds.FORGED}"}),
)}

# the witness's identity and finish cases (issue 48, classes 1 and 3)
CASES.update(WITNESS_CASES)


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
