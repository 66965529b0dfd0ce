"""The ``--reb-*`` options of one run, read once from pytest's config into one typed object.

``plugin.py`` declares each option with a type that checks it (``optiontypes.py``); this
module reads the checked values once, with what needs files (``--reb-matrix``) or another
plugin (the default ``--reb-outdir`` a checkout's conftest names), and everything after
hands the one ``RebOptions`` down.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_reb.runs.matrix import TargetSpec, load_matrix
from pytest_reb.runs.shards import parse_shard
from pytest_reb.targets import ImageRef


@dataclass
class RebOptions:
    """The ``--reb-*`` options, read once."""

    targets: list[TargetSpec]
    agent_report: str | None
    python: str | None
    repo_dir: str | None
    repo: str | None
    outdir: Path
    network: str
    gpus: list[str] | None
    timeout_scale: float
    compat: bool
    resume: str | None
    memory: str
    pids: int
    disk: str = "20g"
    shard: tuple[int, int] | None = None
    assets: Path | None = None
    prepare: bool = False
    ext_sweep: bool = True
    #: ``--reb-serial``: every tier in its turn, in the target (no side-by-side lanes)
    serial: bool = False
    allow_mismatch: bool = False
    trusted_hooks: frozenset[str] = frozenset()
    keep_outputs: bool = False

    @classmethod
    def from_config(cls, config: Any) -> RebOptions:
        opt = config.getoption
        report = opt("reb_agent_report")
        targets = [TargetSpec(ImageRef(i), report=report) for i in opt("reb_image") or []]
        targets += [TargetSpec(h, report=report) for h in opt("reb_host") or []]
        if opt("reb_matrix"):
            targets += load_matrix(Path(opt("reb_matrix")))
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
