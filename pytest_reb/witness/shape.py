"""What a run's shape lets the host require of the witness (``Expect``, from the filled argv).

A file, a module, a ``-c`` command, a launcher and its workers, a shell driver: each asks
for different evidence (which processes must reach the entrypoint, whether one must finish,
which main program is the run's own).  Read from the module's command alone, never from
anything the target says.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

#: ``-m`` launchers whose workers run the script given after their options, one per rank.
LAUNCHER_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch",
                              "accelerate.commands.launch", "deepspeed",
                              "deepspeed.launcher.runner"})
LAUNCHER_PROGRAMS = frozenset({"torchrun", "accelerate", "deepspeed"})


@dataclass(frozen=True)
class Expect:
    """What a run's shape lets the host require of the witness, and the words for it."""

    entries: tuple[str, ...]  # absolute path and package-relative suffixes of the entrypoint
    kind: str  # "python file", "python module", "launcher workers", "shell driver", ...
    workers: int = 1  # processes that must reach the entrypoint
    needs_finish: bool = True  # False for servers and stopped runs: the harness ends them
    command: str | None = None  # the host's own ``-c`` command, when the run is one
    #: the script the run's argv names as its program when the module's entrypoint is another
    #: file (its shim, a driver that runs the entrypoint with runpy): a process whose main
    #: program is that file is the run's, as the entrypoint's own would be
    driver: str | None = None


def entries_of(path: str, checkout: str, cwd: str) -> tuple[str, ...]:
    """The entrypoint as the hook compares it: its absolute path, and its suffixes of two or
    more parts (a package installed in site-packages instead of run from the checkout)."""
    rel = PurePosixPath(path)
    absolute = rel if rel.is_absolute() else PurePosixPath(cwd) / rel
    found = [str(PurePosixPath(os.path.normpath(str(absolute))))]
    if not rel.is_absolute():
        found.append(os.path.normpath(str(PurePosixPath(checkout) / rel)))
        parts = [p for p in rel.parts if p not in (".", "..")]
        found += ["/".join(parts[i:]) for i in range(len(parts) - 1)]
    return tuple(dict.fromkeys(found))


def _module_file(name: str) -> tuple[str, ...]:
    base = name.replace(".", "/")
    return (f"{base}.py", f"{base}/__main__.py")


def expect(argv: Sequence[str], *, python: str, entrypoint: str | None, checkout: str,
           cwd: str, nproc: int, ranks: bool, server: bool, stopped: bool) -> Expect:
    """What to require of a run with this (filled) argv.

    ``entrypoint`` (the module's repo-relative file) wins over what argv
    names; launchers must bring ``nproc`` workers to it when ``ranks``
    (C4's own ranks).  A shell driver gets what the Python it starts shows.
    """
    args = list(argv)
    while args and (args[0] in ("timeout", "/.reb/busybox") or args[0].startswith("-")
                    or args[0][:1].isdigit() or ("=" in args[0] and not args[0].startswith("/"))):
        args = args[1:]  # (our busybox's) timeout, its options and duration, env assignments
    prog = PurePosixPath(args[0]).name if args else ""
    script: str | None = None
    command: str | None = None
    kind = "python file"
    launcher = prog in LAUNCHER_PROGRAMS
    if args and (args[0] == python or prog.startswith("python")):
        rest = args[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
            rest = rest[2:] if rest[0] in ("-W", "-X") else rest[1:]
        if rest[:1] == ["-m"] and len(rest) > 1:
            launcher = rest[1] in LAUNCHER_MODULES
            kind = "launcher workers" if launcher else "python module"
            script = _script_after(rest[2:]) if launcher else None
            module = None if launcher else rest[1]
            if module and entrypoint is None:
                return Expect(_module_file(module), kind, 1, not (server or stopped))
        elif rest[:1] == ["-c"]:
            kind = "python command"
            command = rest[1] if len(rest) > 1 else None
        elif rest:
            script = rest[0]
    elif launcher:
        kind, script = "launcher workers", _script_after(args[1:])
    elif prog in ("sh", "bash", "dash"):
        kind = "shell driver: the Python processes it started"
        script = next((a for a in args[1:] if not a.startswith("-")), None) \
            if "-c" not in args and "-lc" not in args else None
    else:
        kind = f"{prog or 'program'}: the Python processes it started"
    path = entrypoint or script
    workers = nproc if (launcher and ranks) else 1
    needs_finish = not (server or stopped)
    if path is None:
        return Expect((), kind, workers, needs_finish, command)
    entries = entries_of(path, checkout, cwd)
    driver = None  # the script the argv runs, when the module names another file as entrypoint
    if entrypoint and script and not kind.startswith("shell"):
        driver = entries_of(script, checkout, cwd)[0]
        if driver in entries:
            driver = None
    return Expect(entries, kind, workers, needs_finish, command, driver)


def _script_after(args: Sequence[str]) -> str | None:
    """The first ``.py`` argument after a launcher's options (its script)."""
    return next((a for a in args if a.endswith(".py")), None)
