"""Evidence that the entrypoint's own code ran and the interpreter finished (strict C1/C3/C4).

Exit 0 is what a ``.pth`` file calling ``os._exit(0)`` gives, and a log line is
what it prints.  Everything Python-level that could witness the run (a
sitecustomize of ours, an audit hook set from Python, a runner script) runs
*after* the image's own startup code, which could end the process first or
imitate it.  So the witness is native and comes first: ``reb_witness.c``,
built here with the host's compiler, mounted read-only and put in front of
``LD_PRELOAD`` for every command of a run.  Its constructor runs before the
interpreter's ``main()`` and adds a C audit hook (PEP 578: hooks added before
``Py_Initialize`` survive it, and Python code can neither remove nor skip
them).  The hook records, in a per-command file the host reads afterwards,
when the interpreter itself (no Python frame, main thread) starts the main
program, when code of the entrypoint file executes after that, when the
interpreter finalises or ``os._exit`` ends it, and any attempt from Python to
touch the record or, before the program started, to spawn, load libraries or
read other processes' memory or environment.

That file is the target's to write, so it only ever fails a run (taints, a program's
command line, an exit from elsewhere): what grants one (started, reached, finished and
how) the host reads from the process's memory while the witness holds it stopped for the
host (``observe``), and a process the host never saw stopped did not finish.

What a fake then needs is native code written against this protocol (a
compiled extension or an ``/etc/ld.so.preload`` library of its own), or a
non-Python wrapper that writes the record file itself; the known-fakes scan
reports both (``ld_preload``, ``wrapper_python``), and strict says on the
verdict whether such a finding could have produced it.  docs/gpu.md gives the
reasoning and the variants tested.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pytest_reb.witness import observe
from pytest_reb.witness.shape import (  # noqa: F401 - the package's API
    LAUNCHER_MODULES,
    LAUNCHER_PROGRAMS,
    Expect,
    entries_of,
    expect,
)

SOURCE = Path(__file__).with_name("reb_witness.c")
LIBRARY = "libreb_witness.so"
#: Where the library is mounted read-only in a container.
MOUNT = "/opt/reb/witness"
#: Compiler flags: position independent, no fortify or stack-protector symbols, so the
#: library links against GLIBC 2.3 symbols only and loads in any glibc image.
CFLAGS = ("-shared", "-fPIC", "-O2", "-fno-stack-protector", "-U_FORTIFY_SOURCE",
          "-D_FORTIFY_SOURCE=0", "-Wall")


@functools.cache
def library_dir() -> str | None:
    """The host folder holding the built library, built once per source; None without a
    compiler (``REB_WITNESS_LIB`` names a prebuilt one instead)."""
    given = os.environ.get("REB_WITNESS_LIB")
    if given:
        return str(Path(given).parent) if Path(given).is_file() else None
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    sources = b"".join(f.read_bytes() for f in sorted(SOURCE.parent.glob("*.c")))
    digest = hashlib.sha256(sources + " ".join(CFLAGS).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    folder = cache / "pytest-reb" / "witness" / digest
    if (folder / LIBRARY).is_file():
        return str(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".so", delete=False) as tmp:
        built = Path(tmp.name)
    res = subprocess.run([cc, *CFLAGS, "-o", str(built), str(SOURCE)], capture_output=True,
                         text=True, timeout=120)
    if res.returncode != 0:
        built.unlink(missing_ok=True)
        return None
    built.chmod(0o755)
    built.replace(folder / LIBRARY)  # atomic: concurrent workers see a whole file
    return str(folder)


def library_path() -> str | None:
    """The built library on this host, or None."""
    folder = library_dir()
    return f"{folder}/{LIBRARY}" if folder else None


def env_vars(library: str, record: str, entries: Sequence[str],
             preload: str | None, root: str = "", stops: str = "",
             private: bool = False) -> dict[str, str]:
    """The variables that put the witness into every process of a command.

    Ours goes first in ``LD_PRELOAD``; an image's own preload (a malloc,
    say) stays after it (and strict does not take the record of such a run:
    ``tiers.witnessing``).  ``root`` is the checkout: an ``os._exit()`` from its
    code is a finish, from anywhere else it is not.  ``stops`` (``stops_for``) are
    the moments the witness stops its process for the host to read; none without a host
    that watches for them (a stopped process waits for its ``SIGCONT``).  ``private`` makes
    each process undumpable, so that no other process of the target can open its memory:
    only for a host that may still read it (root, ``CAP_SYS_PTRACE``), and only where no
    framework needs to reach a peer process (CUDA's and NCCL's handle exchange may use
    ``pidfd_getfd``): the CPU stage.
    """
    rest = [p for p in (preload or "").replace(" ", ":").split(":") if p and p != library]
    return {"LD_PRELOAD": ":".join([library, *rest]), "REB_WITNESS": record,
            "REB_WITNESS_ENTRY": ":".join(entries), "REB_WITNESS_ROOT": root,
            "REB_WITNESS_STOP": stops, "REB_WITNESS_PRIVATE": "1" if private else ""}


def stops_for(exp: Expect) -> str:
    """Where the processes of a run with this shape stop for the host: at a finish, or, for a
    run the harness ends (a server, a stopped run), at the entrypoint; a shell driver with no
    Python entrypoint also at its programs' ends."""
    stops = ["finish"] if exp.needs_finish else ["reach"]
    if exp.kind.startswith(("shell driver", "program")) and not any(
            e.endswith(".py") for e in exp.entries):
        stops.append("prog")
    return ",".join(stops)


