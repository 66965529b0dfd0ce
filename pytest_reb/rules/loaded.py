"""Strict C1/C3/C4: every file the run loaded is the pinned checkout, an installed
distribution's own file, or the standard library.

The evidence is ``provenance.facts``: the files the kernel saw the stage's processes
open (``evidence/loaded.py``), each with where it lies and which layer wrote it.  A
file passes when it is:

- a tracked file of the checkout, not edited (``edited``: the integrity check's
  findings) and not written by the container, even with its bytes restored;
- a file of an installed distribution that its ``RECORD`` lists with this file's hash,
  where no ``RECORD`` copy of an image layer disagrees, and the ``RECORD`` is no later
  than the file (a ``RECORD`` rewritten above the files it vouches for proves nothing);
- a file of the interpreter's standard library that no layer above the interpreter's
  own rewrote, and the container did not write;
- a module file written outside the checkout during this very stage, or an earlier stage of
  the same container whose loaded files were all sound (caches that checked code
  generated: ``torch.compile``'s, Triton's, bytecode).

Anything else the run loaded fails strict, naming the file: untracked modules in the
checkout in any form (source, sourceless bytecode, extensions, a ``.pth``), modules
reached outside the checkout, the distributions and the standard library (a symlinked
package), installed files that do not match, and whatever the container wrote before
this stage and the stage then loaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Files named in one message.
NAMED = 4


def problem(record: Mapping[str, Any] | None, edited: Iterable[str] = (),
            named: Iterable[str] = ()) -> str | None:
    """Why strict fails the stage on what it loaded, or None.

    ``record`` is None where the host has no such channel for the target (``local://``,
    ``ssh://``, records made before it existed): the checks before and after the run
    are then all there is, and the outcome's evidence says so.
    """
    if record is None:
        return None
    if record.get("incomplete"):
        return f"what the run loaded is not known in full: {record['incomplete']}"
    bad = refusals(record, edited, named)
    if not bad:
        return None
    more = f" (+{len(bad) - NAMED} more)" if len(bad) > NAMED else ""
    return "the run loaded " + "; ".join(bad[:NAMED]) + more


def refusals(record: Mapping[str, Any], edited: Iterable[str] = (),
             named: Iterable[str] = ()) -> list[str]:
    """One line per loaded file that strict refuses, naming it and why.  ``edited``: the
    tracked files the integrity check found edited; ``named``: the checkout-relative
    scripts the run names as its entrypoints, which it runs whether tracked or not."""
    edits, names = set(edited), set(named)
    return [why for row in record.get("files", ())
            if (why := _row(row, edits, names)) is not None]


def _row(row: Mapping[str, Any], edits: set[str], named: set[str]) -> str | None:
    path, where, layer = row.get("path", "?"), row.get("where"), row.get("layer")
    if where == "checkout":
        rel = row.get("rel", path)
        if row.get("tracked"):
            if rel in edits:
                return f"{rel}, a tracked file that is not the pinned commit's"
            if layer == 0:
                return (f"{rel}, a tracked file the container wrote (even if its bytes were "
                        "put back)")
            return None
        if rel in named and layer != 0:
            return None
        return f"{rel}, an untracked module of the checkout"
    if layer in (0, None):
        if row.get("in_image"):
            return f"{path}, a file of the image that the container changed"
        if row.get("this_stage"):
            return None  # written by checked code in a watched stage: a cache it made
        return f"{path}, a module written in the container outside a checked stage"
    if where == "site":
        return _installed(row, path)
    if where == "stdlib":
        os_layer = row.get("os_layer")
        if os_layer is None or layer < os_layer:
            return (f"{path}, a standard-library file that a layer above the interpreter's "
                    "wrote")
        return None
    return f"{path}, a module outside the checkout, the distributions and the standard library"


def _installed(row: Mapping[str, Any], path: str) -> str | None:
    """A file under ``site-packages``: its ``RECORD`` copies, layer by layer, decide."""
    if not row.get("listed"):
        return f"{path}, which no installed distribution's RECORD lists"
    dist = row.get("dist", "?")
    if row.get("unhashed"):
        return f"{path}, which {dist}'s RECORD lists without a hash"
    if row.get("disagree"):
        layers = row["disagree"]
        if not row.get("agree"):
            return f"{path}, which does not match {dist}'s RECORD"
        return (f"{path}, which {dist}'s RECORD vouches for but an earlier layer's RECORD "
                f"(layer {max(layers)} from the top) does not: the RECORD was rewritten")
    layer, record_layer = row.get("layer"), row.get("record_layer")
    if record_layer is not None and layer is not None and not any(
            lay >= layer for lay in row.get("agree", ())):
        return (f"{path}, whose RECORD ({dist}) was written in a layer above the file: a RECORD "
                "later than its files is no proof")
    return None
