"""Native-extension sweep: load every compiled module the repository's imports reach.

Runs under the report's interpreter inside the target, mounted read-only, with
one JSON argument (``checkout``, ``per_module``, ``deadline``, ``jobs``).  It
prints one JSON line after the marker ``REB_EXT_SWEEP``.  Standard library only,
and written for older interpreters too (3.8 and later): the environment under
test chose its Python, not us.

1. The repository's top-level imports, from its sources (``ast``, as C0 counts).
2. The installed distributions those names belong to, and everything they
   require, transitively (``importlib.metadata``).
3. Their compiled modules: files of their RECORD with an extension-module
   suffix (a bare ``.so`` is one when it exports ``PyInit_<name>``), plus any
   compiled module built inside the checkout.  A module the RECORD lists and
   the disk lacks is reported as such; one tagged for another CPython too.
   A bare ``.so`` inside a package that is no module (``torchvision/_C.so``:
   torch ops, loaded with ``torch.ops.load_library``) is a *library*.
4. Each is loaded in a child process with a timeout, so one crash or hang
   costs only its own line (a module the C2 probe's interpreter already loaded
   from the same file, ``spec["loaded"]``, is counted as loaded instead): a
   module is imported; a library is loaded the way its package does, after
   importing the package.  A private module that its package imports in a
   cycle (``scipy.linalg._matfuncs_sqrtm_triu``) fails when imported first
   and alone, which says nothing about the environment: it is then loaded as
   a library, after its package.  ``DT_NEEDED`` of each shared object is read
   from its ELF header (the CUDA runtime it was linked against).
5. ``python -m pip check`` when pip is there (beside the loads), and ``cuobjdump`` (a CUDA
   toolkit's, or the pip-installed one) on every module carrying device code,
   for the GPU architectures compiled into it.

What it prints is information for a person, never a verdict: the host
classifies the failures and compares architectures with the card's.

It is one file, over this project's usual module size, on purpose: it is mounted
alone and run by an interpreter whose import path the image controls, so it can
import nothing of ours.
"""

import ast
import contextlib
import importlib.machinery
import importlib.metadata as metadata
import json
import mmap
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time

MARKER = "REB_EXT_SWEEP"
EXCLUDE_DIRS = {".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".venv", "venv", "build",
                "dist", "node_modules", "build_output", "benchmark_assets", "benchmark_scripts"}
MAX_SOURCES = 5000
MAX_SOURCE_BYTES = 2 << 20
MAX_MODULES = 400
MAX_REPORTED_FAILURES = 80
MAX_OUTPUT = 56000
CUOBJDUMP_MAX_BYTES = 1 << 30
#: The child's code: argv is module, path, kind ("module" or "library").
LOAD_CODE = """\
import ctypes, importlib, sys
module, path, kind = sys.argv[1:4]
package = module.rpartition(".")[0]
if kind == "module":
    try:
        importlib.import_module(module)
        sys.exit(0)
    except ImportError as exc:
        if "partially initialized module %r" % module not in str(exc):
            raise
        print("REB_NOTE imported through its package only (a circular import alone)")
if package:
    importlib.import_module(package)
ctypes.CDLL(path)
"""
SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
CPYTHON_TAG = re.compile(r"\.cpython-(\d+)[\w-]*\.so$")
DEVICE_SECTIONS = (".nv_fatbin", "__nv_relfatbin", ".nvFatBinSegment")


def top_level_imports(checkout):
    """Top-level names of the absolute imports in the checkout's Python files."""
    names, files = set(), 0
    for root, dirs, filenames in os.walk(checkout):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDE_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            files += 1
            if files > MAX_SOURCES:
                return names, True
            path = os.path.join(root, name)
            try:
                if os.path.getsize(path) > MAX_SOURCE_BYTES:
                    continue
                with open(path, "rb") as fh:
                    tree = ast.parse(fh.read())
            except (OSError, SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names, False


def local_names(checkout):
    """Top-level names the checkout itself provides (its packages and modules, and src/'s)."""
    names = set()
    for root in (checkout, os.path.join(checkout, "src")):
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".py"):
                names.add(entry[:-3])
            elif os.path.isdir(os.path.join(root, entry)):
                names.add(entry)
    return names


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req):
    """The distribution a requirement string names, or None for an extra's requirement."""
    if re.search(r";.*\bextra\s*==", req):
        return None
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return normalise(m.group(1)) if m else None