# --------------------------------------------------------------------------- records


@dataclass
class Process:
    """One process of the run, as the witness's file says (which can only fail it) and as
    the host saw it stopped (``seen``: what grants a pass)."""

    pid: int
    ppid: int
    start: str | None = None  # "file\t<arg>\t<cwd>\t<realpath>", "module\t<name>", ...
    reached: str | None = None  # the entrypoint file whose code ran
    end: str | None = None  # "finish" or "exit <status>"
    taints: list[str] = field(default_factory=list)
    program: str | None = None  # the command line of a process that is not Python
    ended: bool = False  # that program ended through exit() or _exit() with status 0
    is_python: bool = False  # a "py" record: an interpreter (a wrapper may exec into one)
    #: GPU kernel launches seen at the CUDA runtime's and driver's entry points
    launched_own: bool = False  # one came from the entrypoint's code path
    launched_other: str | None = None  # where the first other one came from
    launches: tuple[int, int] | None = None  # (the entrypoint's, others) at the end
    seen: observe.Seen | None = None  # what the host read while the process was stopped

    @property
    def state(self) -> observe.State | None:
        """The state the host read, when it could take it (no ``problem``)."""
        return self.seen.state if self.seen is not None and self.seen.problem is None else None

    @property
    def finished(self) -> bool:
        """The host saw this process stopped at a finish."""
        return self.state is not None and self.state.how != observe.HOW_PROGRAM \
            and self.state.finished

    @property
    def python(self) -> bool:
        return self.is_python or (self.state is not None and self.state.started)

    def to_json(self) -> dict[str, object]:
        host = {"host": self.seen.to_json()} if self.seen is not None else {}
        if not self.python:
            prog: dict[str, object] = {"pid": self.pid, "ppid": self.ppid,
                                       "program": self.program, "ended": self.ended, **host}
            if self.launched_own or self.launched_other or self.launches:
                prog["gpu_launches"] = self._launches()
            return prog
        out: dict[str, object] = {"pid": self.pid, "ppid": self.ppid, "start": self.start,
                                  "reached": self.reached, "end": self.end,
                                  "taints": self.taints, **host}
        if self.launched_own or self.launched_other or self.launches:
            out["gpu_launches"] = self._launches()
        return out

    def _launches(self) -> dict[str, object]:
        return {"entrypoint": self.launched_own, "first_other_from": self.launched_other,
                "counts": list(self.launches) if self.launches else None}


