"""Known fakes are the target's, not one tier's: every outcome of a target carries them.

The known-fakes scan (``fakescan``) runs once per target, whichever tier asks
first, and each finding is put on every outcome with ``could_produce``: whether
that kind of fake can make that tier's verdict come out as it did.  A startup
hook runs before every entrypoint and probe, so it could have produced any
run tier's verdict (a pass it faked, or the failure it caused); a fake
``nvidia-smi`` cannot touch a verdict the host reads through NVML, only a
report written from its output (C5).  Strict says so on the verdict's message;
the verdict itself still comes from the positive evidence, with one exception: a
startup hook (a ``.pth`` with code, a ``sitecustomize``/``usercustomize``, an import
hook installed at start-up) that no installed distribution owns (listed with a matching
hash in its ``RECORD``, or in a Debian package's ``md5sums``: the host's reading) fails
a strict C3 or C4 pass with ``startup_hook``: it runs before the entrypoint and can do
the GPU work the pass rests on in its place.  (C1's pass rests on the witness, which no
Python hook can write, so there the hook stays a note.)  The hooks pip installs for
ordinary packages are owned and keep passing.  C5's ``findings`` are its audit
rules, so there the fakes go under ``evidence["known_fakes"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_reb.outcome import Outcome

RUN_TIERS = frozenset({"c1", "c2", "c3", "c4"})
ALL_TIERS = frozenset({"c0", *RUN_TIERS, "c5"})
#: Verdicts reached before anything of the environment ran: no finding produced them.
DECIDED_BEFORE_RUNNING = frozenset({"insufficient_hardware", "data", "model", "not_applicable"})

#: Findings that are code run at every interpreter start.
HOOK_KINDS = frozenset({"startup_hook", "cuda_hook"})
#: Tiers whose pass rests on evidence such a hook can produce itself: GPU work.
HOOK_DECIDES = frozenset({"c3", "c4"})

#: Kind of finding -> the tiers whose verdict it could have produced.
COULD_PRODUCE: Mapping[str, frozenset[str]] = {
    "startup_hook": RUN_TIERS | {"c5"},
    "cuda_hook": frozenset({"c2", "c3", "c4", "c5"}),
    "stub_extension": ALL_TIERS,
    "python_wrapper": ALL_TIERS,
    "fake_nvidia_smi": frozenset({"c5"}),
    "nvidia_smi_without_gpu": frozenset({"c5"}),
    "ld_preload": RUN_TIERS,
}


def attach(outcome: Outcome, found: Iterable[Mapping[str, Any]], *, strict: bool) -> None:
    """Put the target's findings on ``outcome``, each saying whether it could have produced
    the verdict; in strict mode the message says which did."""
    into = (outcome.evidence.setdefault("known_fakes", []) if outcome.tier == "c5"
            else outcome.findings)
    have = {(f.get("kind"), f.get("path")) for f in into}
    could: list[str] = []
    for f in found:
        key = (f.get("kind"), f.get("path"))
        if key in have:
            continue
        have.add(key)
        kind = str(f.get("kind"))
        yes = (outcome.tier in COULD_PRODUCE.get(kind, ALL_TIERS)
               and outcome.category not in DECIDED_BEFORE_RUNNING)
        into.append({**f, "could_produce": yes})
        if yes:
            could.append(f"{kind} ({f.get('path')})")
    unowned = [f"{f.get('path')} (sha256 {f.get('sha256') or 'unread'})" for f in into
               if f.get("could_produce") and f.get("kind") in HOOK_KINDS
               and not f.get("owner") and outcome.tier in HOOK_DECIDES]
    passed = outcome.status == "passed"
    if unowned and outcome.strict:
        outcome.strict = False  # recorded in compat runs too; compat keeps its own verdict
        if strict and passed:
            outcome.status, outcome.category = "failed", "startup_hook"
            outcome.message = (
                "a startup hook that no installed distribution owns runs before the "
                f"entrypoint and could have produced this pass: {', '.join(unowned[:3])}; "
                "a hook of this machine's own is trusted with --reb-trust-hook SHA256 "
                f"(was: {outcome.message or 'passed'})")
            return
    if strict and could and outcome.status != "skipped":
        verdict = "pass" if passed else "failure"
        note = (f"known fakes in the target that could have produced this {verdict}: "
                f"{', '.join(dict.fromkeys(could))}")
        outcome.message = f"{outcome.message}; {note}" if outcome.message else note
