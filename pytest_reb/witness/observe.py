"""The host's side of the witness: processes stopped for it, read from outside, continued.

The record file is the target's to write, so it can only fail a run.  What grants one is
read here, by the host, from a process that the witness stopped (``SIGSTOP``) at the
moment it would record a finish (or, for runs the harness ends, reach the entrypoint):

1. the process is stopped (``/proc/<pid>/stat`` state ``T``, read by the host);
2. its executable (``/proc/<pid>/exe``) is recorded, for the stage to compare with the
   interpreter it vetted;
3. its mappings (``/proc/<pid>/maps``) hold our library at the path it is mounted at, from
   the very file the host built (device and inode compared with the host's own), and no
   other library that the process's ``LD_PRELOAD`` names;
4. the witness's state is read through ``/proc/<pid>/mem`` at the address of the symbol
   ``reb_witness_state`` taken from the ELF symbol table of the host's build (never from the
   target), and checked (magic, version, the process's own pid);
5. the process is continued (``SIGCONT``).

A process the host never saw stopped there did not finish, whatever any file says.  Reading
another process's memory needs root (the Docker host) or the same user and an ancestor
(``local://``, which Yama's scope 1 allows); a refused read is a ``problem`` on the
observation, which fails strict with that sentence.

A stopped process waits for nobody but the host: the kill paths (``Cgroup.kill_all``, the
local session kill) send ``SIGKILL``, which ends a stopped process, the timeout paths send
``SIGCONT`` after their ``SIGTERM``, and on ``local://`` coreutils ``timeout`` continues and
kills the group at its deadline even when this process is gone.  (A witness-side ``alarm``
would not help: a stopped process takes no signal but ``SIGKILL`` and ``SIGCONT``.)
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The state's layout (``struct reb_witness_state`` in reb_witness.c), version 3.
MAGIC = b"reb-witness"
HEADER = struct.Struct("=16sIIiIIIIIiI")
TEXTS = (("start", 2048), ("reach", 1024), ("taint", 512))
#: Version 2: the GPU kernel launches (from the entrypoint's path, from elsewhere, where from).
LAUNCHES = struct.Struct("=QQ512s")
#: Version 3: the lineage (parent at the start, the process a fork copies) and the main's class.
LINEAGE = struct.Struct("=iiII")
SIZE = HEADER.size + sum(n for _, n in TEXTS) + LAUNCHES.size + LINEAGE.size
SYMBOL = b"reb_witness_state"
STOP_REACH, STOP_FINISH, STOP_LAUNCH = 1, 2, 3
HOW_FINALISED, HOW_EXIT, HOW_PROGRAM, HOW_EXIT_OTHER, HOW_RAISED = 1, 2, 3, 4, 5
#: What a ``HOW_RAISED`` status means when it is not a SystemExit's own.
RAISED = {1: "an uncaught exception", -1: "no end of the main program seen",
          -2: "SystemExit raised by code not the checkout's"}
#: Whose code a main program is: a checkout file or module, a ``-c`` command, multiprocessing's
#: bootstrap, anything else (``REB_MAIN_*``).
MAIN_CHECKOUT, MAIN_COMMAND, MAIN_BOOT, MAIN_OTHER = 1, 2, 3, 4
#: Seconds between two looks at the command's processes for one stopped for the host.
POLL = 0.01
#: Seconds between two full lists of the processes where the quick one can miss some.
FULL_POLL = 0.5


MAIN_NAMES = {MAIN_CHECKOUT: "checkout", MAIN_COMMAND: "command", MAIN_BOOT: "multiprocessing",
              MAIN_OTHER: "other"}


class ElfError(ValueError):
    """The built library's symbol table cannot be read."""