def parse(text: str) -> dict[int, Process]:
    """The record file's lines, by process (container pids: the target's own namespace)."""
    found: dict[int, Process] = {}
    for line in text.splitlines():
        head = line.split(" ", 3)
        if len(head) < 3 or not head[0].isdigit() or not head[1].isdigit():
            continue
        pid, ppid, kind = int(head[0]), int(head[1]), head[2]
        detail = head[3] if len(head) > 3 else ""
        proc = found.setdefault(pid, Process(pid, ppid))
        if kind == "start" and proc.start is None:
            proc.start = detail
        elif kind == "reach" and proc.reached is None:
            proc.reached = detail
        elif kind == "finish":
            proc.end = "finish"
        elif kind == "exit":
            proc.end = f"exit {detail.strip()}"
        elif kind == "taint":
            proc.taints.append(detail)
        elif kind == "prog":
            proc.program = detail.strip()[:500]
        elif kind == "end":
            proc.ended = detail.strip() in ("", "0")
        elif kind == "py":
            proc.is_python = True
        elif kind == "launch":
            if detail.strip() == "checkout":
                proc.launched_own = True
            elif detail.startswith("foreign") and proc.launched_other is None:
                proc.launched_other = detail[len("foreign"):].strip()[:300] or "?"
        elif kind == "launches":
            counts = detail.split()
            if len(counts) == 2 and all(c.isdigit() for c in counts):
                proc.launches = (int(counts[0]), int(counts[1]))
    return found


# --------------------------------------------------------------------------- the rule


def judge(exp: Expect, procs: Mapping[int, Process]) -> str | None:
    """Why the host did not see the entrypoint run to its end, or None when it did.

    Granting comes only from ``Process.seen`` (the host's reads of stopped processes); the
    file's lines only describe, or fail the run (taints).
    """
    pythons = [p for p in procs.values() if p.python]
    for p in pythons:  # interference the host read in memory counts as the file's does
        if p.seen is not None and p.seen.state is not None and p.seen.state.taints \
                and not p.taints:
            p.taints.append(p.seen.state.taint)
    tainted = [p for p in pythons if p.taints]
    if tainted:
        return (f"the witness was interfered with: {'; '.join(tainted[0].taints[:3])} "
                f"(pid {tainted[0].pid}, before or instead of the entrypoint)")
    progs = [p for p in procs.values() if not p.python]
    if not pythons or (exp.kind.startswith(("shell driver", "program"))
                       and not any(e.endswith(".py") for e in exp.entries)):
        return _program_only(exp, progs)
    started = [p for p in pythons if p.start or (p.state is not None and p.state.started)]
    if not started:
        return (f"{len(pythons)} Python process(es) started, but the interpreter never began "
                "a main program: startup code (.pth, sitecustomize, usercustomize, PYTHON* "
                "variables) ended the process first")
    good = [p for p in pythons if _reached(exp, p) and (p.finished or not exp.needs_finish)
            and not (p.state is not None and p.state.forked_from)]  # a fork's end is not its own
    if len(good) >= exp.workers:
        return None
    refused = [p.seen.problem for p in procs.values() if p.seen and p.seen.problem]
    if refused:
        return f"the host could not take a stopped process as the witness's: {refused[0]}"
    reached = [p for p in pythons if _reached(exp, p) or (exp.entries and p.reached)]
    what = (f"the entrypoint ({exp.entries[0]})" if exp.entries else "a main program")
    if len(reached) > len(good):
        ends = ", ".join(f"pid {p.pid}: {_end_words(p)}" for p in reached if p not in good)
        return f"{what} ran but did not finish: {ends}"
    ran = sorted({(p.start or "").split("\t")[1] if "\t" in (p.start or "") else ""
                  for p in started} - {""})
    if reached:
        return (f"only {len(good)} process(es) reached {what}; {exp.workers} "
                f"{exp.kind} were expected")
    return f"no process of the run reached {what}; the main programs were: {ran[:5]}"