def top_names(dist):
    """Import names a distribution provides: ``top_level.txt``, else its files' first parts."""
    text = None
    with contextlib.suppress(Exception):
        text = dist.read_text("top_level.txt")
    if text:
        return {line.strip().replace("/", ".").split(".")[0] for line in text.splitlines()
                if line.strip()}
    names = set()
    for f in dist.files or []:
        parts = str(f).split("/")
        if not parts or parts[0].startswith("..") or parts[0].endswith((".dist-info",
                                                                        ".egg-info")):
            continue
        if len(parts) == 1:
            stem = parts[0]
            if stem.endswith(".py"):
                names.add(stem[:-3])
            elif stem.endswith(SUFFIXES):
                names.add(stem.split(".")[0])
        elif not parts[0].endswith(".data") and parts[0] != "__pycache__":
            names.add(parts[0])
    return names


def reachable(imports):
    """Distributions (first on sys.path wins) the imports name, and their requirements."""
    by_name, provides = {}, {}
    for dist in metadata.distributions():
        try:
            name = normalise(dist.metadata["Name"] or "")
        except Exception:
            continue
        if not name or name in by_name:
            continue
        by_name[name] = dist
        for top in top_names(dist):
            provides.setdefault(top, []).append(name)
    queue = [d for top in sorted(imports) for d in provides.get(top, [])]
    seen = []
    while queue:
        name = queue.pop(0)
        if name in seen or name not in by_name:
            continue
        seen.append(name)
        for req in by_name[name].requires or []:
            dep = requirement_name(req)
            if dep and dep not in seen:
                queue.append(dep)
    return [(n, by_name[n]) for n in seen], sorted(i for i in imports if i not in provides)


def exports_init(path, stem):
    """Whether a bare ``.so`` is a Python module (it exports ``PyInit_<stem>``)."""
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(b"PyInit_" + stem.encode()) >= 0
    except (OSError, ValueError):
        return False


def module_name(relpath):
    """``pkg/sub/_ext.cpython-311-x86_64-linux-gnu.so`` -> ``pkg.sub._ext`` (None if not one)."""
    base = relpath.rsplit("/", 1)[-1]
    m = CPYTHON_TAG.search(base)
    if m:
        stem = base[: m.start()]
    elif base.endswith(".abi3.so"):
        stem = base[: -len(".abi3.so")]
    elif base.endswith(".so"):
        stem = base[:-3]
    else:
        return None
    if "." in stem or not stem.isidentifier():
        return None
    parts = relpath.split("/")[:-1]
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join([*parts, stem])


