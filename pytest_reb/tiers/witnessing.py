"""The entrypoint witness (``pytest_reb.witness``) in one stage: its env, its records, its verdict.

One ``StageWitness`` per stage (attempt): every command of the run (and the
runs started ``together`` with it) gets the preload and a record file of its
own; the records are read back after each command and judged together
against what the first run's shape allows (``witness.expect``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_reb import witness
from pytest_reb.spec import Run
from pytest_reb.target import Target


@dataclass
class StageWitness:
    """What the witness saw of a stage; ``library`` None: the target cannot carry it."""

    target: Target
    checkout: str
    tier: str
    library: str | None = None
    expect: witness.Expect | None = None
    texts: list[str] = field(default_factory=list)

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
        preload = env.get("LD_PRELOAD") or self.target.own_env("LD_PRELOAD")
        # the stage is judged by its first run, so every command looks for that entrypoint
        return {**env, **witness.env_vars(self.library, record, self.expect.entries,
                                          preload)}, record

    def collect(self, record: str | None, devices: Sequence[str]) -> None:
        if record is not None:
            self.texts.append(self.target.take_record(record, devices))

    def problem(self) -> str | None:
        """Why strict cannot take the run as the entrypoint's own, or None."""
        if self.library is None:
            return ("this target cannot carry the entrypoint witness (no C compiler on the host "
                    "to build it, or no way to mount it), so the entrypoint's run is unproven")
        if self.expect is None:
            return "no command of the stage ran under the witness"
        return witness.judge(self.expect, witness.merge(self.texts))

    def evidence(self) -> dict[str, Any]:
        if self.expect is None:
            return {"available": self.library is not None}
        return {"available": True, **witness.summary(self.expect, witness.merge(self.texts))}
