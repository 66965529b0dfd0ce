"""Root-cause diagnosis on real breakage: each fault happens in an image the suite builds.

``tests/support/breakage.py`` builds the images (a compiled module deleted, a shared
library removed, a symbol gone from an upgraded library, a forced pin, no
ffmpeg, a memory hog).  The end-to-end tests run them through pytest like a
user does and read the outcome log; the table tests classify what those images
printed, captured into ``tests/data/breakage`` by ``python tests/support/breakage.py
capture`` (no log line here is written by hand).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from support import breakage

from pytest_reb.evidence import diagnose
from pytest_reb.loop.demo.checkout import demo_commit
from pytest_reb.outcome import TIER_TITLES, Outcome, OutcomeLog
from pytest_reb.pyramid.ext_sweep import summarise
from pytest_reb.report import summary, terminal

CAPTURED = {p.stem: json.loads(p.read_text()) for p in sorted(breakage.CAPTURED.glob("*.json"))}


# --------------------------------------------------------------------------- the table


def test_every_rule_compiles_names_a_class_and_fills_its_hint() -> None:
    for rule in diagnose.RULES:
        assert rule.cls in diagnose.CLASSES, rule
        pattern = re.compile(rule.pattern)
        hint = diagnose._hint(rule, pattern.match("") or re.match("", ""))
        assert hint and "{" not in hint.replace("{assets}", ""), (rule.cls, hint)


def test_every_fault_was_captured() -> None:
    assert set(CAPTURED) == set(breakage.FAULTS)


@pytest.mark.parametrize("fault", sorted(breakage.FAULTS))
def test_captured_output_gets_the_right_class_with_its_evidence(fault: str) -> None:
    seen = CAPTURED[fault]
    found = diagnose.diagnose(seen["output"], exit_code=seen["exit_code"],
                              timed_out=seen["timed_out"], oom_killed=seen["oom_killed"],
                              tier="c1")
    first = found[0]
    assert first.cls == breakage.FAULTS[fault].expect, [d.to_json() for d in found]
    assert first.evidence and all(len(line) <= diagnose.MAX_LINE for line in first.evidence)
    for line in first.evidence:  # recognised from the output, or said by the host
        assert line.startswith("host: ") or line in seen["output"]
    assert "{" not in first.hint and len(first.hint) < 300


def test_the_fatal_line_wins_and_evidence_is_bounded() -> None:
    """numpy's error repeats the missing module; the class is given once, three lines at most."""
    seen = CAPTURED["ext-deleted"]
    [only] = diagnose.diagnose(seen["output"], exit_code=1)
    assert only.cls == "native_extension"
    assert len(only.evidence) == diagnose.MAX_EVIDENCE
    assert only.evidence[-1] == ("Original error was: No module named "
                                 "'numpy._core._multiarray_umath'")
    assert "numpy._core._multiarray_umath" in only.hint


def test_hints_name_what_to_install() -> None:
    def hint(fault: str) -> str:
        seen = CAPTURED[fault]
        return diagnose.diagnose(seen["output"], exit_code=seen["exit_code"],
                                 oom_killed=seen["oom_killed"])[0].hint

    assert "ffmpeg" in hint("no-ffmpeg")
    assert "libtinyblas.so.1" in hint("lib-removed")
    assert "tb_dot_v1" in hint("symbol-gone")
    assert "rebcore" in hint("pin-conflict") and "legacy_api" in hint("pin-conflict")
    assert "--reb-memory" in hint("memory-hog")


def test_failures_that_are_not_the_environments_are_not_diagnosed() -> None:
    seen = CAPTURED["symbol-gone"]
    assert diagnose.for_run("insufficient_hardware", seen["output"], exit_code=1,
                            timed_out=False, oom_killed=False, tier="c4") == []
    assert diagnose.for_run("deps", seen["output"], exit_code=1, timed_out=False,
                            oom_killed=False, tier="c1")[0]["class"] == "abi_mismatch"


