"""The entrypoint witness (``pytest_reb.witness``) in one stage: its env, its records, its verdict.

One ``StageWitness`` per stage (attempt): every command of the run (and the
runs started ``together`` with it) gets the preload and a record file of its
own; the records are read back after each command and judged together
against what the first run's shape allows (``witness.expect``).

The record file is written inside the target, so it only fails a run; what grants one
is what the host read from each process stopped for it (``witness.observe``), whose
executable must be the interpreter the host vetted.  Strict takes even that only where
the host, reading the image from outside before the command ran, found nothing that could
write the witness's state in its place: native code the image loads into every process
before ours can act (its ``ENV LD_PRELOAD``, ``/etc/ld.so.preload``) or an interpreter that
is a static executable (no preload reaches it).  docs/threat-model.md says what is left.
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_reb import witness
from pytest_reb.pids import may_trace
from pytest_reb.spec import Run
from pytest_reb.targets import Target, hostview
from pytest_reb.witness import observe


@dataclass
class StageWitness:
    """What the witness saw of a stage; ``library`` None: the target cannot carry it."""

    target: Target
    checkout: str
    tier: str
    library: str | None = None
    expect: witness.Expect | None = None
    texts: list[str] = field(default_factory=list)
    #: what the host saw of each command's processes stopped for it (None: it cannot see)
    observed: list[dict[int, observe.Seen] | None] = field(default_factory=list)
    #: what the host found, before the first command, that could write the record instead
    forger: str | None = None
    #: the report's interpreter, resolved by the host in the target (None: not resolvable)
    vetted: str | None = None

    @classmethod
    def for_target(cls, target: Target, checkout: str, tier: str) -> StageWitness:
        return cls(target, checkout, tier, target.witness_library())

    def env(self, run: Run, argv: Sequence[str], python: str, cwd: str,
            env: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
        """``env`` with the witness in it, and the record file; the first run sets the rule."""
        if self.library is None:
            return dict(env), None
        exp = witness.expect(argv, python=python, entrypoint=run.entrypoint,
                             checkout=self.checkout, cwd=cwd, nproc=run.nproc,
                             ranks=self.tier == "c4", server=run.http is not None,
                             stopped=run.stop_after is not None
                             or any("timeout --preserve-status" in a for a in argv))
        if self.expect is None:
            self.expect = exp
        record = f"/tmp/reb-witness-{secrets.token_hex(8)}.log"
        own = None if "LD_PRELOAD" in env else self.target.own_env("LD_PRELOAD")
        if own and own.strip(" :") and self.forger is None:
            self.forger = (f"the image preloads {own.strip()[:200]!r} (its ENV LD_PRELOAD) into "
                           "every process: native code that runs beside the witness and can "
                           "write its record")
        if self.forger is None:
            self.forger, self.vetted = _host_forger(self.target, python)
        # the stage is judged by its first run, so every command looks for that entrypoint
        return {**env, **witness.env_vars(self.library, record, self.expect.entries,
                                          env.get("LD_PRELOAD") or own, self.checkout,
                                          witness.stops_for(self.expect),
                                          private=self.tier == "c1" and may_trace())}, \
            record

    def collect(self, record: str | None, devices: Sequence[str]) -> None:
        if record is not None:
            self.texts.append(self.target.take_record(record, devices))
            self.observed.append(self.target.take_observed(record))

    def _processes(self) -> dict[int, witness.Process]:
        """The stage's processes, each stop the host saw checked against the vetted
        interpreter (a program that is not Python is judged by its command line alone)."""
        seen = [o for o in self.observed if o is not None]
        for one in (s for o in seen for s in o.values()):
            st = one.state
            if (one.problem is None and st is not None and st.how != observe.HOW_PROGRAM
                    and self.vetted is not None and one.exe != self.vetted):
                one.problem = (f"pid {one.pid} ran {one.exe}, not the interpreter the host "
                               f"vetted ({self.vetted})")
        return witness.merge(self.texts, seen)

    def problem(self) -> str | None:
        """Why strict cannot take the run as the entrypoint's own, or None."""
        if self.library is None:
            return ("this target cannot carry the entrypoint witness (no C compiler on the host "
                    "to build it, or no way to mount it), so the entrypoint's run is unproven")
        if self.expect is None:
            return "no command of the stage ran under the witness"
        if self.forger is not None:
            return f"the witness's record cannot be taken: {self.forger}"
        if any(o is None for o in self.observed):
            return ("this target cannot watch its processes stop for the witness (no host view "
                    "of them), and the record file alone is the target's to write, so the "
                    "entrypoint's run is unproven")
        return witness.judge(self.expect, self._processes())

    def gpu_problem(self) -> str | None:
        """Why strict cannot take the GPU work as launched by the entrypoint's code, or None."""
        if self.library is None or self.expect is None:
            return self.problem()
        return witness.attribution(self.expect, self._processes())

    def evidence(self) -> dict[str, Any]:
        if self.expect is None:
            return {"available": self.library is not None}
        return {"available": True, "forger": self.forger, "vetted_interpreter": self.vetted,
                **witness.summary(self.expect, self._processes())}


def _host_forger(target: Target, python: str) -> tuple[str | None, str | None]:
    """What the host reads in the target's files that could write the record in the
    witness's place (a system-wide preload, or a static interpreter; None if nothing, or
    no host view: ``ssh://`` says nothing here), and the interpreter as the host resolves
    it, when it is an ELF executable (a process's ``/proc/<pid>/exe`` names that file)."""
    view = hostview.view(target)
    if view is None:
        return None, None
    listed = view.read("/etc/ld.so.preload", 1 << 14) or b""
    lines = [w for line in listed.decode("utf-8", "replace").splitlines()
             for w in line.split("#", 1)[0].split()]
    if lines:
        return (f"/etc/ld.so.preload loads {', '.join(lines[:3])} into every process: native "
                "code that runs beside the witness and can write its record"), None
    head = view.read(python, 1 << 16) or b""
    if _static_elf(head):
        return (f"the interpreter {python} is a static executable: no preload reaches it, so "
                "any record of its run is its own"), None
    resolved = view.resolve(python) if python.startswith("/") else None
    return None, (resolved if head[:4] == b"\x7fELF" else None)


def _static_elf(head: bytes) -> bool:
    """An ELF executable with no program interpreter (``PT_INTERP``): linked statically."""
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2):
        return False
    end = "<" if head[5] == 1 else ">"
    if head[4] == 2:
        phoff, = struct.unpack_from(end + "Q", head, 0x20)
        size, count = struct.unpack_from(end + "HH", head, 0x36)
    else:
        phoff, = struct.unpack_from(end + "I", head, 0x1C)
        size, count = struct.unpack_from(end + "HH", head, 0x2A)
    if size < 4 or phoff + size * count > len(head):
        return False  # headers past what was read: not judged static
    types = [struct.unpack_from(end + "I", head, phoff + i * size)[0] for i in range(count)]
    return 3 not in types  # PT_INTERP
