"""C5 against hostile reports, on real containers, end to end.

An image derived from the demo holds what a hostile agent could leave: a
script that prints a fake version, a file that is not executable, a venv
reachable through a path with spaces and quotes, and venvs reachable through
paths that would run ``touch /tmp/pwned`` if anything put them through a
shell.  The tiers run for real against it (C1, C2 and C5 in-process through
their probes; C5 through pytest itself with pytester), and afterwards the
container is asked whether ``/tmp/pwned`` exists.  The reports are also
hostile as bytes: 100 MB, 10^5-deep, not UTF-8, NaN and huge numbers.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.tiers import DEMO_MODULE, honest_report, run_tiers

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.selfreport import MAX_REPORT_BYTES, load_report
from pytest_reb.spec import OFFICIAL_REPORT_PATH
from pytest_reb.targets import DockerTarget, Limits
from pytest_reb.targets.base import LABEL_RUN

pytestmark = pytest.mark.container

VENV = "/opt/envs/tinynet"
SPACES = "/opt/my env/it's \"quoted\"/bin/python"
#: Real venv interpreters whose paths would run `touch /tmp/pwned` through a shell.
INJECTIONS = ["/opt/inj/x; touch /tmp/pwned; y/bin/python",
              "/opt/inj/$(touch /tmp/pwned)/bin/python",
              "/opt/inj/`touch /tmp/pwned`/bin/python"]
HOSTILE_DOCKERFILE = r"""FROM {base}
RUN printf '#!/bin/sh\necho 3.11.2\n' > /opt/fakepy && chmod 755 /opt/fakepy \
 && printf 'print(1)\n' > /opt/noexec && chmod 644 /opt/noexec \
 && mkdir -p "/opt/my env" '/opt/inj/x; touch /tmp' '/opt/inj/$(touch /tmp' '/opt/inj/`touch /tmp' \
 && ln -s {venv} "/opt/my env/it's \"quoted\"" \
 && ln -s {venv} '/opt/inj/x; touch /tmp/pwned; y' \
 && ln -s {venv} '/opt/inj/$(touch /tmp/pwned)' \
 && ln -s {venv} '/opt/inj/`touch /tmp/pwned`'
"""


@pytest.fixture(scope="session")
def hostile_image(docker_client: Any, demo_image: str) -> str:
    """The demo image plus a hostile agent's leftovers (tagged by recipe, built once)."""
    base = docker_client.images.get(demo_image).id
    dockerfile = HOSTILE_DOCKERFILE.format(base=base, venv=VENV)
    tag = f"reb-demo:hostile-{hashlib.sha256(dockerfile.encode()).hexdigest()[:12]}"
    if not docker_client.images.list(name=tag):
        docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True,
                                   forcerm=True, pull=False, network_mode="none")
    return tag


@pytest.fixture(scope="module")
def target(hostile_image: str) -> Iterator[DockerTarget]:
    t = DockerTarget(hostile_image, run_id="tests-c5", gpus=[],
                     limits=Limits(memory="2g", pids=256))
    yield t
    t.close()


@pytest.fixture(scope="module")
def honest(target: DockerTarget) -> dict[str, Any]:
    """The demo's truthful report, as the image holds it."""
    return honest_report(target)


def rules(outcome: Outcome, mode: str) -> tuple[str | None, set[str]]:
    side = outcome.evidence[mode]
    return side["category"], {f["rule"] for f in side["findings"]}


def pwned(target: DockerTarget) -> bool:
    return target.exec(["test", "-e", "/tmp/pwned"], timeout=15).exit_code == 0


# --------------------------------------------------------------------------- interpreters


def test_honest_report_passes_in_both_modes(target: DockerTarget,
                                            honest: dict[str, Any]) -> None:
    c5 = run_tiers(target, honest, "c5")["c5"]
    assert (c5.status, c5.strict, c5.compat) == ("passed", True, True), c5.message
    assert c5.evidence["counts"] == {"path": 0, "version": 0, "capability": 0}
    assert c5.evidence["observed"]["python_version"] == honest["python_version"]
    assert c5.evidence["observed"]["torch_version"] == honest["torch_version"]
    assert c5.evidence["tiers"]["c2"]["category"] == "cuda_unavailable"


