"""The ``--reb-*`` options of one run, read once from pytest's config into one typed object.

``plugin/hooks.py`` declares each option with a type that checks it
(``plugin/optiontypes.py``); this module reads the checked values once, with
what needs files (``--reb-matrix``), another plugin (the default ``--reb-outdir``
a checkout's conftest names) or the engine (an agent run's timeout label), and
everything after hands the one ``RebOptions`` down: the session, collection,
and each pair's ``Context``, which holds it whole.  So a new option touches its
declaration, its field here and the code that reads it.  It lives outside
``plugin/`` because the pyramid reads it and imports nothing of pytest's side.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_reb.runs.matrix import AGENT_TIMED_OUT_LABEL, TargetSpec, load_matrix
from pytest_reb.runs.shards import parse_shard
from pytest_reb.targets import ImageRef
from pytest_reb.targets.housekeeping import image_labels


@dataclass
class RebOptions:
    """The ``--reb-*`` options, read once; the defaults are the command line's."""

    targets: list[TargetSpec] = field(default_factory=list)
    agent_report: str | None = None
    #: ``--reb-python``: the interpreter every tier runs instead of the report's
    python: str | None = None
    #: ``--reb-repo-dir``: where the checkout is in the target instead of the module's place
    repo_dir: str | None = None
    repo: str | None = None
    outdir: Path = Path("reports")
    network: str = "none"
    gpus: list[str] | None = None
    timeout_scale: float = 1.0
    compat: bool = False
    resume: str | None = None
    memory: str = "16g"
    pids: int = 2048
    disk: str = "20g"
    shard: tuple[int, int] | None = None
    assets: Path | None = None
    prepare: bool = False
    #: ``--reb-ext-sweep``: ``auto``, ``always`` or ``never`` (``rules/c2.sweep_wanted``)
    ext_sweep: str = "auto"
    #: ``--reb-serial``: every tier in its turn, in the target (no side-by-side lanes)
    serial: bool = False
    #: ``--reb-allow-commit-mismatch``: a checkout at another commit is judged, not refused
    allow_mismatch: bool = False
    #: ``--reb-trust-hook``: sha256 digests of startup hooks the operator vouches for
    trusted_hooks: frozenset[str] = frozenset()
    #: ``--reb-keep-outputs``: a stage's ``{out}`` folder stays in the target after it
    keep_outputs: bool = False

    @classmethod
    def from_config(cls, config: Any) -> RebOptions:
        opt = config.getoption
        report = opt("reb_agent_report")
        targets = [TargetSpec(ImageRef(i), report=report) for i in opt("reb_image") or []]
        targets += [TargetSpec(h, report=report) for h in opt("reb_host") or []]
        if opt("reb_matrix"):
            targets += load_matrix(Path(opt("reb_matrix")))
        if opt("reb_compat"):  # scored as officially: an agent timeout is every tier's
            targets = [replace(t, agent_timed_out=_timed_out(t)) for t in targets]
        gpus = opt("reb_gpus")
        assets = Path(opt("reb_assets")) if opt("reb_assets") else None
        if assets is not None and assets.exists() and not assets.is_dir():
            raise ValueError(f"--reb-assets {assets}: not a folder (the asset cache is one)")
        outdir = opt("reb_outdir")
        if outdir is None:  # a checkout's root conftest names its own reports/ (hookspecs.py)
            outdir = config.hook.pytest_reb_default_outdir(config=config) or "reports"
        return cls(
            targets=targets, agent_report=report, python=opt("reb_python"),
            repo_dir=opt("reb_repo_dir"), repo=opt("reb_repo"), outdir=Path(outdir),
            network=opt("reb_network"),
            gpus=None if gpus is None else [g.strip() for g in gpus.split(",") if g.strip()],
            timeout_scale=opt("reb_timeout_scale"), compat=opt("reb_compat"),
            resume=opt("reb_resume"), memory=opt("reb_memory"), pids=opt("reb_pids"),
            disk=opt("reb_disk"),
            shard=parse_shard(opt("reb_shard")) if opt("reb_shard") else None,
            assets=assets,
            prepare=opt("reb_prepare"), ext_sweep=opt("reb_ext_sweep"), serial=opt("reb_serial"),
            allow_mismatch=opt("reb_allow_commit_mismatch"),
            trusted_hooks=frozenset(opt("reb_trust_hook") or ()),
            keep_outputs=opt("reb_keep_outputs"))


def _timed_out(spec: TargetSpec) -> bool:
    """Whether the target is the image of an agent run that ran past its budget (its
    label, metadata the engine keeps, never the image's files)."""
    return spec.image is not None and image_labels(spec.image).get(AGENT_TIMED_OUT_LABEL) == "true"
