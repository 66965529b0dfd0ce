"""Targets as people name them: ``--reb-image``, ``--reb-host``, or a run matrix file.

A matrix is how agents are benchmarked: many (repository, agent, image,
report) rows in one run.  TOML (``[[target]]`` tables) or JSON lines (one
object a line, ``#`` comments allowed, as the official run matrices):

    [[target]]
    repo = "DepthAnything/Depth-Anything-V2"
    agent = "codex"
    image = "bench/depth-anything:codex"     # or host = "ssh://gpu-node"
    report = "reports/codex/depth.json"      # optional; relative to the file

Every row becomes a ``TargetSpec``; its ``repo`` pins the module, so no
commit lookup is needed, and its ``agent`` labels every outcome.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.targets.base import ImageRef


class MatrixError(ValueError):
    """A matrix that cannot be used, with the file and row in the message."""


#: The prefix of the labels ``reb agent`` commits on the image of a run (``runs/agentfacts``).
AGENT_ENV_LABEL = "reb.agent-env."
#: The label ``reb agent`` commits on the image of a run that ran past its budget.
AGENT_TIMED_OUT_LABEL = f"{AGENT_ENV_LABEL}timed-out"


@dataclass(frozen=True)
class TargetSpec:
    """One target: an image or a testinfra URL, with what the run knows about it."""

    url: ImageRef | str  # an image on this host's engine, or a testinfra URL
    agent: str | None = None
    report: str | None = None  # host path of the agent's report
    repo: str | None = None  # owner/name of the module it belongs to
    #: the image is an agent run that ran past its budget (``AGENT_TIMED_OUT_LABEL``), read
    #: under ``--reb-compat`` only: the official harness scored such a run without probing
    agent_timed_out: bool = False

    @property
    def id(self) -> str:
        """Unique within a run: the agent label, when given, keeps two agents' ids apart."""
        return f"{self.agent}@{self.url}" if self.agent else str(self.url)

    @property
    def image(self) -> str | None:
        """The image's name when the target is one; None for a testinfra URL."""
        return self.url.name if isinstance(self.url, ImageRef) else None


KEYS = {"repo", "agent", "image", "host", "report"}


def load_matrix(path: Path) -> list[TargetSpec]:
    """The rows of a matrix file as targets; a bad row is one clear error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError(f"cannot read {path}: {exc.strerror}") from None
    if path.suffix == ".toml":
        try:
            rows = tomllib.loads(text).get("target", [])
        except tomllib.TOMLDecodeError as exc:
            raise MatrixError(f"{path} is not TOML: {exc}") from None
    else:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    raise MatrixError(f"{path}:{number}: not JSON: {exc}") from None
    specs = [_row(path, i, row) for i, row in enumerate(rows, 1)]
    # one agent's environment on one host may serve several repositories: a name is unique
    # per repository (a row without one can meet every module, so it clashes with all)
    names = [((s.repo or "").lower(), s.id) for s in specs]
    dupes = sorted({name for repo, name in names
                    if sum(n == name and (not r or not repo or r == repo) for r, n in names) > 1})
    if dupes:
        raise MatrixError(f"{path}: targets named twice (give each an agent): "
                          f"{', '.join(dupes)}")
    return specs


def _row(path: Path, number: int, row: Any) -> TargetSpec:
    where = f"{path} row {number}"
    if not isinstance(row, dict):
        raise MatrixError(f"{where}: a row is a table/object, not {type(row).__name__}")
    unknown = set(row) - KEYS
    if unknown:
        raise MatrixError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(KEYS)}")
    if ("image" in row) == ("host" in row):
        raise MatrixError(f"{where}: give exactly one of image or host")
    for key in row:
        if not isinstance(row[key], str) or not row[key]:
            raise MatrixError(f"{where}: {key} must be a non-empty string")
    url = ImageRef(row["image"]) if "image" in row else row["host"]
    report = row.get("report")
    if report is not None and not Path(report).is_absolute():
        report = str(path.parent / report)
    return TargetSpec(url, agent=row.get("agent"), report=report, repo=row.get("repo"))