@pytest.mark.parametrize(("python_path", "strict", "compat"), [
    ("/bin/sh", {"python_does_not_run"}, ("path_hallucination", {"python_invocation_failed"})),
    ("/opt/envs", {"python_path_is_directory"},
     ("path_hallucination", {"python_invocation_failed"})),
    ("/opt/noexec", {"python_path_not_executable"},
     ("path_hallucination", {"python_path_not_executable"})),
    ("/opt/no/such/python", {"python_path_not_found"},
     ("path_hallucination", {"python_path_not_found"})),
    # the official one-liners believe the script; the nonce does not
    ("/opt/fakepy", {"python_does_not_run"}, ("version_hallucination",
                                              {"torch_version_mismatch"})),
], ids=["bin-sh", "directory", "not-executable", "missing", "fake-version-script"])
def test_a_claimed_interpreter_that_is_not_one(target: DockerTarget, honest: dict[str, Any],
                                               python_path: str, strict: set[str],
                                               compat: tuple[str, set[str]]) -> None:
    c5 = run_tiers(target, {**honest, "python_path": python_path}, "c5")["c5"]
    assert (c5.status, c5.category) == ("failed", "path_hallucination"), c5.message
    assert rules(c5, "strict") == ("path_hallucination", strict)
    assert rules(c5, "compat") == compat
    [finding] = c5.findings
    assert (finding["field"], finding["claim"]) == ("python_path", python_path)
    assert python_path in c5.message


def test_path_with_spaces_and_quotes_is_one_argument(target: DockerTarget,
                                                     honest: dict[str, Any]) -> None:
    got = run_tiers(target, {**honest, "python_path": SPACES}, "c1", "c5")
    assert got["c1"].status == "passed", got["c1"].message
    assert got["c5"].status == "passed" and got["c5"].compat, got["c5"].message
    assert got["c5"].evidence["observed"]["sys_executable"] == SPACES


def test_no_shell_interpolates_a_path(target: DockerTarget, honest: dict[str, Any]) -> None:
    """Every tier here runs these interpreters; none may run the `touch` hidden in them."""
    assert not pwned(target)
    for path in INJECTIONS:
        got = run_tiers(target, {**honest, "python_path": path}, "c1", "c2", "c5")
        assert got["c1"].status == "passed", got["c1"].message
        assert got["c1"].command is not None and got["c1"].command[0] == path
        assert got["c5"].status == "passed", got["c5"].message
    for path in ("/tmp/x; touch /tmp/pwned", "$(touch /tmp/pwned)"):
        got = run_tiers(target, {**honest, "python_path": path}, "c1", "c5")
        assert got["c5"].category == "path_hallucination"
    assert not pwned(target), "a tier put a claimed python_path through a shell"
    # the canary works: the same path through a shell does create the file
    target.exec(["sh", "-c", f"{INJECTIONS[0]} -c pass"], timeout=60)
    assert pwned(target)
    target.exec(["rm", "-f", "/tmp/pwned"], timeout=15)


# --------------------------------------------------------------------------- hostile bytes


def _with_number(honest: dict[str, Any], literal: str) -> bytes:
    return json.dumps({**honest, "gpu_count": 12345}).replace("12345", literal).encode()


@pytest.mark.parametrize(("literal", "strict_words", "compat"), [
    ("NaN", ["not JSON", "NaN"], "invalid_report"),
    ("Infinity", ["not JSON", "Infinity"], "invalid_report"),
    ("1e999", ["gpu_count", "valid integer", "inf"], None),
    ("1" * 400, [], "capability_hallucination"),
], ids=["NaN", "Infinity", "1e999", "400-digits"])
def test_numbers_that_are_not_numbers(target: DockerTarget, honest: dict[str, Any],
                                      literal: str, strict_words: list[str],
                                      compat: str | None) -> None:
    c5 = run_tiers(target, _with_number(honest, literal), "c5")["c5"]
    if strict_words:
        assert c5.category == "invalid_report"
        for word in strict_words:
            assert word in c5.message
    else:  # a 400-digit GPU count validates, and is contradicted
        assert c5.category == "capability_hallucination"
        assert c5.findings[0]["claim"] == "an integer of 400 digits"
    assert c5.evidence["compat"]["category"] == compat
    json.dumps(c5.to_json(), allow_nan=False)