def _end_words(p: Process) -> str:
    """How a process that reached the entrypoint ended, as the host and then the file say."""
    if p.state is not None and p.state.how == observe.HOW_EXIT_OTHER and p.end:
        return f"{p.end} (the host saw an exit from code not the checkout's)"
    if p.state is not None and p.state.end:
        return f"{p.state.end} (seen by the host)"
    if p.end in ("finish", "exit 0"):
        return (f"the record file says {p.end!r}, but the host never saw the process stopped "
                "at a finish")
    return p.end or "no normal end (killed or crashed)"


def _names_entry(exp: Expect, program: str) -> bool:
    return not exp.entries or any(n in program or PurePosixPath(n).name in program.split()
                                  for n in exp.entries)


def _program_only(exp: Expect, progs: list[Process]) -> str | None:
    """A run that started no Python: what its launcher allows is the program's own run, with
    the entrypoint (when the run names a file) on its command line, to a normal exit, both
    as the host read them from the stopped program."""
    if not exp.kind.startswith(("shell driver", "program")) or exp.workers > 1:
        return ("no Python process of the run loaded the witness (a static or wrapper "
                "interpreter, or the command never started Python)")
    if any(p.state is not None and p.state.how == observe.HOW_PROGRAM and p.state.finished
           and _names_entry(exp, p.state.start) for p in progs):
        return None
    ran = [p for p in progs if _names_entry(exp, p.program or "")]
    if any(p.ended for p in ran):
        return (f"the record file says the program ({ran[0].program}) ended, but the host "
                "never saw it stopped at its end")
    if ran:
        return f"the program ({ran[0].program}) did not end normally (killed or crashed)"
    return "no process of the run ran the entrypoint " + (f"({exp.entries[0]})" if exp.entries
                                                          else "")


def _reached(exp: Expect, proc: Process) -> bool:
    """The host read that this process reached the entrypoint (or began a main program)."""
    state = proc.state
    if state is None:
        return False
    return state.reached if exp.entries else state.started


def attribution(exp: Expect, procs: Mapping[int, Process]) -> str | None:
    """Why the GPU work is not shown to be the entrypoint's own (strict C3/C4), or None.

    Each rank (``exp.workers`` processes) must have launched a kernel from the
    entrypoint's code path: a frame of the checkout, or library code it called,
    with no startup hook, import hook or exec'd string in between (the witness's
    launch entry points, ``reb_witness_gpu.c``).  The counts that grant it are the
    ones the host read in the stopped process's memory (``Process.state``): each
    process stops for the host at its first launch from the checkout's code (so a
    worker that is killed, or a server the harness ends, is read too) and at its
    end.  The processes are the run's own when ``runs_the_checkout`` says so: the
    entrypoint's descendants count as the entrypoint.  Work launched only from
    elsewhere is GPU work that is not the entrypoint's, however much of it the
    counters saw.
    """
    states = {p.pid: p.state for p in procs.values() if p.state is not None}

    def own(p: Process) -> bool:
        return p.state is not None and p.state.launches_own > 0 and \
            runs_the_checkout(exp, p.state, states)

    def other(p: Process) -> str | None:
        if p.state is not None and p.state.launches_other > 0:
            return p.state.launch_other or "?"
        return p.launched_other

    mine = [p for p in procs.values() if own(p)]
    if len(mine) >= exp.workers:
        return None
    others = [(p, other(p)) for p in procs.values() if other(p)]
    if others:
        first, where_from = others[0]
        where = f"; the first was launched from {where_from} (pid {first.pid})"
        if mine:
            return (f"only {len(mine)} process(es) launched GPU kernels from the entrypoint's "
                    f"code, {exp.workers} ranks were expected{where}")
        return ("the GPU kernels were launched from code outside the entrypoint's path "
                f"(a startup hook, an import hook or an exec'd string){where}")
    if mine:
        return (f"only {len(mine)} process(es) launched GPU kernels; {exp.workers} ranks were "
                "expected")
    elsewhere = [p for p in procs.values() if p.state is not None and p.state.launches_own > 0]
    if elsewhere:
        st = elsewhere[0].state
        assert st is not None
        return ("GPU kernels were launched from the checkout's code only in a process whose "
                f"main program is not the run's (pid {elsewhere[0].pid}: "
                f"{st.start.replace(chr(9), ' ')[:200]!r}, started by pid {st.parent})")
    if any(p.launched_own for p in procs.values()):
        return ("the record file says the entrypoint launched GPU kernels, but no process the "
                "host read while stopped had launched any")
    return ("no process of the run launched a GPU kernel through the CUDA runtime or driver "
            "entry points the witness watches (cudaLaunchKernel, cuLaunchKernel and their "
            "variants), so the GPU work seen is not the entrypoint's")


