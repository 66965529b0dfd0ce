"""``summary.json``: per target outcomes and the aggregate, with the official denominators.

A tier that does not apply to a repository (skipped ``not_applicable``) leaves
the denominator, as officially; a tier that applies but did not pass counts
as a failure whatever the reason, also as officially.  The helpers here are
the one place the figures are computed: the terminal pyramid, the HTML
chart, ``reb table`` and the official layout all read them.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from pytest_reb.outcome import TIERS, Outcome, count_classes, mib_of, one_line

#: The denominators of the full benchmark (all 44 repositories).
OFFICIAL_DENOMINATORS = {"c0": 2858, "c1": 29, "c2": 44, "c3": 43, "c4": 32}
#: The C5 finding kinds, in the official column order.
HALLUCINATIONS = ("path", "version", "capability")


def applies(o: Outcome) -> bool:
    return not (o.status == "skipped" and o.category == "not_applicable")


def tally(outcomes: list[Outcome]) -> dict[str, dict[str, Any]]:
    """Per tier: passed, failed, not applicable, applicable, and the other verdict's passes.

    ``failed`` is every applicable outcome that did not pass (skips included,
    as officially); ``skipped`` is the part of it that was skipped.
    """
    out: dict[str, dict[str, Any]] = {}
    for tier in TIERS:
        mine = [o for o in outcomes if o.tier == tier]
        if not mine:
            continue
        applicable = [o for o in mine if applies(o)]
        out[tier] = {
            "passed": sum(o.status == "passed" for o in applicable),
            "failed": sum(o.status != "passed" for o in applicable),
            "skipped": sum(o.status == "skipped" for o in applicable),
            "not_applicable": len(mine) - len(applicable),
            "applicable": len(applicable),
            "strict_passed": sum(bool(o.strict) for o in applicable),
            "compat_passed": sum(bool(o.compat) for o in applicable),
            "categories": dict(Counter(o.category for o in applicable
                                       if o.status != "passed" and o.category)),
            "root_causes": root_causes(applicable),
            "mean_duration": mean_duration(applicable),
        }
        if tier == "c0":
            out[tier].update(c0_figure(applicable))
        if tier == "c5":
            out[tier]["hallucinations"] = hallucinations(applicable)
            out[tier]["env_size"] = env_sizes(applicable)
    return out


def mean_duration(outcomes: list[Outcome]) -> float | None:
    """Mean seconds a tier took (resumed outcomes keep the time they took then)."""
    return round(sum(o.duration for o in outcomes) / len(outcomes), 3) if outcomes else None


def missing_count(o: Outcome) -> int | None:
    """C0: how many top-level imports were missing, or None when pyright gave no count."""
    value = o.evidence.get("missing_count")
    return value if type(value) is int and value >= 0 else None


def imports_total(o: Outcome) -> int:
    value = o.evidence.get("imports_total")
    return value if type(value) is int and value >= 0 else 0


def c0_figure(outcomes: list[Outcome]) -> dict[str, int]:
    """C0 over targets: missing imports and totals, counted and not.

    ``missing_imports / imports_total`` is the figure over the targets pyright
    gave a count for; ``imports_unknown`` targets gave none (strict C0 that
    failed).  The official figure counts such a target as 0 missing over its
    whole total: that is ``missing_imports / imports_total_all``.
    """
    known = [o for o in outcomes if missing_count(o) is not None]
    return {
        "missing_imports": sum(missing_count(o) or 0 for o in known),
        "imports_total": sum(imports_total(o) for o in known),
        "imports_unknown": len(outcomes) - len(known),
        "imports_total_all": sum(imports_total(o) for o in outcomes),
    }


def hallucinations(outcomes: list[Outcome]) -> dict[str, int]:
    """C5: findings per kind summed over targets (the official c5_path_sum ...), lower is better."""
    sums = dict.fromkeys(HALLUCINATIONS, 0)
    for o in outcomes:
        counts = o.evidence.get("counts")
        if isinstance(counts, dict):
            for kind in sums:
                value = counts.get(kind)
                sums[kind] += value if type(value) is int else 0
    return sums


def env_sizes(outcomes: list[Outcome]) -> dict[str, Any]:
    """The report interpreters' prefix sizes (recorded by C5): mean over those measured.

    Unmeasured ones are counted apart, never averaged in as zero.
    """
    sizes = [m for m in (mib_of(o.evidence.get("env_size")) for o in outcomes) if m is not None]
    return {"measured": len(sizes), "unknown": len(outcomes) - len(sizes),
            "mean_mib": round(sum(sizes) / len(sizes), 1) if sizes else None}


def root_causes(outcomes: list[Outcome]) -> dict[str, int]:
    """Per root-cause class, how many failed outcomes name it (``diagnose.py``), most first."""
    return count_classes(o.diagnosis for o in outcomes if o.status == "failed")


def root_causes_by_environment(outcomes: list[Outcome]) -> dict[str, int]:
    """Per class, how many (target, repository) pairs failed some tier for it.

    The paper's failure-mode table counts environments, not tiers: a broken
    ``mmcv._ext`` that fails C1, C3 and C4 of one image counts once.
    """
    per_env: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for o in outcomes:
        if o.status == "failed":
            per_env[(o.target, o.repo)].extend(o.diagnosis)
    return count_classes(per_env.values())


def build(outcomes: list[Outcome], *, run_id: str, compat: bool) -> dict[str, Any]:
    """The whole summary document."""
    by_target: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_target[(o.target, o.repo)].append(o)
    targets = []
    for (target, repo), mine in sorted(by_target.items()):
        targets.append({
            "target": target, "repo": repo, "agent": mine[0].agent,
            "integrity": next((o.integrity for o in mine if o.integrity), None),
            "tiers": {o.tier: {"status": o.status, "category": o.category, "message": o.message,
                               "strict": o.strict, "compat": o.compat,
                               "duration": o.duration, "evidence": _short(o),
                               "diagnosis": o.diagnosis}
                      for o in sorted(mine, key=lambda o: o.tier)},
        })
    agents: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        agents[o.agent or "-"].append(o)
    return {
        "run_id": run_id,
        "mode": "compat" if compat else "strict",
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "targets": targets,
        "totals": tally(outcomes),
        "agents": {a: tally(os_) for a, os_ in sorted(agents.items())},
        "root_causes": {"all": root_causes_by_environment(outcomes),
                        "agents": {a: root_causes_by_environment(os_)
                                   for a, os_ in sorted(agents.items())}},
        "official_denominators": OFFICIAL_DENOMINATORS,
        "integrity": dict(Counter(str((t["integrity"] or {}).get("status", "unknown"))
                                  for t in targets)),
    }


def integrity_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per (repository, target) whose checkout is not intact at the pinned commit.

    One line each whatever the finding names (``one_line``): a tracked file's name may hold
    a newline, and the section would print what follows it as a line of its own.
    """
    seen: dict[tuple[str, str], str] = {}
    for o in outcomes:
        if o.integrity and o.integrity.get("status") != "intact":
            seen.setdefault((o.repo, o.target), str(o.integrity.get("line")))
    return [one_line(f"{repo} @ {target}: {line}") for (repo, target), line in sorted(seen.items())]


def _short(o: Outcome) -> dict[str, Any]:
    keep = ("gpu_holders", "observed", "gpus_needed", "gpus_available", "missing", "imports_total",
            "counts", "missing_count", "figure", "env_size")
    return {k: v for k, v in o.evidence.items() if k in keep}
