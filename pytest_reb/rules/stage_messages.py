"""How a failed stage (C1, C3, C4; C2's probe) is named: its failure category and its headline.

It is the headline a person reads first (the test's failure line, the
terminal table, the HTML report), so it must name the cause.  A failed run's
last line often does not: programs print a hint after their error
(transformers' "Try: `pip install transformers -U`" follows the version
conflict it found), and a traceback's last line is its exception only when
nothing follows it.  So the headline is, best first: the diagnosis's named
cause (``diagnose.py``: a class and the line it was recognised from), the
final exception line of the last Python traceback, the last line; the last
line stays as detail when it says something else.  A run that torch's elastic
launcher (``torchrun``, ``accelerate launch``) ended is told by the launcher's
root-cause summary (which rank, its exit code or signal) instead of the last
line, and its headline is the failed rank's own exception, not the launcher's
``ChildFailedError`` that follows it.

The category (``categorise``) is the official coarse vocabulary, read from
what the host saw and the output; the diagnosis of *why* is richer and
separate.  What a passed stage's line says is the decision's
(``entrypoint_stage.passed``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_reb.evidence import diagnose
from pytest_reb.evidence.tracebacks import (
    exception_line,
    launcher_summary,
    rank_exception,
    said_lines,
)

if TYPE_CHECKING:  # the host's record of a command; rules read records, never a target
    from pytest_reb.targets.result import ExecResult

#: (category, pattern) in order: the first match names a failed run's category.
FAILURE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cat, re.compile(rx, re.MULTILINE)) for cat, rx in (
        ("pids_limit", r"Resource temporarily unavailable|can't start new thread|"
                       r"fork: retry|BlockingIOError: \[Errno 11\]"),
        ("oom", r"MemoryError|CUDA out of memory|OutOfMemoryError|std::bad_alloc"),
        ("deps", r"ModuleNotFoundError|ImportError|undefined symbol|"
                 r"cannot open shared object file|No module named"),
        ("arch_unsupported", r"no kernel image is available"),
        ("cuda_unavailable", r"Torch not compiled with CUDA|no CUDA GPUs are available|"
                             r"Found no NVIDIA driver|CUDA driver initialization failed"),
        ("entrypoint_not_found", r"can't open file .* No such file or directory|"
                                 r"executable file not found"),
    ))


def categorise(res: ExecResult) -> str:
    """The official failure category of a failed run, from what the host saw.

    A run that hit the pids limit is ``pids_limit`` even when it then timed out:
    a fork bomb never ends by itself, and its cause is the forking, not the clock.
    """
    if res.disk_limited:
        return "disk_limit"
    if res.pids_limited:
        return "pids_limit"
    if res.timed_out:
        return "timeout"
    if res.oom_killed:
        return "oom"
    if res.exit_code == 127 and "cannot start" in res.stderr:
        return "entrypoint_not_found"
    text = res.output[-20000:]
    for category, pattern in FAILURE_PATTERNS:
        if pattern.search(text):
            return category
    if res.exit_code in (137, -9):
        return "oom"
    return "runtime"


#: Longest cause and detail kept in a headline (the diagnosis keeps the full lines).
CAUSE_MAX = 300
DETAIL_MAX = 200
COMMAND_MAX = 160


def diagnosis_of(res: ExecResult, category: str | None, tier: str) -> list[dict[str, Any]]:
    """``Outcome.diagnosis`` of a failed run (``diagnose.for_run`` on what the host saw)."""
    return diagnose.for_run(category, res.output, exit_code=res.exit_code,
                            timed_out=res.timed_out, oom_killed=res.oom_killed, tier=tier,
                            oom_at_limit=res.memory_limit_hit)


def named_cause(diagnosis: Sequence[Mapping[str, Any]]) -> str | None:
    """The first diagnosis's class and the latest line it was recognised from, or None when
    no rule explained the run (``unclassified``)."""
    for d in diagnosis[:1]:
        if d.get("class") == "unclassified":
            return None
        lines = [str(e) for e in d.get("evidence") or [] if not str(e).lstrip().startswith(
            'File "')]  # the importer's frame is where, not what
        if lines:
            return f"{d.get('class')}: {lines[-1].removeprefix('host: ')}"
    return None


def _last_line(text: str) -> str:
    """The last line that says something: not a cut's marker, not a rule of ``=`` or ``-``."""
    lines = said_lines(text.strip())
    return lines[-1].strip() if lines else ""


def clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def failed(res: ExecResult, category: str, diagnosis: Sequence[Mapping[str, Any]]) -> str:
    """The headline of a run that did not exit 0 (or was stopped by the host)."""
    if res.disk_limited:
        return (f"the container's disk use (writable layer, volumes, unlinked open files) grew to "
                f"{(res.disk_used or 0) >> 20} MiB, past the --reb-disk limit; the run was "
                "killed and its container removed")
    if res.timed_out:
        return f"timed out after {res.duration:.0f}s; the process tree was killed"
    text = res.output[-diagnose.MAX_TEXT:]
    launcher = launcher_summary(text)
    last, label = (launcher, "") if launcher else (_last_line(res.output), "last line: ")
    cause = named_cause(diagnosis) or (rank_exception(text) if launcher else exception_line(text))
    head = f"exit {res.exit_code} ({category}): "
    if cause is None or cause == last:
        return head + clip(last, CAUSE_MAX)
    if last in cause:
        return head + clip(cause, CAUSE_MAX)
    return f"{head}{clip(cause, CAUSE_MAX)}; {label}{clip(last, DETAIL_MAX)}"