def candidates(dists, checkout):
    """(module, distribution, path, problem, kind) of every compiled module to try."""
    found, seen = [], set()
    own_tag = f"{sys.version_info[0]}{sys.version_info[1]}"

    def add(module, dist, path, base):
        if module in seen:
            return
        m = CPYTHON_TAG.search(base)
        problem, kind = None, "module"
        if not os.path.exists(path):
            problem = f"listed in the distribution's RECORD but absent on disk: {path}"
        elif m and m.group(1) != own_tag:
            problem = ("dynamic module does not define module export function for this "
                       f"interpreter: built for CPython {m.group(1)}, this is CPython {own_tag}")
        elif not m and not base.endswith(".abi3.so") and not exports_init(path, module.rsplit(
                ".", 1)[-1]):
            if "." not in module:
                return  # a bare library at the top of site-packages: nothing loads it by name
            kind = "library"
        seen.add(module)
        found.append((module, dist, path, problem, kind))

    for name, dist in dists:
        for f in dist.files or []:
            rel = str(f).replace(os.sep, "/")
            if rel.startswith("..") or not rel.endswith(".so"):
                continue
            base = rel.rsplit("/", 1)[-1]
            if base.startswith("lib") and not CPYTHON_TAG.search(base) \
                    and not base.endswith(".abi3.so"):
                continue  # a shared library shipped beside the modules, not a module
            module = module_name(rel)
            if module:
                add(module, name, str(dist.locate_file(f)), base)
    if checkout and os.path.isdir(checkout):
        for root, dirs, filenames in os.walk(checkout):
            dirs[:] = sorted(d for d in dirs if d not in EXCLUDE_DIRS and not d.startswith("."))
            for base in sorted(filenames):
                if not base.endswith(".so") or base.startswith("lib"):
                    continue
                rel = os.path.relpath(os.path.join(root, base), checkout).replace(os.sep, "/")
                if rel.startswith("src/"):
                    rel = rel[4:]
                module = module_name(rel)
                if module:
                    add(module, "(checkout)", os.path.join(root, base), base)
    return found


# --------------------------------------------------------------------------- ELF


def elf_info(path):
    """(DT_NEEDED names, section names) of a shared object, or (None, None) if not ELF."""
    try:
        with open(path, "rb") as fh:
            ident = fh.read(16)
            if ident[:4] != b"\x7fELF":
                return None, None
            is64, end = ident[4] == 2, "<" if ident[5] == 1 else ">"
            fh.seek(0)
            head = fh.read(64)
            if is64:
                shoff = struct.unpack_from(end + "Q", head, 0x28)[0]
                shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", head, 0x3A)
                fmt, dyn_fmt = end + "IIQQQQIIQQ", end + "qQ"
            else:
                shoff = struct.unpack_from(end + "I", head, 0x20)[0]
                shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", head, 0x2E)
                fmt, dyn_fmt = end + "IIIIIIIIII", end + "iI"
            if not shoff or shnum > 10000 or shentsize < struct.calcsize(fmt):
                return [], []
            fh.seek(shoff)
            raw = fh.read(shentsize * shnum)
            sections = [struct.unpack_from(fmt, raw, i * shentsize) for i in range(shnum)
                        if (i + 1) * shentsize <= len(raw)]

            def data(sec, limit):
                fh.seek(sec[4])
                return fh.read(min(sec[5], limit))

            names = []
            if shstrndx < len(sections):
                table = data(sections[shstrndx], 1 << 20)
                for sec in sections:
                    names.append(table[sec[0]:table.find(b"\0", sec[0])].decode("ascii",
                                                                                 "replace"))
            needed = []
            for sec in sections:
                if sec[1] != 6 or sec[6] >= len(sections):  # SHT_DYNAMIC, its string table
                    continue
                dyn, strtab = data(sec, 1 << 20), data(sections[sec[6]], 16 << 20)
                size = struct.calcsize(dyn_fmt)
                for off in range(0, len(dyn) - size + 1, size):
                    tag, val = struct.unpack_from(dyn_fmt, dyn, off)
                    if tag == 0:
                        break
                    if tag == 1 and val < len(strtab):
                        needed.append(strtab[val:strtab.find(b"\0", val)].decode("ascii",
                                                                                 "replace"))
            return needed, names
    except (OSError, struct.error):
        return None, None


def cuda_runtime(needed):
    """The CUDA runtime major a module was linked against (``libcudart.so.12`` -> "12")."""
    for lib in needed or []:
        m = re.match(r"libcudart\.so\.(\d+)", lib)
        if m:
            return m.group(1)
    return None


