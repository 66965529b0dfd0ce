"""Agent runs on the real engine: budget, kill, commit, secrets, and what verification sees.

Each test runs an agent in a container of the demo's task image, then verifies the committed
image the way a user would (``pytest --reb-matrix`` on the row the run appended).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from support.agentruns import agent

from pytest_reb.loop.agent import backends
from pytest_reb.loop.agent.run import run_agent
from pytest_reb.loop.task import select
from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.runs.matrix import AGENT_TIMED_OUT_LABEL
from pytest_reb.targets import DockerTarget, image_file

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parent.parent
DEMO_MODULE = ROOT / "demo" / "test_demo__tinynet.py"
WHEELS = ROOT / ".cache" / "wheels"
#: A command writing a report that names the system interpreter (mini-swe-agent's last step).
PLAIN_REPORT = ("python3 -c 'import json, sys; json.dump(dict(python_path=\"/usr/bin/python3\", "
                "python_version=sys.version.split()[0], torch_version=None, cuda_available=None, "
                "gpu_count=None, ddp_expected_ok=None, env_tool=\"none\", env_name=None, "
                "notes=\"test\"), open(\"{report_path}\", \"w\"))'")


def verify(pytester: pytest.Pytester, tmp_path: Path, *args: str) -> dict[str, Outcome]:
    """``pytest --reb-matrix`` on the matrix the runs appended to, as a user runs it."""
    pytester.makepyfile(test_demo__tinynet=DEMO_MODULE.read_text())
    pytester.runpytest("--rootdir", str(pytester.path), "--reb-matrix",
                       str(tmp_path / "runs" / "matrix.jsonl"), "--reb-outdir",
                       str(pytester.path / "reports"), "-p", "no:cacheprovider", *args)
    [log] = (pytester.path / "reports").glob("*/outcomes.jsonl")
    return {o.tier: o for o in OutcomeLog(log)}


def test_scripted_agent_image_passes_c1_and_c5(pytester: pytest.Pytester, docker_client: Any,
                                               tinynet_task: str, tmp_path: Path,
                                               agent_images: list[str]) -> None:
    from pytest_reb.loop.demo.images import ensure_wheelhouse

    ensure_wheelhouse()
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images,
                "bash /opt/reb-agent/agents/setup-tinynet.sh {repo} {report_path}",
                mounts={str(ROOT / "demo" / "agents"): "/opt/reb-agent/agents",
                        str(WHEELS): "/opt/reb-agent/wheels"})
    assert (rec.exit_code, rec.timed_out, rec.tokens) == (0, False, "unknown")
    assert rec.wall_s is not None and 0 < rec.wall_s < 600
    row = json.loads((tmp_path / "runs" / "matrix.jsonl").read_text())
    assert row == {"repo": "reb/tinynet", "agent": "scripted", "image": rec.image}
    labels_ = docker_client.images.get(rec.image).labels
    assert labels_["reb.agent-env.repo"] == "reb/tinynet"
    assert labels_["reb.agent-env.agent"] == "scripted"
    assert labels_["reb.agent-env.task-image"] == rec.task_image_id
    got = verify(pytester, tmp_path, "-m", "c1 or c5")
    assert got["c1"].status == "passed" and "TRAIN_OK" in got["c1"].stdout_tail
    assert got["c5"].status == "passed", got["c5"].message
    assert got["c1"].agent == "scripted" and not got["c1"].findings


def test_an_agent_past_its_budget_is_killed_and_recorded_as_timed_out(
        pytester: pytest.Pytester, docker_client: Any, tinynet_task: str, tmp_path: Path,
        agent_images: list[str]) -> None:
    start = time.monotonic()
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images,
                "sh -c 'sleep 600 & echo started; sleep 600'", budget=4)
    assert time.monotonic() - start < 120
    assert rec.timed_out and rec.exit_code is None and 4 <= (rec.wall_s or 0) < 20
    assert "started" in Path(rec.log).read_text()
    assert docker_client.images.get(rec.image).labels[AGENT_TIMED_OUT_LABEL] == "true"
    # still committed and verified strictly; compat scores it as officially: timeout, no probe
    got = verify(pytester, tmp_path, "-m", "c1", "--reb-compat")
    assert (got["c1"].status, got["c1"].category) == ("failed", "timeout")
    assert got["c1"].command is None and got["c1"].compat is False


def test_an_agent_that_writes_no_report_fails_c5_missing_report(
        pytester: pytest.Pytester, docker_client: Any, tinynet_task: str, tmp_path: Path,
        agent_images: list[str]) -> None:
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images, "true")
    assert rec.exit_code == 0
    got = verify(pytester, tmp_path, "-m", "c5")
    assert (got["c5"].status, got["c5"].category) == ("failed", "missing_report")


def test_an_agent_that_edits_a_tracked_file_is_an_integrity_finding(
        pytester: pytest.Pytester, docker_client: Any, tinynet_task: str, tmp_path: Path,
        agent_images: list[str]) -> None:
    agent(docker_client, tinynet_task, tmp_path, agent_images,
          "sh -c 'echo \"print(1)\" >> {repo}/train.py'")
    got = verify(pytester, tmp_path, "-m", "c1", "--reb-python", "/usr/bin/python3")
    assert any(f["kind"] == "modified" and f["path"] == "train.py" for f in got["c1"].findings)


def test_a_daemon_the_agent_leaves_is_not_alive_afterwards(docker_client: Any,
                                                           tinynet_task: str, tmp_path: Path,
                                                           agent_images: list[str]) -> None:
    """The agent returns at once although its daemon holds the output open; the daemon dies
    with the container, and a verification container of the image has no trace of it."""
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images,
                "sh -c 'nohup sh -c \"while :; do date >> /tmp/beat; sleep 0.2; done\" & "
                "sleep 1; echo left'", budget=120)
    assert not rec.timed_out and rec.exit_code == 0 and (rec.wall_s or 99) < 30
    target = DockerTarget(rec.image or "", run_id="tests-agent-daemon", gpus=[])
    try:
        first = target.exec(["sh", "-c", "ps -eo args; wc -l < /tmp/beat"], timeout=30)
        time.sleep(1)
        second = target.exec(["sh", "-c", "wc -l < /tmp/beat"], timeout=30)
    finally:
        target.close()
    assert "while :" not in first.stdout  # the daemon's command line
    assert first.stdout.split()[-1] == second.stdout.strip()  # nobody appends any more


def test_a_secret_is_in_no_output_and_not_in_the_committed_image(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    secret = "sk-reb-test-0123456789abcdef"
    env_file = tmp_path / "keys.env"
    env_file.write_text(f"REB_TEST_API_KEY={secret}\n")
    from pytest_reb.loop.agent.leaks import secrets_for

    backend = backends.resolve("leaky", command="true")
    secrets = secrets_for(backend, env_file, [])
    rec = agent(docker_client, tinynet_task, tmp_path, agent_images,
                "sh -c 'echo key=$REB_TEST_API_KEY; echo $REB_TEST_API_KEY >&2; "
                "echo $REB_TEST_API_KEY > {out}/leak.txt; test -n \"$REB_TEST_API_KEY\"'",
                name="leaky", secrets=secrets)
    assert rec.exit_code == 0  # the agent had it
    outputs = [p for p in (tmp_path / "runs").rglob("*") if p.is_file()]
    assert {"agent.log", "stdout", "leak.txt", "run.json", "agent_runs.jsonl",
            "matrix.jsonl"} <= {p.name for p in outputs}
    for path in outputs:
        assert secret not in path.read_text(errors="replace"), path
    assert "key=<redacted>" in Path(rec.log).read_text()
    inspected = json.dumps(docker_client.api.inspect_image(rec.image))
    assert secret not in inspected and "REB_TEST_API_KEY" not in inspected
    assert docker_client.images.get(rec.image).labels["reb.agent-env.agent"] == "leaky"


def test_mini_swe_agent_drives_its_real_loop_with_its_deterministic_model(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """mini-swe-agent's own agent loop and local environment, its test model in place of an
    LLM: the model's scripted actions run as shell commands in the container, and the last
    one writes the report; the trajectory comes back through ``{out}``."""
    from pytest_reb.loop.agent.cli import tools_root

    try:
        folder = backends.install(backends.BUILTIN["mini-swe-agent"],
                                  tools_root() / "mini-swe-agent")
    except backends.BackendError as exc:
        pytest.skip(f"cannot install mini-swe-agent here: {exc}")
    write_report = PLAIN_REPORT.replace("{report_path}", "/opt/scimlopsbench/report.json")
    actions = ["python3 --version", write_report, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    model = {"model": {"outputs": [
        {"role": "assistant", "content": f"THOUGHT: step {i}\n```mswea_bash_command\n{c}\n```",
         "extra": {"actions": [{"command": c}]}} for i, c in enumerate(actions)]}}
    config = tmp_path / "config"
    config.mkdir()
    (config / "model.yaml").write_text(json.dumps(model))  # JSON is YAML; it wants .yaml
    backend = backends.resolve("mini-swe-agent", mounts={str(config): "/opt/reb-agent/config"})
    rec = run_agent(docker_client, backend, select(["reb/tinynet"])[0],
                    out_root=tmp_path / "runs", gpus="none", task_image=tinynet_task,
                    budget=300, tool_dir=folder,
                    extra_args=["--model-class", "deterministic", "--model", "deterministic",
                                "-c", "/opt/reb-agent/config/model.yaml"])
    agent_images.append(rec.image or "")
    assert rec.exit_code == 0, Path(rec.log).read_text()[-2000:]
    trajectory = json.loads((Path(rec.out) / "trajectory.json").read_text())
    assert trajectory["info"]["model_stats"]["api_calls"] == 3
    assert rec.tokens == "unknown"  # its test model reports no usage
    report = image_file(docker_client, rec.image or "", "/opt/scimlopsbench/report.json")
    assert report is not None and json.loads(report)["python_path"] == "/usr/bin/python3"
