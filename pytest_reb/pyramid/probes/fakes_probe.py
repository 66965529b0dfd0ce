"""Known fakes: startup hooks on CUDA queries, stub compiled extensions, wrapper scripts.

One set of rules over a small filesystem interface (``listdir``, ``read``,
``is_dir``, ``resolve``), used from two places:

* run as a script under the report's interpreter inside the target (mounted
  read-only at /opt/reb/probes), with one JSON argument (``python``,
  ``checkout``); it prints one JSON line after the marker ``REB_FAKES``.  From
  there it also sees what only the running interpreter knows: its ``sys.path``,
  the import hooks installed at startup, whether ``torch.cuda``'s queries were
  replaced before any code of ours ran.
* imported by the host (``pytest_reb.evidence.fakescan``), which applies the same rules to
  the target's files seen from outside, where a lying interpreter cannot
  interfere.

What it finds is information, never a verdict.  Standard library only, and
written for older interpreters too (3.6 and later): the environment under test
chose its Python, not us.
"""

import ast
import base64
import csv
import hashlib
import json
import os
import re
import stat
import sys

MARKER = "REB_FAKES"
LD_SO_PRELOAD = "/etc/ld.so.preload"
#: Import names of packages whose point is compiled code, and the prefixes of the
#: top-level shared objects their distributions may put beside the package
#: (flash-attn ships ``flash_attn_2_cuda.*.so`` next to ``flash_attn/``).
#: Left out on purpose: deepspeed and nvdiffrast, whose ops are compiled at first
#: use by default, so a wheel without a shared object is normal for them.
COMPILED_PACKAGES = {
    "flash_attn": ("flash_attn", "flashattn"),
    "apex": ("amp_C", "apex_C", "fused_", "syncbn", "mlp_cuda", "fast_", "scaled_",
             "focal_loss", "xentropy", "transducer", "bnp", "fmhalib", "distributed_"),
    "xformers": (),
    "mmcv": (),
    "causal_conv1d": ("causal_conv1d",),
    "mamba_ssm": ("selective_scan", "mamba"),
    "torch_scatter": (),
    "torch_sparse": (),
    "torch_cluster": (),
    "torch_spline_conv": (),
    "pytorch3d": (),
    "detectron2": (),
    "bitsandbytes": (),
    "vllm": (),
    "spconv": (),
    "diff_gaussian_rasterization": (),
    "simple_knn": (),
    "MinkowskiEngine": ("MinkowskiEngineBackend",),
    "tinycudann": ("tinycudann",),
    "natten": (),
}
#: Distributions that legitimately ship one of those import names without compiled code.
PURE_DISTRIBUTIONS = {"mmcv_lite"}
#: What a hook that fakes a GPU has to touch.
CUDA_WORDS = re.compile(r"cuda|is_available|device_count|get_device_(?:name|capability|properties)"
                        r"|nvml|nvidia-smi|CUDA_VISIBLE_DEVICES", re.IGNORECASE)
#: .pth files every ordinary environment has (setuptools, virtualenv, namespace
#: packages, editable installs, coverage's subprocess hook): passed over only when an
#: installed distribution owns them (``owner``), since a name is anybody's to take.
BENIGN_PTH = re.compile(r"(distutils-precedence|_virtualenv|.*-nspkg|__editable__\..*|"
                        r"a1_coverage|_?coverage.*)\.pth")
#: Modules a benign sitecustomize may import (Debian's and Ubuntu's stock file).
BENIGN_IMPORTS = {"apport_python_hook", "os", "sys", "site", "importlib", "types",
                  "_distutils_hack", "_virtualenv"}
HOOK_NAMES = ("sitecustomize.py", "usercustomize.py")
#: What virtualenv writes (no distribution lists it): the module it imports is scanned.
VIRTUALENV_PTH = "import _virtualenv"
DPKG_INFO = "/var/lib/dpkg/info"
MAX_RECORD_BYTES = 16 << 20
MAX_DPKG_LISTS = 4000
NVIDIA_SMI_DIRS = ("/usr/local/nvidia/bin", "/usr/local/cuda/bin", "/usr/bin", "/usr/local/bin",
                   "/bin", "/usr/sbin", "/sbin")
MAX_HOOK_BYTES = 256 * 1024
MAX_WALK = 20000
MAX_DIRS = 200
MAX_DETAIL = 400


def finding(kind, path, detail):
    return {"kind": kind, "path": path, "detail": detail[:MAX_DETAIL]}