def test_counts_per_tier_and_per_environment() -> None:
    """The same broken extension failing C1 and C3 of one image is one environment."""
    def failed(tier: str, fault: str, target: str) -> Outcome:
        seen = CAPTURED[fault]
        return Outcome("reb/breakage", target, tier, "failed", category="deps", agent="a1",
                       diagnosis=diagnose.for_run("deps", seen["output"],
                                                  exit_code=seen["exit_code"],
                                                  timed_out=seen["timed_out"],
                                                  oom_killed=seen["oom_killed"], tier=tier))

    outcomes = [failed("c1", "symbol-gone", "img1"), failed("c3", "symbol-gone", "img1"),
                failed("c1", "no-ffmpeg", "img2"), failed("c1", "memory-hog", "img3"),
                Outcome("reb/breakage", "img4", "c1", "passed", agent="a2")]
    doc = summary.build(outcomes, run_id="r", compat=False)
    assert doc["totals"]["c1"]["root_causes"] == {"abi_mismatch": 1, "out_of_memory": 1,
                                                  "system_dependency": 1}
    assert doc["totals"]["c3"]["root_causes"] == {"abi_mismatch": 1}
    assert doc["root_causes"]["all"] == {"abi_mismatch": 1, "out_of_memory": 1,
                                         "system_dependency": 1}
    assert doc["root_causes"]["agents"] == {"a1": doc["root_causes"]["all"], "a2": {}}
    assert doc["agents"]["a1"]["c1"]["root_causes"]["abi_mismatch"] == 1
    tiers = {t["target"]: t["tiers"] for t in doc["targets"]}
    assert tiers["img1"]["c1"]["diagnosis"][0]["class"] == "abi_mismatch"
    lines = terminal.pyramid(outcomes, titles=TIER_TITLES)
    assert "root causes: abi_mismatch 1, out_of_memory 1, system_dependency 1" in lines


def test_sweep_summary_classifies_conflicts_and_archs() -> None:
    """Host side of the sweep on what the pin-conflict image's pip check printed."""
    pip_line = breakage.FAULTS["pin-conflict"].sweep["conflict"]
    obs = {"loaded": ["a._x"], "failed": [], "pip_check": {"ran": True, "lines": [pip_line]},
           "with_device_code": [{"module": "flash_attn_2_cuda", "archs": ["sm_80", "sm_86"]}],
           "cuda_runtimes": {"flash_attn_2_cuda": "11"}}
    out = summarise(obs, capabilities=["9.0"], framework_cuda="12.8")
    assert out["conflicts"] == [pip_line]
    assert out["classes"] == {"abi_mismatch": 1, "gpu_arch": 1, "version_conflict": 1}
    assert out["device_code"][0]["supported"] is False
    ok = summarise({**obs, "with_device_code": [{"module": "m", "archs": ["sm_90"]}]},
                   capabilities=["9.0"])
    assert ok["device_code"][0]["supported"] is True


# --------------------------------------------------------------------------- end to end