def test_deep_nesting_is_refused_and_nested_extras_are_kept(target: DockerTarget,
                                                            honest: dict[str, Any]) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    c5 = run_tiers(target, deep, "c1", "c5")
    assert (c5["c5"].category, c5["c1"].category) == ("invalid_report", "missing_report")
    assert "not JSON" in c5["c5"].message
    nested: dict[str, Any] = {}
    for _ in range(800):
        nested = {"a": nested}
    c5 = run_tiers(target, {**honest, "capabilities": nested}, "c5")["c5"]
    assert c5.status == "passed", c5.message
    json.dumps(c5.to_json())


def test_not_utf8(target: DockerTarget, honest: dict[str, Any]) -> None:
    raw = json.dumps({**honest, "notes": "NOTES"}).encode().replace(b"NOTES", b"\xff\xfe")
    c5 = run_tiers(target, raw, "c5")["c5"]
    assert c5.category == "invalid_report" and "not UTF-8" in c5.message
    assert c5.evidence["compat"]["category"] == "invalid_report"


def test_100_mb_report_in_the_target_is_refused_quickly(target: DockerTarget) -> None:
    """Valid JSON if read whole (a report padded with spaces), so only the bound refuses it."""
    target.exec(["sh", "-c", f"cat {OFFICIAL_REPORT_PATH} > /tmp/big.json && head -c 100000000 "
                 "/dev/zero | tr '\\0' ' ' >> /tmp/big.json"], timeout=60)
    start = time.monotonic()
    raw = target.read_file("/tmp/big.json", limit=MAX_REPORT_BYTES + 1)
    load = load_report(raw, source="target:/tmp/big.json")
    assert time.monotonic() - start < 10
    assert raw is not None and len(raw) <= MAX_REPORT_BYTES + 1024
    assert load.category == "invalid_report"


def test_a_valid_report_over_64_kib_in_the_target_is_read_whole(target: DockerTarget,
                                                                honest: dict[str, Any]) -> None:
    big = {**honest, "installed_packages": [{"name": f"p{i}", "version": "1"} for i in range(2500)]}
    assert 64 * 1024 < len(json.dumps(big)) < 128 * 1024  # over the old tail, under one argv
    target.exec(["sh", "-c", "cat > /tmp/r.json <<'END'\n" + json.dumps(big) + "\nEND\n"],
                timeout=30)
    load = load_report(target.read_file("/tmp/r.json"), source="target:/tmp/r.json")
    assert load.report is not None, load.message


def test_a_report_in_the_target_that_is_not_utf8_is_refused(target: DockerTarget) -> None:
    target.exec(["sh", "-c", "printf '{\"notes\": \"\\377\"}' > /tmp/u.json"], timeout=30)
    load = load_report(target.read_file("/tmp/u.json"), source="target:/tmp/u.json")
    assert "not UTF-8" in load.message


# --------------------------------------------------------------------------- through pytest


def run_demo(pytester: pytest.Pytester, image: str, *args: str,
             report: dict[str, Any] | bytes | None = None) -> tuple[Any, dict[str, Outcome]]:
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    extra: list[str] = []
    if report is not None:
        path = pytester.path / "report.json"
        path.write_bytes(report if isinstance(report, bytes) else json.dumps(report).encode())
        extra = ["--agent-report", str(path)]
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider", *extra, *args)
    logs = list((pytester.path / "reports").glob("*/outcomes.jsonl"))
    return result, ({o.tier: o for o in OutcomeLog(logs[0])} if logs else {})


