"""What the issue-25 hostile images hold: forgers of the witness's record, code planted
where a stage loads it from the checkout, and liars to the C5 probe (``images.CASES``).

Kept apart from ``images`` (the recipes and the builder) only for size; every text here is
laid down by ``imagecase.SETUP`` or compiled by ``images._compiled``.
"""

from __future__ import annotations

from pytest_reb.loop.demo.images import REPO_DIR

#: Forges the witness's record the way the protocol reads it, for a run of ``train.py``: native
#: code, in a preloaded library's constructor or as the interpreter itself (issue 25, class 1).
RECORD_FORGER_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int forge(int argc, char **argv) {
    const char *rec = getenv("REB_WITNESS");
    int train = 0;
    for (int i = 1; i < argc; i++)
        train |= strstr(argv[i], "train.py") != NULL;
    if (!train || !rec)
        return 0;
    char line[4096];
    int fd = open(rec, O_WRONLY | O_APPEND | O_CREAT, 0666), pid = getpid(), pp = getppid();
    snprintf(line, sizeof line, "%d %d py \n%d %d start file\ttrain.py\t%s\t%s/train.py\n"
             "%d %d reach %s/train.py\n%d %d finish \n", pid, pp, pid, pp, REPO, REPO, pid, pp,
             REPO, pid, pp);
    write(fd, line, strlen(line));
    close(fd);
    puts("TRAIN_OK steps=5");
    fflush(stdout);
    syscall(SYS_exit_group, 0);
    return 1;
}
#ifdef AS_LIBRARY
__attribute__((constructor)) static void init(int argc, char **argv) { forge(argc, argv); }
#else
int main(int argc, char **argv) {
    forge(argc, argv);
    argv[0] = PYTHON;
    execv(PYTHON, argv);
    return 127;
}
#endif
"""
#: A ``.pth`` that writes the record through a bytes path, then ends the run before train.py.
BYTES_PATH_FORGER = ("import os, sys; any(a.endswith('train.py') for a in sys.argv) and ("
                     "os.write(os.open(os.fsencode(os.environ['REB_WITNESS']), "
                     "os.O_WRONLY | os.O_APPEND | os.O_CREAT), ("
                     f"'%d %d start file\\ttrain.py\\t{REPO_DIR}\\t{REPO_DIR}/train.py\\n"
                     f"%d %d reach {REPO_DIR}/train.py\\n%d %d finish \\n' % "
                     "((os.getpid(), os.getppid()) * 3)).encode()), "
                     "print('TRAIN_OK steps=5', flush=True), os._exit(0))\n")
#: Ends the run with exit 0 from an import hook, at the entrypoint's own ``import torch``.
EXIT_AT_IMPORT = """\
import os, sys


class _End:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and any(a.endswith("train.py") for a in sys.argv):
            print("TRAIN_OK steps=5", flush=True)
            os._exit(0)
        return None


sys.meta_path.insert(0, _End())
"""
#: What the checkout attacks below put in the entrypoint's way: the marker, then an exit.
PLANTED = "print('PLANTED TRAIN_OK steps=5', flush=True); import os; os._exit(0)\n"
#: A ``.pth`` that rewrites the entrypoint as the stage's interpreter starts, after the host's
#: check before the run (issue 25, class 2).
EDIT_AT_START = ("import sys; any(a.endswith('train.py') for a in sys.argv) and "
                 f"open({REPO_DIR + '/train.py'!r}, 'w').write({PLANTED!r})\n")
#: The same, dropping an untracked package that Python imports instead of ``tinynet/config.py``.
SHADOW_AT_START = ("import os, sys; any(a.endswith('train.py') for a in sys.argv) and "
                   f"(os.makedirs({REPO_DIR + '/tinynet/config'!r}, exist_ok=True), "
                   f"open({REPO_DIR + '/tinynet/config/__init__.py'!r}, 'w').write({PLANTED!r}))\n")
#: Lies about the versions to every interpreter start but the entrypoint's (the official
#: one-liners, C5's probe, C2's probe that answers C5's question), so the entrypoint's runs
#: see the real ones (issue 25, class 5).
VERSION_LIAR = """\
import builtins, platform, sys
if not sys.argv[0].endswith("train.py"):
    platform.python_version = lambda: "3.12.4"
    _import = builtins.__import__

    def _lying_import(name, *args, **kwargs):
        module = _import(name, *args, **kwargs)
        if name == "torch":
            module.__version__ = "2.5.1+cu124"
        return module

    builtins.__import__ = _lying_import