class LocalFS:
    """This process's own view of the filesystem (inside the target)."""

    def resolve(self, path, follow_last=True):
        real = os.path.realpath(path) if follow_last else os.path.join(
            os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        return real if os.path.lexists(real) else None

    def lstat(self, path):
        try:
            return os.lstat(path)
        except (OSError, ValueError):
            return None

    def listdir(self, path):
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def is_dir(self, path):
        return os.path.isdir(path)

    def read(self, path, limit=1 << 20):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            with os.fdopen(fd, "rb") as fh:
                fd = -1
                return fh.read(limit)
        except OSError:
            return None
        finally:
            if fd >= 0:
                os.close(fd)


def _text(data):
    return data.decode("utf-8", "replace") if data is not None else ""


def _join(directory, name):
    return directory.rstrip("/") + "/" + name


# --------------------------------------------------------------------------- startup hooks


def imported_names(code):
    """Top-level modules a piece of Python imports (statements, ``__import__``, import_module)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            fname = getattr(func, "id", None) or getattr(func, "attr", None)
            arg = node.args[0]
            value = arg.value if isinstance(arg, ast.Constant) else None
            if fname in ("__import__", "import_module") and isinstance(value, str):
                names.add(value.split(".")[0])
    return names


def _module_source(fs, directory, name):
    for rel in (name + ".py", name + "/__init__.py"):
        data = fs.read(_join(directory, rel), MAX_HOOK_BYTES)
        if data is not None:
            return _join(directory, rel), _text(data)
    return None, ""


def owner(fs, path):
    """The installed distribution, or Debian package, that lists ``path`` with its hash.

    A hook pip installs for an ordinary package (an editable finder, setuptools'
    ``distutils-precedence.pth``, a namespace package's ``-nspkg.pth``) is in that
    distribution's ``RECORD`` with a sha256 of its bytes; one Debian installs is in the
    package's ``md5sums``. A hook nobody lists, or whose bytes are not what the listing
    says, is the environment's own: None.
    """
    data = fs.read(path, MAX_HOOK_BYTES)
    if data is None:
        return None
    if os.path.basename(path) == "_virtualenv.pth" and _text(data).strip() == VIRTUALENV_PTH:
        return "virtualenv"
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    directory = os.path.dirname(path)
    for _ in range(4):  # a file of a distribution lies at most a few folders below its site
        rel = os.path.relpath(path, directory)
        for entry in fs.listdir(directory):
            if not entry.endswith(".dist-info"):
                continue
            record = _text(fs.read(_join(directory, entry + "/RECORD"), MAX_RECORD_BYTES) or b"")
            if '"' not in rel and rel not in record:  # no row can name it: skip the parse
                continue
            for row in csv.reader(record.splitlines()):
                if len(row) >= 2 and row[0] == rel and row[1] == "sha256=" + digest:
                    return entry[: -len(".dist-info")]
        up = os.path.dirname(directory)
        if up == directory:
            break
        directory = up
    md5 = hashlib.md5(data).hexdigest()
    wanted = "  " + path.lstrip("/")
    for name in fs.listdir(DPKG_INFO)[:MAX_DPKG_LISTS]:
        if name.endswith(".md5sums"):
            text = _text(fs.read(_join(DPKG_INFO, name), 4 << 20) or b"")
            if md5 + wanted in text.splitlines():
                return "debian:" + name[: -len(".md5sums")]
    return None


def hook_findings(fs, directory):
    """sitecustomize/usercustomize and code lines of ``.pth`` files in one directory.

    Returns the findings and the directories the ``.pth`` path lines add to ``sys.path``.
    """
    found, added = [], []
    for name in fs.listdir(directory):
        if name not in HOOK_NAMES and not name.endswith(".pth"):
            continue
        path = _join(directory, name)
        data = fs.read(path, MAX_HOOK_BYTES)
        if data is None:
            continue
        text = _text(data)
        if name.endswith(".pth"):
            code_lines = [ln for ln in text.splitlines()
                          if ln.startswith(("import ", "import\t"))]
            for ln in text.splitlines():
                ln = ln.strip()
                if ln and not ln.startswith(("#", "import ", "import\t")):
                    added.append(ln if ln.startswith("/") else _join(directory, ln))
            code = "\n".join(code_lines)
            if not code:
                continue
        else:
            code = text
        names = imported_names(code)
        words = CUDA_WORDS.findall(code)
        via = ""
        for mod in sorted(names or ()):
            src_path, src = _module_source(fs, directory, mod)
            if src_path and CUDA_WORDS.search(src):
                words += CUDA_WORDS.findall(src)
                via = f" through {src_path}"
                break
        if words:
            found.append(dict(finding("cuda_hook", path, (
                f"runs at every interpreter start{via} and touches CUDA queries "
                f"({', '.join(sorted(set(w.lower() for w in words))[:6])}): it can make "
                "torch report a GPU that is not there")), owner=owner(fs, path)))
            continue
        owned = owner(fs, path)
        if name.endswith(".pth") and BENIGN_PTH.fullmatch(name) and owned:
            continue
        if names is not None and names <= BENIGN_IMPORTS and name in HOOK_NAMES \
                and "exec" not in code and "compile" not in code:
            continue
        what = "imports " + ", ".join(sorted(names)) if names else "holds code that does not parse"
        found.append(dict(finding("startup_hook", path,
                                  f"runs at every interpreter start and {what}"), owner=owned))
    return found, added


# --------------------------------------------------------------------------- stub extensions


def _is_so(name):
    return name.endswith(".so") or ".so." in name


def _elf(fs, path):
    return (fs.read(path, 4) or b"") == b"\x7fELF"


def _distribution_of(fs, directory, name):
    """(distribution name, shared objects its RECORD lists that exist) for ``name`` in a dir."""
    for entry in fs.listdir(directory):
        if not entry.endswith(".dist-info"):
            continue
        record = _text(fs.read(_join(directory, entry + "/RECORD"), 8 << 20))
        files = [line.split(",")[0] for line in record.splitlines()]
        if not any(f.startswith((name + "/", name + ".py")) for f in files):
            continue
        dist = re.sub(r"[-_.]+", "_", entry[: -len(".dist-info")].split("-")[0]).lower()
        objects = [_join(directory, f) for f in files if _is_so(f.rsplit("/", 1)[-1])]
        return dist, [p for p in objects if _elf(fs, p)]
    return None, []


def _shared_objects_under(fs, top):
    """A few ELF shared objects under ``top`` (no symlinks followed), and whether the walk ended."""
    stack, seen, found = [top], 0, []
    while stack and seen < MAX_WALK and not found:
        here = stack.pop()
        for name in fs.listdir(here):
            seen += 1
            path = _join(here, name)
            if _is_so(name):
                if _elf(fs, path):
                    found.append(path)
                    break
            else:
                st = fs.lstat(path)
                if st is not None and stat.S_ISDIR(st.st_mode):  # symlinks are not followed
                    stack.append(path)
    return found, not stack or bool(found)


def extension_findings(fs, directory):
    """Packages named like compiled extensions that hold no shared object at all."""
    found = []
    entries = fs.listdir(directory)
    for name, prefixes in sorted(COMPILED_PACKAGES.items()):
        as_dir, as_file = name in entries, (name + ".py") in entries
        if not as_dir and not as_file:
            continue
        path = _join(directory, name if as_dir else name + ".py")
        if as_dir and not fs.is_dir(path):
            continue
        dist, listed = _distribution_of(fs, directory, name)
        if dist in PURE_DISTRIBUTIONS:
            continue
        beside = [e for e in entries if _is_so(e) and e.startswith(prefixes)
                  and _elf(fs, _join(directory, e))] if prefixes else []
        inside, complete = _shared_objects_under(fs, path) if as_dir else ([], True)
        if listed or beside or inside or not complete:
            continue
        owner = f"its distribution {dist}" if dist else "no installed distribution"
        found.append(finding("stub_extension", path, (
            f"{name} imports, but {owner} has no compiled module at all (no ELF shared "
            "object in the package, beside it, or in its RECORD): a stand-in for a "
            "compiled extension, whose kernels are not there")))
    return found


# --------------------------------------------------------------------------- wrappers


def executable_kind(fs, path):
    """("elf" | "script" | "other", first line) of what ``path`` finally names, or None."""
    real = fs.resolve(path)
    if real is None:
        return None
    head = fs.read(real, 256)
    if head is None:
        return None
    if head[:4] == b"\x7fELF":
        return "elf", ""
    first = _text(head).splitlines()[0][:120] if head else ""
    return ("script" if head[:2] == b"#!" else "other"), first


def python_findings(fs, pythons, path_dirs):
    """Interpreters that are scripts: the report's, and ``python``/``python3`` on PATH."""
    found, seen = [], set()
    candidates = [(p, "the report's interpreter") for p in pythons]
    for d in path_dirs:
        for name in ("python", "python3"):
            candidates.append((_join(d, name), f"`{name}` on PATH"))
    for path, what in candidates:
        kind = executable_kind(fs, path)
        real = fs.resolve(path)
        if kind is None or real in seen:
            continue
        seen.add(real)
        if kind[0] == "elf":
            continue
        target = f" ({real})" if real != path else ""
        found.append(finding("python_wrapper", path, (
            f"{what}{target} is a {'script' if kind[0] == 'script' else 'text file'}, not an "
            f"interpreter binary ({kind[1]!r}): what it prints about versions need not come "
            "from Python")))
    return found


def nvidia_smi_findings(fs, path_dirs, has_gpu_devices):
    found, seen = [], set()
    for d in list(path_dirs) + list(NVIDIA_SMI_DIRS):
        path = _join(d, "nvidia-smi")
        kind = executable_kind(fs, path)
        real = fs.resolve(path)
        if kind is None or real in seen:
            continue
        seen.add(real)
        if kind[0] != "elf":
            found.append(finding("fake_nvidia_smi", path, (
                f"nvidia-smi is a script ({kind[1]!r}), not the driver's binary: its GPU "
                "table is whatever the script prints")))
        elif not has_gpu_devices:
            found.append(finding("nvidia_smi_without_gpu", path, (
                "an nvidia-smi binary in a container with no GPU device: the NVIDIA runtime "
                "mounts the real one with the devices, so this one was put in the image")))
    return found


# --------------------------------------------------------------------------- the scan


def scan(fs, pythons, dirs, path_dirs, has_gpu_devices):
    """Every rule over ``dirs`` (site dirs and the like), ``pythons`` and ``path_dirs``."""
    found, done, queue = [], set(), [d for d in dirs if isinstance(d, str) and d.startswith("/")]
    while queue and len(done) < MAX_DIRS:
        d = queue.pop(0)
        real = fs.resolve(d)
        if real is None or real in done or not fs.is_dir(real):
            continue
        done.add(real)
        hooks, added = hook_findings(fs, real)
        found += hooks
        queue += added
        found += extension_findings(fs, real)
    found += python_findings(fs, pythons, path_dirs)
    found += nvidia_smi_findings(fs, path_dirs, has_gpu_devices)
    found += preload_findings(fs)
    return found


def preload_findings(fs):
    """An image-wide ``/etc/ld.so.preload``: native code in every process, before any
    interpreter starts (what could impersonate the entrypoint witness)."""
    listed = [ln.strip() for ln in _text(fs.read(LD_SO_PRELOAD) or b"").splitlines()
              if ln.strip() and not ln.strip().startswith("#")]
    if not listed:
        return []
    return [finding("ld_preload", LD_SO_PRELOAD,
                    f"libraries loaded into every process before its own code: "
                    f"{', '.join(listed[:5])}")]


# --------------------------------------------------------------------------- only from inside


def _origin(obj):
    code = getattr(obj, "__code__", None) or getattr(getattr(obj, "__func__", None), "__code__",
                                                     None)
    return getattr(code, "co_filename", None)


def runtime_findings(startup_modules):
    """What only the running interpreter shows: CUDA queries replaced, import hooks installed."""
    found = []
    cuda = sys.modules.get("torch.cuda")
    if cuda is not None:
        for name in ("is_available", "device_count", "get_device_name", "get_device_capability"):
            origin = _origin(getattr(cuda, name, None))
            if origin and not origin.replace("\\", "/").endswith("torch/cuda/__init__.py"):
                found.append(finding("cuda_hook", origin, (
                    f"torch.cuda.{name} was replaced before any code of the run: it is "
                    f"defined in {origin}")))
    for hook in sys.meta_path:
        cls = hook if isinstance(hook, type) else type(hook)
        module = getattr(cls, "__module__", "") or ""
        if module.startswith(("_frozen_importlib", "importlib", "_distutils_hack", "__editable__",
                              "zipimport", "six", "_virtualenv", "pkg_resources",
                              "setuptools")):
            continue
        origin = getattr(sys.modules.get(module), "__file__", None) or module
        found.append(finding("startup_hook", origin, (
            f"an import hook ({module}.{cls.__name__}) is installed before any code of the run: "
            "it can rewrite any module as it is imported")))
    early = sorted(m for m in startup_modules if m.split(".")[0] in ("torch", "jax", "tensorflow"))
    if early:
        found.append(finding("startup_hook", "sys.modules", (
            f"{', '.join(early[:5])} imported at interpreter start, before any code of the run")))
    return found


def site_dirs():
    dirs = []
    try:
        import site

        dirs += list(site.getsitepackages())
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
    return dirs


def main():
    startup_modules = set(sys.modules)
    args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    python = args.get("python") or sys.executable
    checkout = args.get("checkout")
    fs = LocalFS()
    sites = site_dirs()
    dirs = [d for d in sites + list(sys.path) + ([checkout] if checkout else []) if d]
    path_dirs = [d for d in os.environ.get("PATH", "").split(":") if d.startswith("/")]
    gpus = any(re.fullmatch(r"nvidia\d+", n) for n in fs.listdir("/dev"))
    found = scan(fs, [python], dirs, path_dirs, gpus)
    found += runtime_findings(startup_modules)
    out = {"findings": found, "executable": sys.executable, "prefix": sys.prefix,
           "site_dirs": sites, "sys_path": list(sys.path), "path": path_dirs,
           "gpu_devices": gpus}
    sys.stdout.write(MARKER + " " + json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