@functools.cache
def symbol_offset(library: str, name: bytes = SYMBOL) -> int:
    """The offset of ``name`` from the library's load base, from the ELF file the host built
    (``.dynsym`` / ``.symtab`` ``st_value`` less the first ``PT_LOAD``'s ``p_vaddr``)."""
    data = Path(library).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError(f"{library} is not a 64-bit little-endian ELF")
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phsize, phnum, shsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    loads = [struct.unpack_from("<IIQQ", data, phoff + i * phsize) for i in range(phnum)]
    base = min((vaddr for kind, _, _, vaddr in loads if kind == 1), default=0)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shsize)
                for i in range(shnum)]
    for sh in sections:
        if sh[1] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strtab = sections[sh[6]]
        names = data[strtab[4]:strtab[4] + strtab[5]]
        for off in range(sh[4], sh[4] + sh[5], sh[9] or 24):
            st_name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", data, off)
            if names[st_name:names.index(b"\0", st_name)] == name:
                return value - base
    raise ElfError(f"{library} has no symbol {name.decode()}")


@dataclass
class State:
    """The witness's state as read from a stopped process's memory."""

    pid: int
    stop: int
    stops: int
    started: bool
    reached: bool
    how: int
    status: int
    taints: int
    start: str
    reach: str
    taint: str
    launches_own: int = 0
    launches_other: int = 0
    launch_other: str = ""
    parent: int = 0  # the parent when the main program began
    forked_from: int = 0  # a fork's: the process it copies (0: it began its own main program)
    main: int = 0  # MAIN_*

    @property
    def finished(self) -> bool:
        """The main program ended as a finish: finalisation, a clean ``_exit`` from the
        checkout's code, or a program's own exit 0."""
        return self.how == HOW_FINALISED or (self.how in (HOW_EXIT, HOW_PROGRAM)
                                            and self.status == 0)

    @property
    def end(self) -> str | None:
        return {HOW_FINALISED: "finish", HOW_EXIT: f"exit {self.status}",
                HOW_PROGRAM: f"end {self.status}",
                HOW_EXIT_OTHER: f"exit {self.status} from code not the checkout's",
                HOW_RAISED: RAISED.get(self.status, f"SystemExit({self.status})")}.get(self.how)


def parse_state(raw: bytes) -> State:
    """The state from the bytes at the symbol; ValueError when they are not one."""
    if len(raw) < HEADER.size:
        raise ValueError("short read")
    magic, version, size, pid, stop, stops, started, reached, how, status, taints = \
        HEADER.unpack_from(raw)
    if magic.rstrip(b"\0") != MAGIC or version < 1 or size < SIZE:
        raise ValueError(f"no witness state there (magic {magic[:11]!r}, version {version})")
    texts, at = {}, HEADER.size
    for key, n in TEXTS:
        texts[key] = raw[at:at + n].split(b"\0", 1)[0].decode("utf-8", "replace")
        at += n
    own, other, where = LAUNCHES.unpack_from(raw, at)
    parent, forked_from, main, _ = LINEAGE.unpack_from(raw, at + LAUNCHES.size)
    return State(pid, stop, stops, bool(started), bool(reached), how, status, taints, **texts,
                 launches_own=own, launches_other=other,
                 launch_other=where.split(b"\0", 1)[0].decode("utf-8", "replace"),
                 parent=parent, forked_from=forked_from, main=main)


@dataclass(frozen=True)
class Library:
    """Our library as the host built it and as the target's processes map it."""

    host_path: str  # the file the host built
    target_path: str  # where the target's processes see it (the read-only mount)

    @functools.cached_property
    def identity(self) -> tuple[int, int]:
        st = os.stat(self.host_path)
        return st.st_dev, st.st_ino

    @functools.cached_property
    def offset(self) -> int:
        return symbol_offset(self.host_path)


@dataclass
class Seen:
    """What the host saw of one process stopped for it (its latest stop)."""

    pid: int  # in the target's pid namespace (what the record file says)
    host_pid: int
    exe: str | None = None
    state: State | None = None
    #: why the host could not take this stop (no library, a refused read, a preload beside ours)
    problem: str | None = None
    reasons: list[int] = field(default_factory=list)  # the stops it saw: STOP_REACH, STOP_FINISH

    def to_json(self) -> dict[str, Any]:
        st = self.state
        return {"pid": self.pid, "exe": self.exe, "problem": self.problem,
                "stops": self.reasons, "end": st.end if st else None,
                "reached": st.reach if st and st.reached else None,
                "launches": [st.launches_own, st.launches_other] if st else None,
                "parent": st.parent if st else None,
                "forked_from": (st.forked_from or None) if st else None,
                "main": MAIN_NAMES.get(st.main) if st else None}


