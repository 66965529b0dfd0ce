"""Compat C2: the official cuda stage's verdict and ``observed`` block, per repository.

The 44 official ``check_cuda_available.py`` were written one by one: most
trust ``torch.cuda.is_available()`` alone, some also want a device, some run
the framework in a child process and judge its exit status.  ``--reb-compat``
must pass C2 where the repository's own check passes it, and the official
validators (C5) read the block that check writes, so both are derived here
from the same evidence, our probe's output and exit status, by the variant the
repository's ``repos/`` module states (``Repo.c2_compat``).

When the interpreter gave no answer at all (no ``python_path``, no such file,
not runnable, a timeout, a crash, nothing or no JSON printed) each official
stage, as its ``run_all.sh`` runs it, leaves its own record: no
``results.json`` (the check itself died, or ran under that interpreter), or a
failure of some category with the block ``false``/``0``, an empty block, no
block, or nulls.  The variant (``variants.C2Variant``) states that record per
``Situation``.  ``tools/compat_c2_differential.py`` checks every statement
against the bundle's ``run_all.sh``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pytest_reb.variants import BLOCKS, C2_MAJORITY, HANG, C2Variant, Situation


@dataclass(frozen=True)
class OfficialC2:
    """What the repository's official cuda stage would have made of our probe's evidence.

    ``written`` is False where the official stage leaves no ``results.json``,
    ``hangs`` True where it never ends (``HANG``);
    ``observed`` None where it writes no block; ``category`` the failure
    category it writes where that is not ours (an unanswered probe).
    """

    passed: bool
    observed: dict[str, Any] | None
    written: bool = True
    category: str | None = None
    hangs: bool = False

    def evidence(self) -> dict[str, Any]:
        """``Outcome.evidence["official_cuda"]``, which the official-layout writer reads."""
        return {"written": self.written, "observed": self.observed,
                **({"category": self.category} if self.category else {}),
                **({"hangs": True} if self.hangs else {})}


def situation(*, python: bool, exit_code: int | None, timed_out: bool, stdout: str,
              stderr: str) -> Situation:
    """How a probe that printed no answer ended (the tier's view of the run).

    A path that could not be started for want of permission is ``not_executable``;
    the tier asks the target whether it is a ``directory``, which the exec error
    does not say."""
    if not python:
        return "no_python"
    if timed_out:
        return "timeout"
    if exit_code in (126, 127) and re.search(r"cannot start|exec failed|OCI runtime", stderr):
        if re.search(r"no such file", stderr, re.I):
            return "missing"
        return "not_executable"
    if exit_code not in (0, None):
        return "failed" if stderr.strip() or stdout.strip() else "crashed"
    return "garbage" if stdout.strip() else "silent"


def unanswered(how: Situation, variant: C2Variant = C2_MAJORITY) -> OfficialC2:
    """The official stage of a probe that gave no answer (a failure, but where the record's
    category is ``success``: two checks pass on an empty answer)."""
    record = getattr(variant, how)
    if record is None or record == HANG:
        return OfficialC2(False, None, written=False, hangs=record == HANG)
    category, _, block = record.partition(":")
    observed = BLOCKS[block or "false"]
    observed = dict(observed) if observed is not None else None
    if category == "success":
        return OfficialC2(True, observed)
    return OfficialC2(False, observed, category=category)


def official_c2(obs: dict[str, Any] | None, exit_code: int | None,
                variant: C2Variant = C2_MAJORITY, how: Situation = "silent") -> OfficialC2:
    """The official verdict and block from the probe's JSON line and exit status.

    ``how`` says how a probe with no JSON line (``obs`` None) ended.
    """
    if obs is None:
        return unanswered(how, variant)
    block = dict(obs)  # the probe's block, where the official one differs overridden
    if obs.get("framework") == "none":  # the probe's own exit 3 says only this
        if variant.no_framework == "absent":
            block = {k: v for k, v in block.items() if k not in ("cuda_available", "gpu_count")}
        elif variant.no_framework == "null":
            block |= {"cuda_available": None, "gpu_count": None}
        return OfficialC2(False, block)
    passed = obs.get("cuda_available") is True
    if exit_code not in (0, None) and variant.failed_exit != "ignored":
        passed = False
        if variant.failed_exit == "unavailable":
            block |= {"cuda_available": False, "gpu_count": 0}
        elif variant.failed_exit == "nulls":
            block |= {"cuda_available": None, "gpu_count": None}
        elif variant.failed_exit == "empty":
            block = {}
    count = obs.get("gpu_count")
    if passed and isinstance(count, int) and count < 1 and variant.no_device != "passes":
        passed = False
        if variant.no_device == "unavailable":
            block["cuda_available"] = False
    return OfficialC2(passed, block)