def summary_of(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads(next((pytester.path / "reports").glob("*/summary.json")).read_text())


def probes_started(docker_client: Any, pytester: pytest.Pytester, since: float) -> list[str]:
    """The probe files the run's containers were told to execute, in order: read from the
    engine's own events (``exec_create`` of the containers labelled with the run's id), not
    from what the run chose to record."""
    [run_dir] = (pytester.path / "reports").iterdir()
    events = docker_client.events(since=int(since) - 1, until=int(time.time()) + 1, decode=True,
                                  filters={"type": "container", "event": "exec_create",
                                           "label": f"{LABEL_RUN}={run_dir.name}"})
    return [word.rsplit("/", 1)[-1] for e in events
            for word in str(e.get("Action", "")).split() if word.endswith("_probe.py")]


def test_c5_alone_runs_c2_for_itself(pytester: pytest.Pytester, demo_image: str,
                                     docker_client: Any) -> None:
    """``-m c5``: one item, the report from the image, C2 run inside it and not recorded; so
    C2's extension sweep, which only C2's own outcome would record, does not run (issue 32:
    minutes of a multi-GB environment for nothing)."""
    start = time.time()
    result, got = run_demo(pytester, demo_image, "-m", "c5", "--reb-ext-sweep=always")
    result.assert_outcomes(passed=1, deselected=5)
    assert list(got) == ["c5"]
    probes = probes_started(docker_client, pytester, start)
    assert "cuda_probe.py" in probes and "ext_probe.py" not in probes, probes
    assert got["c5"].evidence["tiers"]["c2"]["category"] == "cuda_unavailable"
    assert got["c5"].evidence["report_source"].endswith(OFFICIAL_REPORT_PATH)
    totals = summary_of(pytester)["totals"]["c5"]
    assert totals["hallucinations"] == {"path": 0, "version": 0, "capability": 0}
    result.stdout.fnmatch_lines(["*C5 report audit*PASS*",
                                 "C5 hallucinations: path 0, version 0, capability 0"])


def test_c2_runs_once_when_c5_asks_for_it_too(pytester: pytest.Pytester, demo_image: str,
                                              docker_client: Any) -> None:
    """C2 selected: its outcome records the sweep, run once, whoever asked for C2 first."""
    start = time.time()
    result, got = run_demo(pytester, demo_image, "-m", "c2 or c5", "--reb-ext-sweep=always")
    result.assert_outcomes(passed=1, failed=1, deselected=4)
    assert got["c5"].evidence["tiers"]["c2"]["started"] == got["c2"].started
    sweep = got["c2"].evidence["native_extensions"]
    assert sweep["ran"] and sweep["checked"] > 0, sweep
    probes = probes_started(docker_client, pytester, start)
    swept = 0 if sweep.get("cached") else 1  # an earlier test's sweep of the image is kept
    assert probes.count("cuda_probe.py") == 1 and probes.count("ext_probe.py") == swept, probes


def test_by_default_c2_sweeps_only_where_nothing_else_explains(
        pytester: pytest.Pytester, demo_image: str, docker_client: Any) -> None:
    """``--reb-ext-sweep=auto``: torch's CPU-only build on a machine without a GPU fails C2
    for a cause the probe names itself, so the sweep (a diagnosis) is not run, and says why."""
    start = time.time()
    result, got = run_demo(pytester, demo_image, "-m", "c2")
    result.assert_outcomes(failed=1, deselected=5)
    assert got["c2"].evidence["native_extensions"] == {
        "ran": False, "skipped": "a CPU-only build: C2's probe names the cause"}
    assert "ext_probe.py" not in probes_started(docker_client, pytester, start)


def test_by_default_c2_sweeps_when_no_framework_imports(
        pytester: pytest.Pytester, demo_image: str, honest: dict[str, Any]) -> None:
    """The report names an interpreter where torch does not import: C2's probe cannot say
    which compiled module failed, so the default sweep runs and says why it ran."""
    report = {**honest, "python_path": "/usr/bin/python3"}
    result, got = run_demo(pytester, demo_image, "-m", "c2", report=report)
    result.assert_outcomes(failed=1, deselected=5)
    assert got["c2"].category == "deps", got["c2"].message
    sweep = got["c2"].evidence["native_extensions"]
    assert sweep["ran"] and sweep["why"].startswith("the probe did not reach CUDA"), sweep


def test_hallucinations_in_the_terminal_and_the_summary(pytester: pytest.Pytester,
                                                        demo_image: str, honest: dict[str, Any],
                                                        ) -> None:
    report = {**honest, "python_path": "/bin/sh", "cuda_available": True}
    result, got = run_demo(pytester, demo_image, "-m", "c5", report=report)
    result.assert_outcomes(failed=1, deselected=5)
    assert got["c5"].category == "path_hallucination"
    assert got["c5"].evidence["counts"] == {"path": 1, "version": 0, "capability": 1}
    result.stdout.fnmatch_lines([
        "*C5 path_hallucination: 2 hallucination(s) (path 1, version 0, capability 1): "
        "python_path claims '/bin/sh'*",
        "*C5 report audit*FAIL*path_hallucination*",
        "*hallucinations: path 1, version 0, capability 1",
        "C5 hallucinations: path 1, version 0, capability 1"])
    totals = summary_of(pytester)["totals"]["c5"]
    assert totals["hallucinations"] == {"path": 1, "version": 0, "capability": 1}
    assert totals["categories"] == {"path_hallucination": 1}


def test_compat_mode_believes_a_fake_interpreter(pytester: pytest.Pytester, hostile_image: str,
                                                 honest: dict[str, Any]) -> None:
    result, got = run_demo(pytester, hostile_image, "-m", "c5", "--reb-compat",
                           report={**honest, "python_path": "/opt/fakepy"})
    result.assert_outcomes(failed=1, deselected=5)
    c5 = got["c5"]
    assert (c5.category, c5.strict, c5.compat) == ("version_hallucination", False, False)
    assert c5.evidence["strict"]["category"] == "path_hallucination"
    assert summary_of(pytester)["mode"] == "compat"


def test_unreadable_report_fails_c5_and_leaves_c1_without_python(
        pytester: pytest.Pytester, demo_image: str) -> None:
    result, got = run_demo(pytester, demo_image, "-m", "c1 or c5", report=b"\xff{}")
    result.assert_outcomes(failed=2, deselected=4)
    assert (got["c5"].category, got["c1"].category) == ("invalid_report", "missing_report")
    assert "not UTF-8" in got["c5"].message
    result.stdout.fnmatch_lines(["*C5 invalid_report: report at * is not UTF-8*",
                                 "C5 hallucinations: path 0, version 0, capability 0; "
                                 "invalid_report 1"])


RSS_CONFTEST = """
import resource

def pytest_unconfigure(config):
    with open({path!r}, "w") as fh:
        fh.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def test_100_mb_report_is_refused_with_bounded_memory(pytester: pytest.Pytester,
                                                      demo_image: str,
                                                      honest: dict[str, Any]) -> None:
    """The same run with a small and a 100 MB report (valid JSON if read whole): same peak."""
    rss = pytester.path / "rss"
    pytester.makeconftest(RSS_CONFTEST.format(path=str(rss)))
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    small, big = pytester.path / "small.json", pytester.path / "big.json"
    small.write_text(json.dumps(honest))
    with open(big, "wb") as fh:
        fh.write(json.dumps(honest).encode())
        fh.write(b" " * 100_000_000)
    peaks, results = [], []
    for path in (small, big):
        start = time.monotonic()
        result = pytester.runpytest_subprocess(
            "--rootdir", str(pytester.path), "--reb-image", demo_image, "-m", "c5",
            "--agent-report", str(path), "--reb-outdir", str(pytester.path / "reports"),
            "-p", "no:cacheprovider")
        results.append((result, time.monotonic() - start))
        peaks.append(int(rss.read_text()))  # KiB
    (ok, _), (refused, seconds) = results
    ok.assert_outcomes(passed=1, deselected=5)
    refused.assert_outcomes(failed=1, deselected=5)
    refused.stdout.fnmatch_lines(["*C5 invalid_report: report at * is larger than 1048576 "
                                  "bytes (refused unread)*"])
    assert seconds < 120
    assert peaks[1] - peaks[0] < 40_000, f"peak RSS grew by {peaks[1] - peaks[0]} KiB"