def _status(host_pid: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


@dataclass(frozen=True)
class Mapping:
    """One file mapping of ``/proc/<pid>/maps``."""

    start: int
    end: int
    perms: str
    offset: int
    device: str
    inode: int
    path: str


def _maps(host_pid: int) -> list[Mapping]:
    rows = []
    for line in Path(f"/proc/{host_pid}/maps").read_text().splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-", 1))
        rows.append(Mapping(lo, hi, parts[1], int(parts[2], 16), parts[3], int(parts[4]),
                            parts[5]))
    return rows


def _same_code(host_pid: int, lib: Library, ours: list[Mapping]) -> bool:
    """Whether the executable mappings of the library hold the host's build, byte for byte:
    the check when the mapping's device and inode are not the host's stat of the file (a
    layered filesystem can report another pair for the same file)."""
    code = [m for m in ours if "x" in m.perms]
    data = Path(lib.host_path).read_bytes()
    try:
        with open(f"/proc/{host_pid}/mem", "rb", buffering=0) as mem:
            for m in code:
                want = data[m.offset:m.offset + (m.end - m.start)]
                mem.seek(m.start)
                if not want or mem.read(len(want)) != want:
                    return False
    except OSError:
        return False
    return bool(code)


def _preloads(host_pid: int) -> list[str]:
    """The process's ``LD_PRELOAD`` as its environment began (best effort: the process can
    rewrite that memory, so an entry found is evidence and none found is not)."""
    with contextlib.suppress(OSError):
        for var in Path(f"/proc/{host_pid}/environ").read_bytes().split(b"\0"):
            if var.startswith(b"LD_PRELOAD="):
                value = var[11:].decode("utf-8", "replace")
                return [p for p in value.replace(" ", ":").split(":") if p]
    return []


def examine(host_pid: int, lib: Library, allowed: frozenset[str] = frozenset()) -> Seen | None:
    """Read a stopped process: None when it is not stopped for the host (not ours to continue).

    ``allowed`` are preloads the run itself set (a repository module's ``LD_PRELOAD``).
    """
    try:
        status = _status(host_pid)
    except OSError:
        return None
    ns_pid = int((status.get("NSpid") or str(host_pid)).split()[-1])
    seen = Seen(ns_pid, host_pid)
    with contextlib.suppress(OSError):
        seen.exe = os.readlink(f"/proc/{host_pid}/exe")
    try:
        maps = _maps(host_pid)
    except OSError as exc:
        seen.problem = _refused("mappings", ns_pid, exc)
        return seen
    dev, ino = lib.identity
    ours = [m for m in maps if m.path == lib.target_path]
    if not ours:
        return None  # no witness in it: not stopped by ours
    if any(m.inode != ino or _devno(m.device) != dev for m in ours) \
            and not _same_code(host_pid, lib, ours):
        seen.problem = (f"pid {ns_pid} maps a file at {lib.target_path} that is not the "
                        "library the host built")
        return seen
    firsts = [m.start for m in ours if m.offset == 0]
    if not firsts:
        seen.problem = f"pid {ns_pid} maps the witness without its first segment"
        return seen
    base = min(firsts)
    state_page = next((m for m in ours if m.start <= base + lib.offset < m.end), None)
    if state_page is None or "w" in state_page.perms:
        seen.problem = (f"pid {ns_pid}: the witness's state page is "
                        f"{'not mapped' if state_page is None else 'writable'} at its stop "
                        "(the witness keeps it read-only)")
        return seen
    mapped = {m.path for m in maps}
    beside = [p for p in _preloads(host_pid) if p != lib.target_path and p not in allowed
              and (p in mapped or any(m.endswith("/" + p) for m in mapped))]
    try:
        with open(f"/proc/{host_pid}/mem", "rb", buffering=0) as mem:
            mem.seek(base + lib.offset)
            raw = mem.read(SIZE)
    except OSError as exc:
        seen.problem = _refused("memory", ns_pid, exc)
        return seen
    try:
        seen.state = parse_state(raw)
    except ValueError as exc:
        seen.problem = f"pid {ns_pid}: {exc}"
        return seen
    if not seen.state.stop:
        return None  # stopped by something else: the target's own job control
    if beside:
        seen.problem = (f"pid {ns_pid} preloads {', '.join(beside[:3])} beside the witness: "
                        "native code that can write its state")
    elif seen.state.pid != ns_pid:
        seen.problem = f"pid {ns_pid} holds the state of pid {seen.state.pid}"
    return seen


def _refused(what: str, pid: int, exc: OSError) -> str:
    return (f"the host may not read the {what} of pid {pid} ({exc.strerror or exc}: not root, "
            "not an ancestor under Yama's ptrace scope, or the process made itself "
            "undumpable), so its finish cannot be taken")


def _devno(text: str) -> int:
    major, _, minor = text.partition(":")
    return os.makedev(int(major, 16), int(minor, 16))


def stopped(host_pid: int) -> bool:
    """Whether the process is in a job-control stop (state ``T``), read by the host."""
    try:
        stat = Path(f"/proc/{host_pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] == ["T"]


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, through each thread's ``children``: cheap enough to read
    every few milliseconds (a full list of ``/proc`` also finds what left the tree)."""
    found, todo = [], [pid]
    while todo:
        pid = todo.pop()
        found.append(pid)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    todo += [int(c) for c in
                             Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def _start_time(host_pid: int) -> str:
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{host_pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]
    return ""


class Observer:
    """A thread watching one command's processes for those the witness stopped.

    ``quick`` lists the processes cheaply (a cgroup, a process tree), ``full`` slowly and
    completely (every ``FULL_POLL`` seconds).  Each stop is taken once: examined, then
    continued; the latest stop of a process is what ``seen`` keeps for it.
    """

    def __init__(self, lib: Library, quick: Callable[[], Iterable[int]],
                 full: Callable[[], Iterable[int]] | None = None,
                 allowed: frozenset[str] = frozenset()) -> None:
        self.lib, self.quick, self.full, self.allowed = lib, quick, full, allowed
        self.seen: dict[int, Seen] = {}
        self._taken: set[tuple[int, str, int]] = set()  # (host pid, start time, stops)
        self._ignored: dict[int, float] = {}  # stopped, not for us: looked at again later
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reb-witness", daemon=True)

    def __enter__(self) -> Observer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(5)
        self.look(self._all())  # a process that stopped as the command ended

    def _all(self) -> set[int]:
        pids = set(self.quick())
        if self.full is not None:
            pids |= set(self.full())
        return pids

    def _run(self) -> None:
        last_full = time.monotonic()
        while not self._done.wait(POLL):
            with contextlib.suppress(Exception):  # a process gone between two reads
                if self.full is not None and time.monotonic() - last_full > FULL_POLL:
                    last_full = time.monotonic()
                    self.look(self._all())
                else:
                    self.look(self.quick())

    def look(self, pids: Iterable[int]) -> None:
        """Take every process of ``pids`` stopped for the host, and continue it."""
        now = time.monotonic()
        for pid in pids:
            if not stopped(pid) or now < self._ignored.get(pid, 0.0):
                continue
            seen = examine(pid, self.lib, self.allowed)
            if seen is None:
                self._ignored[pid] = now + FULL_POLL
                continue
            key = (pid, _start_time(pid), seen.state.stops if seen.state else -1)
            if key not in self._taken:  # a stop seen twice: our SIGCONT has not landed yet
                self._taken.add(key)
                self._keep(seen)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)

    def _keep(self, seen: Seen) -> None:
        before = self.seen.get(seen.pid)
        if before is not None:
            seen.reasons = before.reasons
            seen.problem = seen.problem or before.problem
        if seen.state is not None:
            seen.reasons.append(seen.state.stop)
        self.seen[seen.pid] = seen
