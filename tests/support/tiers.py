"""Tiers run through their real probes in one ``Context``, as the fixtures make it, on a target
a test holds (no pytest run around them): what the C5 tests share."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context, tier_probe
from pytest_reb.runs.options import RebOptions
from pytest_reb.selfreport import load_report
from pytest_reb.spec import OFFICIAL_REPORT_PATH, Repo
from pytest_reb.targets import Target

DEMO_MODULE = Path(__file__).resolve().parents[2] / "demo" / "test_demo__tinynet.py"


def demo_repo() -> Repo:
    """The demo's ``repo`` as its module declares it."""
    return runpy.run_path(str(DEMO_MODULE))["repo"]  # type: ignore[no-any-return]


def honest_report(target: Target) -> dict[str, Any]:
    """The demo's truthful report, as the image holds it."""
    raw = target.read_file(OFFICIAL_REPORT_PATH)
    assert raw is not None
    return json.loads(raw)  # type: ignore[no-any-return]


def tier_context(target: Target, report: dict[str, Any] | bytes | None, *,
                 compat: bool = False, ext_sweep: str = "never") -> Context:
    """A context of the demo's repository on ``target`` with ``report``."""
    raw = json.dumps(report).encode() if isinstance(report, dict) else report
    return Context(repo=demo_repo(), target_name="hostile", connect=lambda: target,
                   read_report=lambda _: load_report(raw, source="hostile.json"),
                   options=RebOptions(compat=compat), ext_sweep=ext_sweep)


def run_tiers(target: Target, report: dict[str, Any] | bytes | None, *tiers: str,
              compat: bool = False) -> dict[str, Outcome]:
    """Run ``tiers`` through their real probes, in one context (C2 sweeps the extensions
    whenever it is one of ``tiers``)."""
    ctx = tier_context(target, report, compat=compat,
                       ext_sweep="always" if "c2" in tiers else "never")
    return {tier: ctx.once(tier, tier_probe(tier)) for tier in tiers}
