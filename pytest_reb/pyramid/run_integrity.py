"""Integrity for the run, not only before it: what a stage could load, checked again after it.

The checkout is examined once before any tier (``verdict``), but code of the
image runs between that check and the entrypoint's imports: a ``.pth`` can
edit ``train.py`` as the stage's interpreter starts, or drop a package beside a
tracked module.  So every stage is judged on two host-side reads of its
checkout, before it and once its commands ended (every process of them killed,
the container frozen for the read, ``integrity.examine``): an edit of tracked
code, or an untracked file that Python imports instead of tracked or standard
code, found in either fails strict.

Bytecode is the one thing both reads would miss: Python runs a ``__pycache__``
file whose header matches its source without reading the source.  Stages keep
their bytecode under a folder of the host's choosing (``PYTHONPYCACHEPREFIX``,
a name the image cannot know in advance, ``Target.stage_bytecode``), so none of
the checkout's is ever read: what a stage finds there is only what the host
compiled itself from the source, checked by hash (``bytecode``);
unchecked-hash bytecode, which no honest build leaves in a checkout, is a
finding of the check itself.

Both reads miss what the run loaded from elsewhere, and an edit undone before the run
ended: so the host also has the kernel report every file the stage's processes opened
(``evidence/loaded.py``), places each (``evidence/provenance.py``) and
``rules/loaded.py`` decides (``loaded_during``); docs/threat-model.md says on which
channel that rests and what remains.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_reb.evidence import loaded, provenance
from pytest_reb.evidence.integrity import EDITS
from pytest_reb.pyramid.context import Context
from pytest_reb.rules import loaded as loaded_rule
from pytest_reb.targets import InfraError, imagecache
from pytest_reb.targets.bytecode import PYCACHE_ENV


def watch_loads(ctx: Context, profile: str, gpus: Sequence[str]) -> loaded.Watch | None:
    """Start the kernel's report of what the stage's processes open (None: no such channel
    for this target, or a checkout the host could not verify: nothing to compare with)."""
    if ctx.checkout_verdict.tree is None:
        return None
    return loaded.start(ctx.target, ctx.target.devices(profile, gpus))  # type: ignore[arg-type]


def _named(run: Any, checkout: str) -> list[str]:
    """Checkout-relative files the run's commands name (its ``entrypoint`` and each argument
    that is a path under the checkout): the module's own choice of what to run."""
    base = checkout.rstrip("/") + "/"
    out = []
    for r in (run, *getattr(run, "together", ())):
        args = [a for a in (getattr(r, "entrypoint", None), *getattr(r, "argv", ()))
                if isinstance(a, str) and a and not a.startswith(("-", "{"))]
        args += [a[len("{repo}/"):] for a in getattr(r, "argv", ())
                 if isinstance(a, str) and a.startswith("{repo}/")]
        out += [posixpath.normpath(a.removeprefix(base)) for a in args
                if not a.startswith("/") or a.startswith(base)]
    return out


def loaded_during(ctx: Context, watch: loaded.Watch | None, pycache: Mapping[str, str],
                  run: Any) -> tuple[dict[str, Any] | None, str | None]:
    """What the outcome keeps of the stage's loaded files (how many the kernel reported, how
    many could change what runs, the ones refused) and why strict fails on them.

    The stage's own bytecode folder (``pycache``: made for this stage, seeded by the host
    with checked-hash files, then what its interpreters compiled) is the harness's; the
    scripts the run names as its entrypoints are the module's choice, tracked or not.
    """
    if watch is None:
        return None, None
    watch.close()
    tree = ctx.checkout_verdict.tree or {}
    ours = tuple(v for k, v in pycache.items() if k == PYCACHE_ENV)
    record = provenance.facts(watch, ctx.checkout, set(tree), imagecache.image_id(ctx.target),
                              ours=ours)
    edits = [f["path"] for f in ctx.checkout_verdict.findings if f.get("kind") in EDITS]
    named = _named(run, ctx.checkout)
    kept = {"channel": record["channel"], "opened": record["opened"],
            "checked": len(record["files"]), "incomplete": record["incomplete"],
            "refused": loaded_rule.refusals(record, edits, named)[:20]}
    problem = loaded_rule.problem(record, edits, named)
    if problem is None:
        watch.checked()  # what this stage wrote, a later stage of the container may load
    return kept, problem


def changed_during(ctx: Context, run: Any) -> str | None:
    """Why strict fails the stage on the checkout as its run left it, or None.

    Compared against the same commit as the check before the run; a container
    lost under the read is examined once more, then it is the tier's ``infra``.
    """
    from pytest_reb.evidence import integrity
    from pytest_reb.rules.integrity_verdict import Verdict

    before = ctx.checkout_verdict
    if before.tree is None:  # no host view (``ssh://``): the target's git said it once
        return None
    against = before.examined.reference
    try:
        seen = integrity.examine(ctx.target, ctx.checkout, against,
                                 against_head=against != before.pinned)
    except InfraError:
        return "the checkout could not be read again after the run (its container was lost)"
    after = Verdict(before.pinned, seen, allowed=before.allowed)
    earlier = {(f.get("kind"), f.get("path")) for f in before.findings}
    new = [f for f in after.findings if (f.get("kind"), f.get("path")) not in earlier]
    if any(f.get("kind") == "unverifiable" for f in new):
        return "the checkout could not be verified again after the run: " + next(
            f["detail"] for f in new if f.get("kind") == "unverifiable")
    problem = Verdict(before.pinned, integrity.Examined(against, new, seen.head, seen.tree_id,
                                                        seen.tree),
                      allowed=before.allowed).stage_problem(run)
    return f"during the run, {problem}" if problem else None
