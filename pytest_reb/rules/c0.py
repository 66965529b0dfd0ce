"""How C0 is decided: what pyright found missing, bound to the report's interpreter.

The stage (``pyramid/c0_imports.py``) runs pyright in the target and gathers a
``StaticEvidence`` record.  Compat is the official rule: the analysis ran, and
its figure is the ``reportMissingImports`` names (a run that produced no count
is the official zero, and fails).  Strict passes only a clean analysis, and
names its failure in this order of blame: pyright not bound to the interpreter
(``pyright_wrong_interpreter``), the checkout not the pinned tree
(``integrity``), imports unresolved (``deps``: the missing names, stub-only
and source-only included), nothing or too little analysed (``pyright_failed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_reb.evidence import diagnose
from pytest_reb.rules.decision import Decision, Mode, decided


@dataclass(frozen=True)
class StaticEvidence:
    """What C0's analysis saw: the binding check, the tree check, both counts of missing
    names (name -> where), how many files pyright analysed of how many tracked ones."""

    python: str
    #: why pyright was not bound to the interpreter (its search paths against ``sys.path``)
    unbound: str | None
    #: tracked Python files edited, deleted or type-changed; untracked files that matter
    tree_problems: Sequence[str]
    #: the names the official rule counts (empty for a module whose official figure is none)
    official: Mapping[str, str]
    #: the names strict counts (missing, source-only, stub-only)
    strict_missing: Mapping[str, str]
    total: int
    analysed: int | None
    #: tracked Python files selected for analysis (None: no verified tree to list them)
    tracked: int | None
    #: pyright analysed fewer files than the tracked ones present
    short: bool
    pyright_version: str | None
    targets: Sequence[str]
    #: import name -> distributions the environment's own metadata says provide it
    installed: Mapping[str, list[str]] = field(default_factory=dict)

    def missing(self, mode: Mode) -> Mapping[str, str]:
        """The names the mode counts."""
        return self.official if mode == "compat" else self.strict_missing


def decide(ev: StaticEvidence, mode: Mode) -> Decision:
    """Strict and compat of C0, named, with the missing packages' diagnosis."""
    missing = ev.missing(mode)
    strict = (ev.unbound is None and not ev.strict_missing and bool(ev.analysed)
              and not ev.tree_problems and not ev.short)
    total, analysed = ev.total, ev.analysed
    of = " files" if ev.tracked is None else f" of {ev.tracked} tracked Python files"
    category: str | None = None
    if ev.unbound is not None:
        category = "pyright_wrong_interpreter"
        message = f"pyright was not bound to {ev.python}: {ev.unbound}"
    elif ev.tree_problems and mode == "strict":
        problems = ev.tree_problems
        category = "integrity"
        message = (f"the checkout is not the pinned tree: {'; '.join(problems[:10])}"
                   f"{' ...' if len(problems) > 10 else ''}; {len(missing)} of {total} "
                   f"imports unresolved; pyright analysed {analysed}{of}")
    elif missing:
        category = "deps"
        message = (f"{len(missing)} of {total} imports unresolved: {', '.join(missing)}; "
                   f"pyright analysed {analysed}{of}")
    elif not analysed or ev.short:
        category = "pyright_failed"
        message = f"pyright analysed {analysed}{of} (targets {list(ev.targets)})"
    else:
        message = (f"0 of {total} imports unresolved; pyright {ev.pyright_version} analysed "
                   f"{analysed}{of} bound to {ev.python}")
    chosen = True if mode == "compat" else strict
    diagnosis = (diagnose.missing_packages(sorted(missing), dict(missing), ev.python,
                                           dict(ev.installed))
                 if not chosen and missing and ev.unbound is None else [])
    return decided(strict, True, mode, category, message, diagnosis)


def no_count(category: str, message: str, mode: Mode) -> Decision:
    """A C0 run that produced no count: the official zero fails compat, strict has no figure."""
    return decided(False, False, mode, category, message)