def runs_the_checkout(exp: Expect, state: observe.State,
                      states: Mapping[int, observe.State], depth: int = 0) -> bool:
    """Whether a process's work is the run's, by what the host read of its main program.

    The entrypoint's descendants are its own however they were started (a subprocess, a
    shell, a launcher, a server's workers): what counts is that the process's main program
    is the checkout's code (a checkout file or module), or the host's own ``-c`` command, or
    the script the run's argv names as its program where the module names another file as
    the entrypoint (``Expect.driver``: its shim), or multiprocessing's bootstrap started by
    such a process (a spawn or forkserver worker), or a fork of any of these (it carries its
    original's state).  A command of the target's
    own, a launcher or a tool runs nobody's code but its own.
    """
    if state.how == observe.HOW_PROGRAM:
        return True  # a program's launches are the checkout's only if it is the checkout's
    if state.main == observe.MAIN_CHECKOUT:
        return True
    if state.main == observe.MAIN_OTHER and exp.driver is not None:
        how, _, rest = state.start.partition("\t")
        if how == "file" and rest.split("\t", 1)[0] == exp.driver:
            return True  # the run's own named program (the module's shim) runs the entrypoint
    if state.main == observe.MAIN_COMMAND:
        # the interpreter runs the command with a newline added, and the state holds 2047 bytes
        mine = "command\t" + (exp.command or "").replace("\n", " ").replace("\r", " ") + " "
        return exp.command is not None and state.start.rstrip() == mine[:2047].rstrip()
    parent = states.get(state.parent)
    return (state.main == observe.MAIN_BOOT and parent is not None and depth < 64
            and parent is not state and runs_the_checkout(exp, parent, states, depth + 1))


def summary(exp: Expect, procs: Mapping[int, Process]) -> dict[str, object]:
    """The witness part of an outcome's evidence."""
    return {"kind": exp.kind, "entries": list(exp.entries), "workers_needed": exp.workers,
            "needs_finish": exp.needs_finish,
            "processes": [p.to_json() for p in procs.values()]}


def merge(texts: Iterable[str],
          seen: Iterable[Mapping[int, observe.Seen]] = ()) -> dict[int, Process]:
    """Records of several commands of one stage (``together``), by pid, with what the host
    saw of each process stopped for it."""
    merged: dict[int, Process] = {}
    for text in texts:
        merged.update(parse(text))
    for observed in seen:
        for pid, one in observed.items():
            proc = merged.setdefault(pid, Process(pid, 0))
            proc.seen = one
            if one.state is not None and one.state.how == observe.HOW_PROGRAM:
                proc.program = proc.program or one.state.start[:500]
    return merged


def read_local(path: str) -> str:
    """A record file on this machine, removed once read."""
    with contextlib.suppress(OSError):
        text = Path(path).read_text(errors="replace")
        Path(path).unlink()
        return text
    return ""
