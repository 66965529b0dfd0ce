"""The integrity verdict of one target: made once, before any tier, and recorded on every outcome.

Every tier measures *the repository at its pinned commit*.  A target whose
checkout is another repository, another commit, or a pruned copy would be
measured against the wrong denominators and entrypoints (issue 20: the demo
image "passed" C0 and C5 for all 44 modules), so the checkout is examined by
the host first (``integrity.examine``) and its verdict decides, in strict
mode, whether a tier may judge the target at all:

- ``other_commit`` (HEAD is not the pinned commit): every tier fails
  ``commit_mismatch``, one line naming both commits, unless the user passed
  ``--reb-allow-commit-mismatch`` (a fork, a later commit): then the working
  tree is compared with its own HEAD and every outcome carries the mismatch;
- ``unverifiable`` (the pinned commit's objects cannot be read, ``.git`` is a
  link elsewhere, the store is over its bounds ...): every tier fails
  ``integrity_unverifiable``: strict fails closed;
- ``edited`` (tracked files modified, deleted or type-changed; untracked files
  that change what a probe does): the tiers those files reach fail
  ``integrity``: a run's entrypoint, tracked code or an untracked ``conftest.py``,
  ``sitecustomize.py`` or config for C1/C3/C4; a tracked Python file,
  an untracked config or a top-level module shadowing an import for C0;
- ``intact``.

Compat mode (the official harness never checked) runs every tier and
records the verdict all the same; the strict verdict is a fail either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_reb.evidence.integrity import EDITS, Examined, entrypoint_edit

#: Tracked files whose edit changes what a stage runs, wherever it is in the checkout.  Not
#: ``.pth``: in a checkout it is weights (``site`` reads ``.pth`` files only in site
#: directories); a weights file the run reads edited fails it as loaded (``rules/loaded``).
CODE_SUFFIXES = (".py", ".so")
#: Tiers whose probes read the checkout's files; C2 and C5 read only the environment.
STAGE_TIERS = frozenset({"c1", "c3", "c4"})


@dataclass
class Verdict:
    """What the host found about a target's checkout, and the mode's consequences."""

    pinned: str
    examined: Examined
    allowed: bool = False  # --reb-allow-commit-mismatch
    status: str = field(init=False)

    def __post_init__(self) -> None:
        kinds = {f.get("kind") for f in self.examined.findings}
        if self.head is not None and self.head != self.pinned:
            self.status = "other_commit"
        elif "unverifiable" in kinds:
            self.status = "unverifiable"
        elif kinds & (EDITS | {"untracked"}):
            self.status = "edited"
        else:
            self.status = "intact"

    @property
    def head(self) -> str | None:
        return self.examined.head

    @property
    def findings(self) -> list[dict[str, Any]]:
        return self.examined.findings

    @property
    def tree(self) -> dict[str, tuple[str, str]] | None:
        """The verified tree of the commit compared against (pinned, or HEAD when allowed);
        None where only the target's own git could compare (``ssh://``)."""
        return self.examined.tree

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [f for f in self.findings if f.get("kind") in kinds]

    def line(self) -> str:
        """One line a person reads first: which commit the checkout is at, and what follows."""
        if self.status == "other_commit":
            head = self.head or "?"
            then = ("allowed by --reb-allow-commit-mismatch: judged against its own commit"
                    if self.allowed else
                    "not judged (pass --reb-allow-commit-mismatch to verify a fork or a "
                    "later commit on purpose)")
            return f"checkout is at commit {head}, not the pinned {self.pinned}: {then}"
        if self.status == "unverifiable":
            why = next((f["detail"] for f in self.of_kind("unverifiable")),
                       "the pinned commit's tree could not be read")
            return f"checkout could not be verified against the pinned {self.pinned}: {why}"
        if self.status == "edited":
            edits, extra = self.of_kind(*EDITS), self.of_kind("untracked")
            names = ", ".join(f"{f['kind']} {f['path']}" for f in (edits + extra)[:5])
            more = len(edits) + len(extra) - 5
            return (f"checkout at the pinned {self.pinned} with {len(edits)} tracked file(s) "
                    f"edited and {len(extra)} untracked probe file(s): {names}"
                    + (f" (+{more} more)" if more > 0 else ""))
        return f"checkout intact at the pinned {self.pinned}"

    def blocks(self, tier: str) -> tuple[str, str] | None:
        """(category, message) when strict fails ``tier`` whatever its probe would see."""
        if self.status == "other_commit" and not self.allowed:
            return "commit_mismatch", self.line()
        if self.status == "unverifiable" or (self.status == "other_commit" and
                                             self.of_kind("unverifiable")):
            return "integrity_unverifiable", self.line()
        return None

    def stage_problem(self, run: Any) -> str | None:
        """Why strict fails a C1/C3/C4 stage: its entrypoint or other tracked code edited, or
        an untracked file that Python or pytest reads on its own or imports instead of a
        tracked or standard module (one that only shadows an installed import counts for C0:
        a stage runs the code it names, untracked or not).  Asked before the run and, on
        what the host reads once the run ended, after it (``tiers.entrypoint``)."""
        edit = entrypoint_edit(self.findings, run)
        if edit is not None:
            return edit
        code = [f for f in self.of_kind(*EDITS) if f["path"].endswith(CODE_SUFFIXES)]
        if code:
            return (f"tracked code the entrypoint can import is not the pinned commit's: "
                    f"{', '.join(f['kind'] + ' ' + f['path'] for f in code[:5])}")
        extra = [f for f in self.of_kind("untracked") if not f.get("shadows")]
        if extra:
            return (f"untracked {', '.join(f['path'] for f in extra[:5])} in the checkout "
                    f"change(s) what the entrypoint runs ({extra[0]['detail']})")
        return None

    def to_json(self) -> dict[str, Any]:
        """What every outcome and ``summary.json`` carry (the findings stay on the outcomes)."""
        return {"status": self.status, "pinned": self.pinned, "head": self.head,
                "reference": self.examined.reference, "tree": self.examined.tree_id,
                "allowed_mismatch": self.allowed and self.status == "other_commit",
                "tracked_files": len(self.tree) if self.tree is not None else None,
                "edits": len(self.of_kind(*EDITS)), "untracked": len(self.of_kind("untracked")),
                "line": self.line()}


def misconfigured(pinned: str, head: str, module: str, matches: str | None) -> dict[str, Any]:
    """The verdict of a pair refused at collection (the checkout belongs to another module)."""
    where = (f"it is the pinned commit of module {matches}" if matches
             else "it is the pinned commit of no collected module")
    return {"status": "misconfigured", "pinned": pinned, "head": head, "reference": None,
            "tree": None, "allowed_mismatch": False, "tracked_files": None, "edits": None,
            "untracked": None,
            "line": (f"refused: checkout is at commit {head}, not {module}'s pinned {pinned}; "
                     f"{where} (pass --reb-allow-commit-mismatch to verify it anyway)")}
