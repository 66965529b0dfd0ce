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
   importing the package.  The modules of one top-level package share its
   import: one interpreter imports the package (``torch``: seconds) and forks a
   child per module, which is the state a fresh ``import pkg.sub._ext`` reaches
   on its way to the module anyway; a module that state already holds from
   the same file (most of a subpackage's: its ``__init__`` imports them) is
   loaded, and needs no child.  Only a success is taken from a forked
   child; a failure, crash or hang there (a package whose import started
   threads a fork cannot carry) is loaded again in a fresh interpreter, whose
   answer and error text are the ones reported, as is every module of a
   package whose own import fails.  A private module that its package imports in a
   cycle (``scipy.linalg._matfuncs_sqrtm_triu``) fails when imported first
   and alone, which says nothing about the environment: it is then loaded as
   a library, after its package.  ``DT_NEEDED`` of each shared object is read
   from its ELF header (the CUDA runtime it was linked against).  The servers
   read bytecode from the host's folder first, then the image's where current
   (``image_bytecode_too``), and write what they compile into the host's folder
   only: each source is compiled once for all of them.
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
import ctypes
import importlib
import importlib.machinery
import importlib.metadata as metadata
import importlib.util
import json
import mmap
import os
import re
import select
import shutil
import signal
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
#: What a fresh interpreter of the sweep runs first (``-c``): ``image_bytecode_too``, from this
#: file, with ``sys.path`` left as ``-c`` made it.
HERE = os.path.dirname(os.path.abspath(__file__))
BOOT = (f"import sys; sys.path.insert(0, {HERE!r}); import ext_probe as _reb; sys.path.pop(0); "
        "_reb.image_bytecode_too(); del _reb\n")
#: ``python -m pip`` after ``BOOT`` (argv: pip's arguments).
PIP_CODE = ("import runpy; sys.argv[0] = 'pip'\n"
            "runpy.run_module('pip', run_name='__main__', alter_sys=True)\n")
#: A forked child's timeout as a share of a module's own: a child only imports one module
#: after its package, so a long one is more likely a fork-unsafe package, loaded again fresh.
FORK_SHARE = 0.25
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
        res = subprocess.run([sys.executable, "-c", BOOT + LOAD_CODE, module, path, kind], cwd=cwd,
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


# --------------------------------------------------------------------------- fork server


def read_line(fd, pending, timeout=None):
    """One line from ``fd`` within ``timeout`` seconds (None: none came, or the pipe closed)."""
    end = None if timeout is None else time.time() + timeout
    while b"\n" not in pending[0]:
        left = None if end is None else end - time.time()
        if left is not None and (left <= 0 or not select.select([fd], [], [], left)[0]):
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        pending[0] += chunk
    line, _, pending[0] = pending[0].partition(b"\n")
    return line.decode("utf-8", "replace")


def load_here(module, path, kind):
    """``LOAD_CODE``'s load in this process, without its fallback for a module its package
    imports in a cycle: that one fails here and is loaded fresh, where the note is made."""
    package = module.rpartition(".")[0]
    if kind == "module":
        importlib.import_module(module)
        return
    if package:
        importlib.import_module(package)
    ctypes.CDLL(path)


def forked_load(module, path, kind, timeout):
    """``[ok, seconds]`` of one load in a forked child (killed after ``timeout``)."""
    start = time.time()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            load_here(module, path, kind)
            code = 0
        except BaseException:
            pass
        os._exit(code)
    status = None
    while time.time() - start < timeout:
        done, found = os.waitpid(pid, os.WNOHANG)
        if done:
            status = found
            break
        time.sleep(0.005)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return [status == 0, round(time.time() - start, 3)]


def loaded_here(module, path, kind):
    """Whether this process already holds ``module`` from the file ``path``: its package's
    import loaded it (``scipy.sparse.csgraph`` loads most of its own extensions), so a fresh
    ``import`` of it, which passes through that same import, loads it too; no child needed."""
    found = sys.modules.get(module) if kind == "module" else None
    where = getattr(found, "__file__", None)
    try:
        return isinstance(where, str) and os.path.realpath(where) == os.path.realpath(path)
    except (OSError, ValueError):
        return False


def subpackage(module):
    """``scipy.linalg`` for ``scipy.linalg._fblas``; None for ``torch._C`` (no subpackage)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else None


class Server:
    """The client's end of a fork server: a process that imported a package and forks a
    child per module it is asked to load (``serve``)."""

    def __init__(self, pid, rfd, wfd, ready_within, name=None, proc=None):
        self.pid, self.rfd, self.wfd, self.pending = pid, rfd, wfd, [b""]
        self.name, self.proc = name, proc  # a subpackage's; the interpreter's Popen, at the top
        if read_line(rfd, self.pending, ready_within) != "ready":
            self.close()

    def ask(self, request, within):
        """The answer to one request line, or None (the server is gone: closed)."""
        if self.pid is None:
            return None
        try:
            os.write(self.wfd, (request + "\n").encode())
            line = read_line(self.rfd, self.pending, within)
            return json.loads(line) if line else self.close()
        except (OSError, ValueError):
            return self.close()

    def close(self):
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            if self.proc is not None:
                self.proc.wait()
            else:
                with contextlib.suppress(OSError):
                    os.waitpid(self.pid, 0)
            for fd in (self.rfd, self.wfd):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.pid = None
        return None


def spawn_subserver(name, timeout):
    """A forked server that imported the subpackage ``name`` and serves its modules."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(to_w)
        os.close(from_r)
        try:
            importlib.import_module(name)
        except BaseException:
            os._exit(3)
        os.write(from_w, b"ready\n")
        serve(to_r, from_w, timeout, nested=False)
        os._exit(0)
    os.close(to_r)
    os.close(from_w)
    return Server(pid, from_r, to_w, timeout, name=name)


def serve(rfd, wfd, timeout, nested):
    """Answer ``[module, path, kind]`` lines with ``[ok, seconds]`` (``[True, 0.0, "package"]``
    for a module this process already holds) until the input ends.

    At the top (``nested``) a module of a subpackage is handed to a server forked for that
    subpackage, so its siblings share the subpackage's import too; each child starts from the
    state a fresh ``import`` of the module passes through, never from a sibling's."""
    pending, sub = [b""], None
    while True:
        line = read_line(rfd, pending)
        if line is None:
            break
        module, path, kind = json.loads(line)
        name = subpackage(module) if nested else None
        if loaded_here(module, path, kind):
            answer = [True, 0.0, "package"]
        elif name is None:
            answer = forked_load(module, path, kind, timeout)
        else:
            if sub is None or sub.name != name:
                if sub is not None:
                    sub.close()
                sub = spawn_subserver(name, timeout)
            answer = sub.ask(line, timeout + 10) or [False, 0.0]
        os.write(wfd, (json.dumps(answer) + "\n").encode())
    if sub is not None:
        sub.close()


def image_bytecode_too():
    """Read the image's own bytecode where the host's folder has none and it is current.

    The host runs the sweep with ``PYTHONPYCACHEPREFIX`` at a folder of its own (the
    bytecode it compiled for this image, and room for what the sweep's interpreters compile:
    the first import of ``scipy.linalg`` compiles it once for every server after it). That
    setting hides the ``__pycache__`` an environment installed with its sources, so without
    this an image whose installer compiled everything would compile it all again here.  A
    file of the image is taken only where Python would take it without writing it anew (a
    timestamp file of this interpreter's magic that matches its source), so nothing is ever
    written beside the image's sources.  The sweep runs the image's code in any case; only
    the verdicts' stages refuse the image's bytecode (``targets/bytecode.py``)."""
    prefix = getattr(sys, "pycache_prefix", None)
    external = sys.modules.get("_frozen_importlib_external")
    if not prefix or external is None or not hasattr(external, "cache_from_source"):
        return
    original = external.cache_from_source
    magic = importlib.util.MAGIC_NUMBER

    def current(pyc, source):
        try:
            with open(pyc, "rb") as fh:
                head = fh.read(16)
            st = os.stat(source)
        except OSError:
            return False
        return (len(head) == 16 and head[:4] == magic and head[4:8] == b"\0\0\0\0"
                and int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)

    def cache_from_source(path, debug_override=None, *, optimization=None):
        ours = original(path, debug_override, optimization=optimization)
        if os.path.exists(ours):
            return ours
        sys.pycache_prefix = None  # the file name Python uses without a prefix
        try:
            theirs = original(path, debug_override, optimization=optimization)
        finally:
            sys.pycache_prefix = prefix
        return theirs if current(theirs, path) else ours

    external.cache_from_source = cache_from_source


def fork_server_main(top, timeout):
    """``ext_probe.py --fork-server TOP TIMEOUT``: import TOP, then serve stdin."""
    image_bytecode_too()
    try:
        importlib.import_module(top)
    except BaseException:
        os._exit(3)
    out = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # what the modules print goes nowhere
    os.write(out, b"ready\n")
    serve(0, out, timeout, nested=True)
    os._exit(0)


def start_server(top, cwd, env, ready_within, child_timeout):
    """A fork server for the top-level package ``top`` in an interpreter of its own."""
    try:
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--fork-server", top,
                                 str(child_timeout)], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    rfd, wfd = os.dup(proc.stdout.fileno()), os.dup(proc.stdin.fileno())
    proc.stdout.close()
    proc.stdin.close()
    return Server(proc.pid, rfd, wfd, ready_within, proc=proc)


def pip_check(timeout, env):
    try:
        if importlib.util.find_spec("pip") is None:
            return {"ran": False, "why": "pip is not installed in this environment"}
    except (ImportError, ValueError):
        return {"ran": False, "why": "pip cannot be found"}
    try:
        res = subprocess.run([sys.executable, "-c", BOOT + PIP_CODE, "check",
                              "--disable-pip-version-check", "--no-color"],
                             capture_output=True, timeout=timeout, env=env,
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
    # bytecode as the host set it: written only under its PYTHONPYCACHEPREFIX, where given
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
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
    child_timeout = per_module * FORK_SHARE
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
    groups = {}
    for i, (module, _, _, _, _) in enumerate(found):
        groups.setdefault(module.split(".")[0], []).append(i)
    for indices in groups.values():  # a subpackage's modules one after another: one server
        indices.sort(key=lambda i: found[i][0])
    todo = sorted(groups.items(), key=lambda item: -len(item[1]))  # the largest first

    def one(i, server):
        module, dist, path, problem, kind = found[i]
        row = {"module": module, "dist": dist, "path": path}
        if problem:
            row.update(ok=False, error=problem)
        elif kind == "module" and before.get(module) == os.path.realpath(path):
            row.update(ok=True, seconds=0.0, kind=kind, by="c2_probe")
        elif time.time() + 1 > deadline:
            row.update(ok=None, error="not tried: the sweep's deadline passed")
        else:
            # a subpackage's server's import, then the child: two timeouts at most
            forked = server.ask(json.dumps([module, path, kind]),
                                2 * child_timeout + 10) if server else None
            if forked and forked[0] is True:
                row.update(ok=True, seconds=forked[1], kind=kind,
                           by="package" if forked[2:3] == ["package"] else "fork")
            else:  # a fresh interpreter decides, and says why
                row.update(load(module, path, kind, cwd,
                                min(per_module, deadline - time.time()), env))
            needed, sections = elf_info(path)
            if needed:
                row["needed"] = needed[:40]
                runtime = cuda_runtime(needed)
                if runtime:
                    row["cuda_runtime"] = runtime
            if sections and any(s in DEVICE_SECTIONS for s in sections):
                row["device_code"] = True
        results[i] = row

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                top, indices = todo.pop(0)
            server = None
            if len(indices) > 1 and hasattr(os, "fork") and time.time() + 1 < deadline:
                server = start_server(top, cwd, env, min(per_module, deadline - time.time()),
                                      child_timeout)
            try:
                for i in indices:
                    one(i, server)
            finally:
                if server:
                    server.close()

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
    out["loaded_in_fork"] = sum(1 for r in rows if r.get("by") == "fork")
    out["loaded_by_package_import"] = sum(1 for r in rows if r.get("by") == "package")
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
    if sys.argv[1:2] == ["--fork-server"]:
        fork_server_main(sys.argv[2], float(sys.argv[3]))
    spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    try:
        out = sweep(spec)
    except Exception as exc:  # the environment is hostile or broken: say so, do not crash
        out = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
    print(MARKER + " " + bounded(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
