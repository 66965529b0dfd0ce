"""The ``Outcome`` record and the durable outcome log.

An outcome is what one tier observed on one target.  The tier names and the
size of an environment (``mib_of``) live here too: they are what the reports
read of an outcome, so ``report/`` needs this module and no other.  It is plain JSON-able
data because it must survive three journeys: from an xdist worker to the
controller (on the test report), into ``outcomes.jsonl`` the moment it exists
(so a killed run loses nothing finished), and back out of that file for
``--reb-resume`` and ``reb merge``.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

Status = Literal["passed", "failed", "skipped"]

#: The tiers, in the order they run and print.
TIERS = ("c0", "c1", "c2", "c3", "c4", "c5")
TIER_TITLES = {"c0": "C0 static imports", "c1": "C1 CPU", "c2": "C2 CUDA alignment",
               "c3": "C3 single GPU", "c4": "C4 distributed", "c5": "C5 report audit"}


def pair_key(repo: str, target: str) -> str:
    """The identity of one (repository, target) pair inside a run: what shards divide, what
    a pair refused at collection is recorded under, what a cluster task is given."""
    return f"{repo}|{target}"


def outcome_key(repo: str, target: str, tier: str) -> str:
    """The identity of one tier of one (repository, target) pair inside a run (``Outcome.key``),
    also for an outcome not made yet: what a resumed run is looked up by."""
    return f"{pair_key(repo, target)}|{tier}"


@dataclass
class Outcome:
    """What one tier saw on one target, with both verdicts when they differ.

    ``passed`` is the verdict of the mode the run was in (strict unless
    ``--reb-compat``); ``strict`` and ``compat`` keep both, so a table can show
    how many passes only the official exit-code rule would have given.
    """

    repo: str
    target: str
    tier: str
    status: Status
    category: str | None = None
    message: str = ""
    strict: bool | None = None
    compat: bool | None = None
    command: list[str] | None = None
    exit_code: int | None = None
    timed_out: bool = False
    duration: float = 0.0
    started: float = field(default_factory=time.time)
    stdout_tail: str = ""
    stderr_tail: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    agent: str | None = None
    #: why a failed tier failed: root-cause classes with evidence and a hint (``diagnose.py``)
    diagnosis: list[dict[str, Any]] = field(default_factory=list)
    #: the target's integrity verdict (``verdict.Verdict.to_json``): the same on all its tiers
    integrity: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        """Identity of the item inside one run: repository, target, tier."""
        return outcome_key(self.repo, self.target, self.tier)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known}).as_data()

    def as_data(self) -> Outcome:
        """This outcome with every string in it passed through ``shown``: what the tiers
        return (``Context.once``) and what is read back, so no output shows raw image text."""
        for f in fields(self):
            setattr(self, f.name, _shown_all(getattr(self, f.name)))
        return self


class OutcomeLog:
    """Append-only JSON lines, one outcome per line, safe across xdist workers.

    Each append takes an exclusive ``flock`` and ends with ``fsync``, so lines
    from concurrent workers never interleave and a line that was written
    survives SIGKILL.  Reading tolerates a torn last line (a crash mid-write).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, outcome: Outcome) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(outcome.to_json(), sort_keys=True) + "\n").encode("utf-8")
        with open(self.path, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                # A line torn by a crash must not swallow this one: end it first.  One
                # write(2) per line, so a KeyboardInterrupt cannot land in the middle of it.
                size = os.fstat(fh.fileno()).st_size
                if size and os.pread(fh.fileno(), 1, size - 1) != b"\n":
                    line = b"\n" + line
                view = memoryview(line)
                while view:
                    view = view[os.write(fh.fileno(), view):]
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def __iter__(self) -> Iterator[Outcome]:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    yield Outcome.from_json(json.loads(line))
                except (json.JSONDecodeError, TypeError):
                    continue  # a torn line from a killed writer

    def latest(self) -> dict[str, Outcome]:
        """The last outcome recorded for each (repository, target, tier)."""
        return {o.key: o for o in self}


#: What an image could steer a terminal or a reader with: C0 controls but newline and tab
#: (ESC, CR, BEL, backspace...), DEL, C1 controls, bidi marks, overrides and isolates, and
#: the Unicode line separators.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2028\u2029\u2066-\u2069]")


def shown(text: str) -> str:
    """``text`` as data: each control character written out (``\\x1b``, ``\\u202e``).

    The one escape every output relies on (terminal, HTML, JSON): applied
    where outcomes are made and read, so an image's output that clears the
    screen and prints a green "ALL TIERS PASSED" shows as the bytes it is.
    Idempotent: what it writes is printable.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                        else f"\\u{ord(m[0]):04x}", text)


def one_line(text: object) -> str:
    """``text`` as one line of data: ``shown``, and newlines and tabs written out too.

    For every place that prints a value from the target inside a line of ours
    (a failure message, the pyramid, the integrity section): a file name or a
    report value holding a newline would otherwise print a whole line of its
    own, such as a forged ``C1 CPU ######### PASS``.  ``shown`` keeps newlines
    because a tail of output is many lines; a line of a report is one.
    """
    return shown(str(text)).replace("\n", "\\n").replace("\t", "\\t")


def _shown_all(value: Any) -> Any:
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, list | tuple):
        return [_shown_all(v) for v in value]
    if isinstance(value, dict):
        return {shown(k) if isinstance(k, str) else k: _shown_all(v) for k, v in value.items()}
    return value


def mib_of(evidence: object) -> int | None:
    """The measured environment size in MiB (the official ``env_prefix_size_MB`` unit), or
    None: what C5's ``evidence["env_size"]`` holds when ``env_size.measure`` succeeded."""
    if not isinstance(evidence, dict) or evidence.get("status") != "measured":
        return None
    mib = evidence.get("mib")
    return mib if type(mib) is int and mib >= 0 else None


def classes_of(diagnosis: Iterable[Mapping[str, Any]]) -> list[str]:
    """The distinct root-cause classes of one outcome's ``diagnosis``, in its order."""
    return list(dict.fromkeys(str(d.get("class")) for d in diagnosis if d.get("class")))


def count_classes(diagnoses: Iterable[Iterable[Mapping[str, Any]]]) -> dict[str, int]:
    """Per class, how many of the given diagnoses (one per outcome or target) name it."""
    counter: Counter[str] = Counter()
    for diagnosis in diagnoses:
        counter.update(classes_of(diagnosis))
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


#: What the official cuda stage writes as ``observed`` when its probe printed nothing usable.
OFFICIAL_C2_DEFAULT: dict[str, Any] = {"framework": "unknown", "cuda_available": False,
                                       "gpu_count": 0}


def official_stage(o: Outcome, *, official: bool = False) -> dict[str, Any] | None:
    """The fields of a stage's official ``results.json`` that the official C5 validators read.

    One function for the official-layout writer and for the compat audit, so
    the audit judges exactly what the official validators would read from our
    layout.  ``official`` (compat) writes the cuda stage as the repository's
    own check would have (``evidence["official_cuda"]``, ``compat_c2``): its
    block (none where it writes none) and, for a probe that gave no answer, its
    failure category; or None where it wrote no file.  Otherwise the cuda
    stage has our probe's ``observed`` block, and a failed probe that gave
    none the official default.
    """
    cuda = o.evidence.get("official_cuda") if o.tier == "c2" else None
    if official and isinstance(cuda, dict) and not cuda.get("written", True):
        return None
    status = {"passed": "success", "skipped": "skipped"}.get(o.status, "failure")
    view: dict[str, Any] = {"status": status, "exit_code": 0 if status != "failure" else 1,
                            "failure_category": o.category if status != "success" else None}
    if o.tier == "c2" and official and isinstance(cuda, dict):
        if isinstance(cuda.get("observed"), dict):
            view["observed"] = cuda["observed"]
        if status == "failure" and cuda.get("category"):
            view["failure_category"] = cuda["category"]
    elif o.tier == "c2":
        observed = o.evidence.get("observed")
        if isinstance(observed, dict):
            view["observed"] = observed
        elif status == "failure":
            view["observed"] = dict(OFFICIAL_C2_DEFAULT)
    return view
