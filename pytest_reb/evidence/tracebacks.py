"""What a failed run's output says of its failure, read as Python and torch's launcher print
it: the last traceback's exception line, and, where torch's elastic launcher (``torchrun``,
``accelerate launch``) ended the run, the failed rank's own exception and the launcher's root
cause.

A launch's last lines are the launcher's: its own traceback (``ChildFailedError``, which says
only that a rank failed) and a summary in rules of ``=`` and ``key : value`` fields.  The
rank's error, printed before them, is what a person needs; the summary says which rank
failed and how (an exit code, a signal).  The headline (``rules/stage_messages.py``) and an
unclassified diagnosis (``diagnose.py``) both read them here.
"""

from __future__ import annotations

import re

TRACEBACK = "Traceback (most recent call last):"
#: The exception line that ends a traceback: a (dotted) name, then ``:`` or nothing.
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?::(?:\s|$)|$)")


def said_lines(text: str) -> list[str]:
    """The lines of ``text`` that say something: not a rule of ``=`` or ``-`` (a launcher's
    summary is framed by them), not the marker of a cut (``[... ``)."""
    return [ln for ln in text.splitlines()
            if any(c.isalnum() for c in ln) and not ln.startswith("[... ")]


def exception_line(text: str) -> str | None:
    """The final exception line of the last Python traceback in ``text``, or None.

    Frames and source lines are indented; the exception line is the first
    line after them that is not (``ModuleNotFoundError: ...``,
    ``torch.OutOfMemoryError: ...``, a bare ``KeyboardInterrupt``).
    """
    _, found, after = text.rpartition(TRACEBACK)
    if not found:
        return None
    for line in after.splitlines()[1:]:
        if not line.strip() or line[:1].isspace():
            continue
        return line.strip() if _EXCEPTION.match(line) else None
    return None


#: torch elastic's summary of a failed launch: the first failed rank, one ``key : value`` a line.
_ELASTIC = re.compile(r"^Root Cause \(first observed failure\):\s*\n\[\d+\]:\s*\n"
                      r"(?P<fields>(?:[ \t]+\w[\w ]*?\s*:.*\n?)+)", re.MULTILINE)
_ELASTIC_ERROR = "ChildFailedError"
#: The summary's ``traceback`` field where the rank recorded none (a pointer to the docs) or
#: where it recorded one (its frames follow: the rank's exception line says more).
_NOTRACEBACK = ("To enable traceback", "Traceback")
#: What the launcher puts before each line a rank prints (``[rank1]: Traceback ...``).
_RANK_PREFIX = re.compile(r"^\[rank\d+\]: ?", re.MULTILINE)


def launcher_summary(text: str) -> str | None:
    """torch elastic's root cause of a failed launch in one line (``rank 1 (local_rank: 1)
    exitcode -9 (pid: 57): Signal 9 (SIGKILL) received by PID 57``), or None without one.

    The launcher prints it last, after its own traceback: the run's last lines are rules and
    fields, and its last exception is the launcher's, which says only that a rank failed."""
    summaries = list(_ELASTIC.finditer(text))
    if not summaries:
        return None
    fields = {}
    for line in summaries[-1]["fields"].splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = " ".join(value.split())
    said = " ".join(f"{key} {fields[key]}" for key in ("rank", "exitcode") if fields.get(key))
    why = fields.get("traceback", "")
    if why and not why.startswith(_NOTRACEBACK):
        said = f"{said}: {why}" if said else why
    return f"launcher: {said}" if said else None


def rank_exception(text: str) -> str | None:
    """The failed rank's own exception line: the last traceback's, unless that is the
    launcher's ``ChildFailedError``, then the last one before it, read without the launcher's
    ``[rankN]:`` prefixes (None when the rank printed no traceback: a signal, an ``exit(1)``)."""
    line = exception_line(text)
    if line is not None and _ELASTIC_ERROR in line:
        text, found, _ = text.rpartition(TRACEBACK)
        if not found:
            return None
    return exception_line(_RANK_PREFIX.sub("", text))