def find_cuobjdump():
    """A CUDA toolkit's cuobjdump: PATH, CUDA_HOME, /usr/local/cuda, or the pip one."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += [os.path.join(p, "nvidia", "cuda_cuobjdump") for p in sys.path if p]
    for root in roots:
        if root:
            path = os.path.join(root, "bin", "cuobjdump")
            if os.access(path, os.X_OK):
                return path
    return None


def device_archs(tool, path, timeout):
    """The SASS (``sm_XY``) and PTX (``compute_XY``) architectures in a shared object."""
    archs, error = [], None
    for flag, kind in (("--list-elf", "sm"), ("--list-ptx", "compute")):
        try:
            res = subprocess.run([tool, flag, path], capture_output=True,
                                 timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return archs, f"{flag}: {exc}"
        text = res.stdout.decode("utf-8", "replace")
        for m in re.finditer(r"\bsm_(\d+[a-z]?)\b", text):
            arch = f"{kind}_{m.group(1)}"
            if arch not in archs:
                archs.append(arch)
        if res.returncode != 0 and "does not contain" not in res.stderr.decode("utf-8",
                                                                                 "replace"):
            error = res.stderr.decode("utf-8", "replace").strip()[-300:]
    return archs, error


# --------------------------------------------------------------------------- loading


def last_error(text):
    """The exception line of a traceback (the last ``XxxError: ...``), else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]*(?:Error|Exception|Warning)\b", line):
            return line[:600]
    return lines[-1][:600] if lines else ""


def load(module, path, kind, cwd, timeout, env):
    start = time.time()
    try:
        res = subprocess.run([sys.executable, "-c", LOAD_CODE, module, path, kind], cwd=cwd,
                             env=env, capture_output=True, timeout=timeout,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"the import did not finish within {timeout:g}s",
                "seconds": round(time.time() - start, 2)}
    except OSError as exc:
        return {"ok": False, "error": f"cannot start {sys.executable}: {exc}",
                "seconds": 0.0}
    out = {"ok": res.returncode == 0, "seconds": round(time.time() - start, 2), "kind": kind}
    note = re.search(r"^REB_NOTE (.*)$", res.stdout.decode("utf-8", "replace"), re.MULTILINE)
    if note:
        out["note"] = note.group(1)
    if res.returncode < 0:
        out["error"] = f"the import crashed with signal {-res.returncode}"
    elif res.returncode != 0:
        out["error"] = last_error(res.stderr.decode("utf-8", "replace"))
    return out


def pip_check(timeout, env):
    try:
        import importlib.util

        if importlib.util.find_spec("pip") is None:
            return {"ran": False, "why": "pip is not installed in this environment"}
    except (ImportError, ValueError):
        return {"ran": False, "why": "pip cannot be found"}
    try:
        res = subprocess.run([sys.executable, "-m", "pip", "check", "--disable-pip-version-check",
                              "--no-color"], capture_output=True, timeout=timeout, env=env,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"ran": False, "why": str(exc)[:300]}
    lines = [ln.strip() for ln in res.stdout.decode("utf-8", "replace").splitlines()
             if ln.strip() and not ln.startswith("No broken requirements")]
    return {"ran": True, "exit_code": res.returncode, "lines": lines[:100],
            "stderr": res.stderr.decode("utf-8", "replace").strip()[-300:]}


