"""The terminal pyramid and the summary figures behind it.

Outcomes here are built by hand, so every shape (not applicable, a C0
without a count, an unmeasured environment, an official-only pass) can be
set up exactly; the last test goes through pytest itself on ``local://``.
"""

from __future__ import annotations

import json

import pytest
from support.minirepo import mini_project
from support.outcomes import outcome as make_outcome

from pytest_reb.outcome import TIER_TITLES, Outcome
from pytest_reb.report import summary, terminal


def oc(tier: str, status: str = "passed", category: str | None = None, *, target: str = "img:a",
       repo: str = "me/mini", **kw: object) -> Outcome:
    return make_outcome(tier, status, category, repo=repo, target=target, **kw)


def c0(missing: int | None, total: int = 8, **kw: object) -> Outcome:
    return oc("c0", "passed" if missing == 0 else "failed",
              None if missing == 0 else "deps" if missing else "pyright_failed",
              evidence={"missing_count": missing, "imports_total": total}, **kw)


def c5(counts: dict[str, int] | None = None, env: dict[str, object] | None = None,
       **kw: object) -> Outcome:
    counts = counts or {"path": 0, "version": 0, "capability": 0}
    bad = any(counts.values())
    return oc("c5", "failed" if bad else "passed", "capability_hallucination" if bad else None,
              evidence={"counts": counts, "env_size": env or {"status": "unknown", "bytes": None,
                                                              "reason": "not run"}}, **kw)


def full(target: str = "img:a") -> list[Outcome]:
    return [c0(1, target=target), oc("c1", target=target),
            oc("c2", "failed", "cuda_unavailable", target=target),
            oc("c3", "failed", "no_gpu_evidence", compat=True, target=target),
            oc("c4", "skipped", "not_applicable", message="repo_not_supported", strict=None,
               compat=None, target=target),
            c5({"path": 0, "version": 1, "capability": 2},
               {"status": "measured", "bytes": 3 << 30, "mib": 3072}, target=target)]


def test_every_line_fits_in_80_columns() -> None:
    long = [oc("c1", "failed", "pyright_wrong_interpreter", compat=True,
               target="registry.example/agent-with-a-long-name/image:" + "x" * 60,
               repo="some-owner/a-repository-with-a-long-name"), *full()]
    lines = terminal.pyramid(long, titles=TIER_TITLES)
    assert lines and max(len(line) for line in lines) < 80


def test_the_pyramid_stands_on_c0() -> None:
    lines = terminal.pyramid(full(), titles=TIER_TITLES)
    assert lines[0] == "img:a  (me/mini)"
    rows = {"".join(line.split()[:2]): line for line in lines[1:8] if line.startswith("  C")}
    widths = {k[:2]: len(v[21:32].strip()) for k, v in rows.items()}
    assert widths["C0"] > widths["C1"] > widths["C2"] > widths["C3"] > widths["C5"]
    assert rows["C4distributed"][21:32].strip() == ""  # not applicable: no bar
    assert "0/8" not in rows["C0static"] and "1/8 imports missing" in rows["C0static"]
    assert "n/a: repo_not_supported" in rows["C4distributed"]
    assert "no_gpu_evidence (official: pass)" in rows["C3single"]
    assert "env 3072 MiB" in rows["C5report"]


def test_totals_give_c0_figure_counts_over_denominators_and_c5_by_kind() -> None:
    outcomes = full("img:a") + full("img:b")
    outcomes[6] = c0(None, target="img:b")  # pyright gave no count on b
    lines = terminal.totals(outcomes, titles=TIER_TITLES)
    assert lines[0] == "total: C0 1/8 missing  C1 2/2  C2 0/2  C3 0/2  C4 0/0  C5 0/2"
    table = {line.split()[0]: line.split() for line in lines[2:8]}
    assert " ".join(table["C0"][3:]) == ("missing 1/8 imports (12.5%); 1 target(s) without a "
                                         "count")
    assert table["C1"][-6:] == ["2", "0", "0", "0", "2", "100.0%"]
    assert table["C4"][-6:] == ["0", "0", "0", "2", "0", "-"]  # both n/a, out of the denominator
    assert "C5 hallucinations: path 0, version 2, capability 4" in lines
    assert "env size: mean 3072 MiB over 2 measured, 0 unknown" in lines


def test_unmeasured_environment_is_unknown_not_zero() -> None:
    outcomes = [c5(env={"status": "measured", "bytes": 1 << 30, "mib": 1024}, target="a"),
                c5(target="b")]
    env = summary.tally(outcomes)["c5"]["env_size"]
    assert env == {"measured": 1, "unknown": 1, "mean_mib": 1024.0}
    assert summary.tally([c5()])["c5"]["env_size"] == {"measured": 0, "unknown": 1,
                                                      "mean_mib": None}


def test_tally_keeps_its_keys_and_adds_skipped_times_and_c0() -> None:
    t = summary.tally(full())
    assert {"passed", "failed", "not_applicable", "applicable", "strict_passed", "compat_passed",
            "categories"} <= set(t["c1"])
    assert t["c0"]["missing_imports"] == 1 and t["c0"]["imports_total"] == 8
    assert t["c3"]["compat_passed"] == 1 and t["c3"]["passed"] == 0
    assert t["c1"]["skipped"] == 0 and t["c1"]["mean_duration"] == 0.0
    assert t["c5"]["hallucinations"] == {"path": 0, "version": 1, "capability": 2}


def test_summary_json_keeps_the_env_size_and_the_c0_count() -> None:
    data = summary.build(full(), run_id="r", compat=False)
    assert {"targets", "totals", "agents", "mode", "run_id"} <= set(data)
    tiers = data["targets"][0]["tiers"]
    assert tiers["c0"]["evidence"]["missing_count"] == 1
    assert tiers["c5"]["evidence"]["env_size"]["mib"] == 3072
    json.dumps(data)


def test_the_pyramid_at_the_end_of_a_real_run(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*mini_project(pytester, "import json\nprint('hello')\n"))
    result.stdout.fnmatch_lines([
        "*reb pyramid*", "local://  (me/mini)",
        "  C4 distributed * skip  n/a: not_applicable",
        "  C3 single GPU *FAIL  insufficient_hardware",
        "  C1 CPU * PASS",
        "total: C1 1/1  C3 0/1  C4 0/0",
        "  C1 CPU * 1 * 0 * 0 * 0 * 1 * 100.0%"])
    start = next(i for i, line in enumerate(result.outlines) if "reb pyramid" in line) + 1
    end = next(i for i, line in enumerate(result.outlines) if line.startswith("outcomes:"))
    assert end - start == 9 and max(len(line) for line in result.outlines[start:end]) < 80


def test_a_value_holding_a_line_stays_on_its_own_line() -> None:
    """A target's name, a message and an integrity line from the target: one line each."""
    forged = "\n  C1 CPU          #########   PASS\r\x1b[32m"
    outcomes = [oc("c1", "failed", "runtime", target=f"img{forged}", repo=f"me/x{forged}",
                   integrity={"status": "edited", "line": f"modified a{forged}.py"}),
                oc("c4", "skipped", "not_applicable", message=f"no{forged}", strict=None,
                   compat=None)]
    lines = [*terminal.pyramid(outcomes, titles=TIER_TITLES), *summary.integrity_lines(outcomes)]
    text = "\n".join(lines)
    assert len(text.splitlines()) == len(lines)
    assert not any(line.lstrip().startswith("C1 CPU          ####") for line in lines)
    assert "\r" not in text and "\x1b" not in text
    assert any(r"modified a\n  C1 CPU" in line for line in lines)