def run_fault(pytester: pytest.Pytester, images: list[str], argv: list[str], tiers: str,
              *extra: str, commit: str | None = None) -> dict[str, dict[str, Outcome]]:
    """Run the fault's entrypoint as a repository module through pytest; outcomes by target.

    The module pins the fault images' commit (``breakage.checkout``), or ``commit``."""
    cpu = json.dumps(argv)
    pytester.makepyfile(test_breakage=(
        "from pytest_reb import Repo, Run\n"
        f"repo = Repo('reb/breakage', commit='{commit or breakage.checkout()[1]}', "
        "imports_total=3,\n"
        f"            cpu=Run({cpu}, timeout=120))\n"))
    args = [a for image in images for a in ("--reb-image", image)]
    result = pytester.runpytest(*args, "--reb-repo", "reb/breakage", "-m", tiers,
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider", *extra)
    assert result.ret == 1, result.stdout.str()[-3000:]
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    by_target: dict[str, dict[str, Outcome]] = {}
    for o in OutcomeLog(log).latest().values():
        by_target.setdefault(o.target, {})[o.tier] = o
    result.stdout.fnmatch_lines(["*root causes: *"])
    return by_target


@pytest.fixture(scope="session")
def fault_images(docker_client: Any, demo_image: str) -> dict[str, str]:
    problem = breakage.compiler_problem()
    if problem:
        pytest.skip(f"the breakage images need a C compiler on the host: {problem}")
    return {name: breakage.ensure_fault_image(docker_client, demo_image, fault)
            for name, fault in breakage.FAULTS.items()}


def check_run(o: Outcome, expect: str) -> None:
    assert o.status == "failed", o
    first = o.diagnosis[0]
    assert first["class"] == expect, o.diagnosis
    text = o.stdout_tail + "\n" + o.stderr_tail
    assert first["evidence"]
    assert all(line.startswith("host: ") or line in text for line in first["evidence"])
    # the headline names that cause, not whatever line the run printed last (issue 32)
    assert f"({o.category}): {first['class']}: " in o.message, o.message


@pytest.mark.container
@pytest.mark.parametrize("fault", ["ext-deleted", "lib-removed", "symbol-gone", "pin-conflict"])
def test_fault_is_diagnosed_on_c1_and_found_by_the_c2_sweep(
        pytester: pytest.Pytester, fault_images: dict[str, str], fault: str) -> None:
    spec = breakage.FAULTS[fault]
    # always: on this machine (no GPU, torch's CPU build) C2's probe names its own failure
    [tiers] = run_fault(pytester, [fault_images[fault]], list(spec.argv), "c1 or c2",
                        "--reb-ext-sweep=always").values()
    check_run(tiers["c1"], spec.expect)
    sweep = tiers["c2"].evidence["native_extensions"]
    assert sweep["ran"] and sweep["pip_check"] == "ran", sweep
    if "module" in spec.sweep:
        [row] = [r for r in sweep["failed"] if r["module"] == spec.sweep["module"]]
        assert row["class"] == spec.sweep["class"], row
        assert row["hint"]
    else:
        assert spec.sweep["conflict"] in sweep["conflicts"], sweep
        assert sweep["classes"] == {"version_conflict": 1}
    if fault in ("lib-removed", "symbol-gone"):
        assert row["needed"][0] == "libtinyblas.so.1"  # read from the ELF header in the image


@pytest.mark.container
def test_the_sweep_can_be_turned_off(pytester: pytest.Pytester,
                                     fault_images: dict[str, str]) -> None:
    """--reb-no-ext-sweep: C2 still judges, and records no sweep (it costs seconds a target)."""
    spec = breakage.FAULTS["ext-deleted"]
    [tiers] = run_fault(pytester, [fault_images["ext-deleted"]], list(spec.argv), "c1 or c2",
                        "--reb-no-ext-sweep").values()
    check_run(tiers["c1"], spec.expect)
    assert tiers["c2"].status == "failed" and "native_extensions" not in tiers["c2"].evidence


@pytest.mark.container
def test_missing_ffmpeg_and_the_imports_c0_cannot_resolve(
        pytester: pytest.Pytester, fault_images: dict[str, str]) -> None:
    spec = breakage.FAULTS["no-ffmpeg"]
    [tiers] = run_fault(pytester, [fault_images["no-ffmpeg"]], list(spec.argv),
                        "c0 or c1").values()
    check_run(tiers["c1"], "system_dependency")
    assert "ffmpeg" in tiers["c1"].diagnosis[0]["hint"]
    c0 = tiers["c0"]
    assert c0.status == "failed" and c0.category == "deps", c0.message
    [missing] = c0.diagnosis
    assert missing["class"] == "missing_package"
    assert missing["evidence"] == [
        f"import rebdot unresolved ({breakage.REPO}/tools/dot.py:1)",
        f"import rebplugin unresolved ({breakage.REPO}/tools/plugin.py:1)"]


@pytest.mark.container
def test_memory_hog_is_out_of_memory_from_what_the_host_saw(
        pytester: pytest.Pytester, fault_images: dict[str, str]) -> None:
    spec = breakage.FAULTS["memory-hog"]
    [tiers] = run_fault(pytester, [fault_images["memory-hog"]], list(spec.argv), "c1",
                        "--reb-memory", str(spec.memory)).values()
    o = tiers["c1"]
    assert o.exit_code == 137 and o.evidence.get("oom_killed") is True
    assert o.category == "oom"
    check_run(o, "out_of_memory")
    assert o.diagnosis[0]["evidence"][0].startswith("host: the kernel's OOM killer")
    # the container's own limit was reached (its cgroup's peak): raising it is the hint
    assert o.evidence.get("oom_at_own_limit") is True
    assert "--reb-memory" in o.diagnosis[0]["hint"]


def test_an_oom_kill_below_the_limit_is_the_machines_memory() -> None:
    """Killed before the target's own limit was reached: raising --reb-memory would not help."""
    [found] = diagnose.diagnose("", exit_code=137, oom_killed=True, oom_at_limit=False)
    assert found.cls == "out_of_memory" and "before the target's own memory limit" in \
        found.evidence[0]
    assert "--reb-memory" not in found.hint and "machine ran out of memory" in found.hint


@pytest.mark.container
def test_timeout_is_the_hosts_observation(pytester: pytest.Pytester, demo_image: str) -> None:
    argv = ["{python}", "-c", "import time; time.sleep(120)"]
    pytester.makepyfile(test_breakage=(
        "from pytest_reb import Repo, Run\n"
        f"repo = Repo('reb/breakage', commit='{demo_commit()}', imports_total=3,\n"
        f"            cpu=Run({json.dumps(argv)}, timeout=3))\n"))
    result = pytester.runpytest("--reb-image", demo_image, "--reb-repo", "reb/breakage",
                                "-m", "c1", "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider")
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    [o] = OutcomeLog(log).latest().values()
    assert o.timed_out and o.diagnosis[0]["class"] == "timeout", result.stdout.str()[-2000:]


@pytest.mark.container
def test_missing_package_on_c1(pytester: pytest.Pytester, missing_dep_image: str) -> None:
    """The demo image without PyYAML: the demo's own training entrypoint fails to import yaml."""
    argv = ["{python}", "train.py", "--steps", "1", "--out", "{out}/ckpt", "--device", "cpu"]
    [tiers] = run_fault(pytester, [missing_dep_image], argv, "c1",
                        commit=demo_commit()).values()
    check_run(tiers["c1"], "missing_package")
    assert "PyYAML" in tiers["c1"].diagnosis[0]["hint"]


@pytest.mark.container
def test_a_run_over_every_fault_counts_the_classes(
        pytester: pytest.Pytester, fault_images: dict[str, str]) -> None:
    """One run over the six images with one repository module: the run's failure-mode table."""
    by_target = run_fault(pytester, list(fault_images.values()), ["{python}", "entry.py"], "c1",
                          "--reb-memory", "512m")
    assert len(by_target) == len(breakage.FAULTS)
    for name, image in fault_images.items():
        check_run(by_target[image]["c1"], breakage.FAULTS[name].expect)
    [summary_path] = sorted((pytester.path / "reports").glob("*/summary.json"))
    doc = json.loads(summary_path.read_text())
    assert doc["root_causes"]["all"] == {"system_dependency": 2, "abi_mismatch": 1,
                                         "native_extension": 1, "out_of_memory": 1,
                                         "version_conflict": 1}
    assert doc["totals"]["c1"]["root_causes"] == doc["root_causes"]["all"]