def sweep(spec):
    start = time.time()
    deadline = start + float(spec.get("deadline", 240))
    checkout = spec.get("checkout") or ""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    out = {"python": sys.executable, "version": list(sys.version_info[:3])}
    imports, truncated = top_level_imports(checkout) if os.path.isdir(checkout) else (set(), False)
    dists, unowned = reachable(imports)
    local = local_names(checkout)
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
    unowned = [n for n in unowned if n not in local and n not in stdlib and n != "__future__"]
    found = candidates(dists, checkout)
    out.update(checkout=checkout, checkout_exists=os.path.isdir(checkout),
               imports=sorted(imports)[:500], sources_truncated=truncated,
               imports_without_distribution=unowned[:200],
               distributions=[n for n, _ in dists][:500], modules_found=len(found))
    found = found[:MAX_MODULES]
    cwd = checkout if os.path.isdir(checkout) else "/"
    per_module = float(spec.get("per_module", 60))
    # modules the C2 probe's interpreter already loaded from these very files: not again
    before = spec.get("loaded") if isinstance(spec.get("loaded"), dict) else {}
    checked = {}
    # pip check beside the loads (it imports pip alone: minutes of a large tree otherwise
    # waited for after the slowest load)
    checker = threading.Thread(target=lambda: checked.update(
        pip_check(max(10.0, min(120.0, deadline - time.time())), env)))
    checker.start()
    results = [None] * len(found)
    lock = threading.Lock()
    todo = list(range(len(found)))

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            module, dist, path, problem, kind = found[i]
            row = {"module": module, "dist": dist, "path": path}
            if problem:
                row.update(ok=False, error=problem)
            elif kind == "module" and before.get(module) == os.path.realpath(path):
                row.update(ok=True, seconds=0.0, kind=kind, by="c2_probe")
            elif time.time() + 1 > deadline:
                row.update(ok=None, error="not tried: the sweep's deadline passed")
            else:
                row.update(load(module, path, kind, cwd, min(per_module, deadline - time.time()),
                                env))
                needed, sections = elf_info(path)
                if needed:
                    row["needed"] = needed[:40]
                    runtime = cuda_runtime(needed)
                    if runtime:
                        row["cuda_runtime"] = runtime
                if sections and any(s in DEVICE_SECTIONS for s in sections):
                    row["device_code"] = True
            results[i] = row

    threads = [threading.Thread(target=worker) for _ in range(max(1, int(spec.get("jobs", 4))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = [r for r in results if r is not None]
    tool = find_cuobjdump()
    out["cuobjdump"] = tool
    if tool:
        for row in rows:
            if not row.get("device_code") or time.time() > deadline:
                continue
            try:
                if os.path.getsize(row["path"]) > CUOBJDUMP_MAX_BYTES:
                    row["archs_error"] = "too large for cuobjdump here"
                    continue
            except OSError:
                continue
            archs, error = device_archs(tool, row["path"], max(5.0, min(120.0, deadline -
                                                                         time.time())))
            row["archs"] = archs
            if error:
                row["archs_error"] = error
    checker.join()
    out["pip_check"] = checked
    out["loaded"] = [r["module"] for r in rows if r.get("ok")]
    out["loaded_by_c2_probe"] = [r["module"] for r in rows if r.get("by") == "c2_probe"]
    out["failed"] = [r for r in rows if r.get("ok") is False]
    out["not_tried"] = [r["module"] for r in rows if r.get("ok") is None]
    out["with_device_code"] = [{k: r.get(k) for k in ("module", "dist", "archs", "archs_error",
                                                      "cuda_runtime")}
                               for r in rows if r.get("device_code")]
    out["cuda_runtimes"] = {r["module"]: r["cuda_runtime"] for r in rows if r.get("cuda_runtime")}
    out["seconds"] = round(time.time() - start, 2)
    return out


def bounded(out):
    """The result as one JSON line short enough for the host's output tail."""
    text = json.dumps(out, sort_keys=True)
    for key, keep in (("loaded", 100), ("loaded_by_c2_probe", 0),
                      ("failed", MAX_REPORTED_FAILURES), ("imports", 100),
                      ("distributions", 100), ("with_device_code", 40), ("cuda_runtimes", 0),
                      ("loaded", 0), ("imports", 0), ("distributions", 0),
                      ("failed", 20)):
        if len(text) <= MAX_OUTPUT:
            break
        value = out.get(key)
        if isinstance(value, list) and len(value) > keep:
            out[key] = value[:keep]
            out.setdefault("cut", []).append(key)
        elif isinstance(value, dict) and len(value) > keep:
            out[key] = dict(list(value.items())[:keep])
            out.setdefault("cut", []).append(key)
        text = json.dumps(out, sort_keys=True)
    return text


def main():
    spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    try:
        out = sweep(spec)
    except Exception as exc:  # the environment is hostile or broken: say so, do not crash
        out = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
    print(MARKER + " " + bounded(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