"""
#: Only the Python half of it: torch's own files are edited to say the version instead.
PYTHON_LIAR = VERSION_LIAR.split("    _import =")[0]
#: The report of both liars: what the lies say.
LIED_VERSIONS = {"python_version": "3.12.4", "torch_version": "2.5.1+cu124"}
#: After start, at the entrypoint's own ``import torch``: opens the record through libc by
#: ``ctypes`` (no ``open`` event), writes a finish with ``os.write`` (no event at all), and
#: leaves by exec'ing ``/bin/true`` (past the witness's ``_exit``, exit status 0): the file
#: says the run finished, and nothing in it says otherwise (issue 25, class 1, made a class).
FD_FORGER = f"""\
import os, sys


class _Forge:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and any(a.endswith("train.py") for a in sys.argv):
            import ctypes  # after the start: loading it before is a taint

            libc = ctypes.CDLL(None)
            fd = libc.open(os.environ["REB_WITNESS"].encode(),
                           os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            pid, pp = os.getpid(), os.getppid()
            os.write(fd, f"{{pid}} {{pp}} reach {REPO_DIR}/train.py\\n{{pid}} {{pp}} finish \\n"
                     .encode())
            print("TRAIN_OK steps=5", flush=True)
            os.execv("/bin/true", ["true"])
        return None


sys.meta_path.insert(0, _Forge())
"""
#: The same moment: finds the witness's state without a single audited step (its mappings
#: in ``/proc/self/maps``, then ``ctypes.memmove`` reads of them for the magic), makes its
#: page writable (``mprotect`` through ctypes), writes a finished state with
#: ``ctypes.memmove``, and stops itself with ``SIGSTOP`` for the host to read; a child it
#: forked continues it once it is stopped, and it exits 0.
MEMMOVE_FORGER = f"""\
import os, signal, struct, sys, time


def _state():
    for line in open("/proc/self/maps"):
        parts = line.split()
        if len(parts) < 6 or not parts[5].endswith("libreb_witness.so") or parts[1][0] != "r":
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        buf = ctypes.create_string_buffer(hi - lo)
        ctypes.memmove(buf, lo, hi - lo)
        at = buf.raw.find(b"reb-witness" + bytes(5))  # the magic, padded: the struct's
        if at >= 0:
            return lo + at, parts[1]
    return None, ""


def _forged():
    head = struct.pack("=16sIIiIIIIIiI", b"reb-witness", 2, 4168, os.getpid(), 2, 1, 1, 1, 1,
                       0, 0)
    start = f"file\\ttrain.py\\t{REPO_DIR}\\t{REPO_DIR}/train.py".encode().ljust(2048, b"\\0")
    return head + start + f"{REPO_DIR}/train.py".encode().ljust(1024, b"\\0")


class _Forge:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and any(a.endswith("train.py") for a in sys.argv):
            global ctypes
            import ctypes  # after the start: loading it before is a taint

            at, perms = _state()
            forged = _forged()
            print("state at", hex(at or 0), perms, flush=True)
            if "w" not in perms:
                try:
                    libc = ctypes.CDLL(None)
                    libc.mprotect(ctypes.c_void_p(at & ~65535), 65536, 3)
                    perms = "rw"
                except Exception as exc:
                    print("mprotect:", exc, flush=True)
            if at and "w" in perms:
                ctypes.memmove(at, forged, len(forged))
            print("TRAIN_OK steps=5", flush=True)
            if os.fork() == 0:  # continues it once stopped (or after 5 s)
                for _ in range(500):
                    stat = open(f"/proc/{{os.getppid()}}/stat").read()
                    if stat.rsplit(")", 1)[-1].split()[0] == "T":
                        break
                    time.sleep(0.01)
                time.sleep(0.5)  # the host's look, had the stop been the witness's
                os.kill(os.getppid(), signal.SIGCONT)
                os._exit(0)
            os.kill(os.getpid(), signal.SIGSTOP)
            os._exit(0)
        return None


sys.meta_path.insert(0, _Forge())
"""
#: An honest program with every shape of child the witness must live with: DataLoader
#: workers (forked), a plain ``os.fork`` child that ``os._exit``s, and two processes of
#: ``torch.multiprocessing.spawn`` (fresh interpreters that import this file).
HONEST_WORKERS = """\
import os

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset


def rank(i):
    torch.manual_seed(i)
    print(f"spawned rank {i}: {float(torch.randn(3).sum()):.3f}", flush=True)


if __name__ == "__main__":
    data = TensorDataset(torch.arange(64, dtype=torch.float32).reshape(32, 2))
    total = sum(float(b[0].sum()) for b in DataLoader(data, batch_size=4, num_workers=2))
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    mp.spawn(rank, nprocs=2)
    print(f"WORKERS_OK total={total:.0f}", flush=True)
"""
