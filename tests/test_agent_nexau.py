"""NexAU: installed from its source, run as the official runner runs it, against a loopback
OpenAI-compatible service that answers scripted tool calls.

The source is a NexAU checkout or its git directory named by ``REB_NEXAU_SOURCE`` (never
part of this repository), the interpreter a CPython 3.12+ (``REB_NEXAU_PYTHON``, else
``python3.12`` on ``PATH``); NexAU's dependencies come from PyPI. Without them the end to
end test skips and says so. The agent's answers are the service's, NexAU's own loop runs
them: the report it writes, the tokens its tracer writes, the key kept out of the commit.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.agentruns import saved_hits
from support.llmserver import ScriptedLLM, Step

from pytest_reb.loop.agent import backends, health, leaks, nexau
from pytest_reb.loop.agent.run import run_agent
from pytest_reb.loop.task import select

KEY = "sk-reb-nexau-0123456789abcdefXYZ"
REPORT = {"python_path": "/usr/bin/python3", "python_version": "3.11", "torch_version": None,
          "cuda_available": None, "gpu_count": None, "ddp_expected_ok": None,
          "env_tool": "none", "env_name": None, "notes": "scripted"}


def test_the_preflight_asks_the_llm_service_named_by_the_api_type() -> None:
    backend = backends.BUILTIN["nexau"]
    script = [Step()]
    with ScriptedLLM(script) as service:
        ok = health.preflight(backend, {"LLM_API_KEY": KEY},
                              environ={"LLM_BASE_URL": service.url,
                                       "LLM_API_TYPE": "openai_chat_completion"})
        assert ok.ok and "llm-openai answered" in ok.checked, ok.checked
        [asked] = service.requests
        assert asked["path"] == "/v1/models"
        assert asked["headers"]["authorization"] == f"Bearer {KEY}"
    missing = health.preflight(backend, {}, environ={})
    assert not missing.ok and "LLM_API_KEY" in missing.checked


def test_tokens_are_the_sum_of_the_tracers_lines(tmp_path: Path) -> None:
    (tmp_path / nexau.USAGE_FILE).write_text(
        json.dumps({"prompt_tokens": 100, "completion_tokens": 7}) + "\n"
        + json.dumps({"input_tokens": 50, "output_tokens": 3}) + "\nnot json\n")
    tokens = backends.parse_usage("nexau-tracer", "", tmp_path)
    assert tokens is not None and (tokens.input, tokens.output) == (150, 10)
    assert backends.parse_usage("nexau-tracer", "", tmp_path / "none") is None


def _installed() -> Path:
    from pytest_reb.loop.agent.cli import tools_root

    source = os.environ.get("REB_NEXAU_SOURCE")
    python = os.environ.get("REB_NEXAU_PYTHON") or shutil.which("python3.12")
    if not source or not python:
        pytest.skip("REB_NEXAU_SOURCE (a NexAU checkout or git directory) and a Python 3.12 "
                    "(REB_NEXAU_PYTHON or python3.12 on PATH) are needed to install NexAU")
    folder = tools_root() / "nexau"
    if (folder / ".reb-installed").is_file():
        return folder
    return backends.install(backends.BUILTIN["nexau"], folder, source=Path(source),
                            python=python)


@pytest.mark.container
def test_nexau_runs_its_own_loop_against_scripted_tool_calls(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    folder = _installed()
    write = ("mkdir -p /opt/scimlopsbench && printf '%s' "
             f"'{json.dumps(REPORT)}' > /opt/scimlopsbench/report.json && echo written")
    script = [Step("bash", {"command": write, "description": "write the report"},
                   usage=(1200, 40)),
              Step(text="The report is written.", usage=(1300, 8))]
    with ScriptedLLM(script) as service:
        rec = run_agent(docker_client, backends.BUILTIN["nexau"], select(["reb/tinynet"])[0],
                        out_root=tmp_path, budget=600, gpus="none", network="host",
                        tool_dir=folder, task_image=tinynet_task,
                        secrets={"LLM_API_KEY": KEY, "LLM_BASE_URL": service.url,
                                 "LLM_MODEL": "scripted", "LLM_API_TYPE":
                                 "openai_chat_completion", "LLM_TOOL_CALL_MODE": "openai"})
        asked = [r for r in service.requests if r["method"] == "POST"]
    if rec.image:
        agent_images.append(rec.image)  # removed afterwards, whatever is asserted below
    log = Path(rec.log).read_text(errors="replace")
    assert rec.status == "finished" and rec.exit_code == 0, (rec.error, log[-3000:])
    assert rec.image
    assert "llm-openai answered" in rec.preflight
    # NexAU's loop: the tool call ran, its output went back, the final text ended it
    assert len(asked) == 2 and asked[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert any(t["function"]["name"].lower() == "bash" for t in asked[0]["body"]["tools"])
    assert "written" in json.dumps(asked[1]["body"]["messages"])
    assert rec.tokens == {"input": 2500, "output": 48, "total": 2548,
                          "raw": {"model_calls": 2}}
    out = docker_client.containers.run(rec.image, ["cat", "/opt/scimlopsbench/report.json"],
                                       remove=True, network_mode="none")
    assert json.loads(out) == REPORT
    assert saved_hits(rec.image, sorted(leaks.encodings(KEY))) == 0
    assert not (Path(rec.out) / nexau.USAGE_FILE).read_text().count(KEY)
