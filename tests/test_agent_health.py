"""A run that cannot work is not scored: the preflight, the agent's own service errors, the table.

The preflight is tested against a real HTTP server on the loopback that checks the key the
way the services do (Anthropic's ``x-api-key``, OpenAI's bearer token), and against
addresses that cannot be reached. The agents' last words are their recorded output
formats (``tests/data/agents/README.md``) and, end to end, the real Codex CLI without a
service, through ``reb agent run`` as a user runs it.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.loop.agent import backends, health
from pytest_reb.loop.agent.run import AgentRun
from pytest_reb.report import efficiency

DATA = Path(__file__).parent / "data" / "agents"
GOOD = "sk-good-0123456789"


class _Models(http.server.BaseHTTPRequestHandler):
    """``GET …/models``: 200 for the good key in either header, 401 otherwise."""

    def do_GET(self) -> None:
        given = self.headers.get("x-api-key") or \
            (self.headers.get("authorization") or "").removeprefix("Bearer ")
        ok = self.path.endswith("/models") and given == GOOD
        self.send_response(200 if ok else 401)
        self.end_headers()
        self.wfile.write(b'{"data": []}' if ok else b'{"error": "invalid x-api-key"}')

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def service() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("name", "key", "base"), [
    ("claude-code", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    ("codex", "OPENAI_API_KEY", "OPENAI_BASE_URL")])
def test_the_preflight_makes_one_authenticated_call(name: str, key: str, base: str,
                                                    service: str) -> None:
    backend = backends.BUILTIN[name]
    suffix = "/v1" if name == "codex" else ""
    ok = health.preflight(backend, {key: GOOD, base: service + suffix})
    assert ok.ok and "HTTP 200" in ok.checked and GOOD not in ok.checked
    bad = health.preflight(backend, {key: "sk-wrong-0000000000", base: service + suffix})
    assert not bad.ok and "HTTP 401" in bad.checked and "sk-wrong" not in bad.checked


def test_no_key_or_no_service_fails_in_seconds() -> None:
    codex = backends.BUILTIN["codex"]
    missing = health.preflight(codex, {})
    assert not missing.ok and "OPENAI_API_KEY or CODEX_API_KEY" in missing.checked
    start = time.monotonic()
    for base in ("http://127.0.0.1:9/v1", "http://reb-preflight.invalid/v1"):
        got = health.preflight(codex, {"OPENAI_API_KEY": GOOD, "OPENAI_BASE_URL": base})
        assert not got.ok and "cannot be reached" in got.checked, got.checked
    assert time.monotonic() - start < 2 * health.PREFLIGHT_TIMEOUT


def test_mini_swe_agent_checks_the_service_its_model_names() -> None:
    mini = backends.BUILTIN["mini-swe-agent"]
    test_model = health.preflight(mini, {}, ["--model-class", "deterministic"])
    assert test_model.ok and "test model" in test_model.checked
    claude = health.preflight(mini, {}, ["--model", "anthropic/claude-sonnet-4-5"])
    assert not claude.ok and "ANTHROPIC_API_KEY" in claude.checked
    gpt = health.preflight(mini, {"MSWEA_MODEL_NAME": "openai/gpt-5"}, [])
    assert not gpt.ok and "OPENAI_API_KEY" in gpt.checked
    other = health.preflight(mini, {}, ["--model", "local/llama"])
    assert other.ok and "nothing to check" in other.checked


def test_a_custom_agent_is_checked_against_the_service_it_names(service: str) -> None:
    mine = backends.resolve("mine", command="mine {prompt_file}", service="openai")
    got = health.preflight(mine, {"OPENAI_API_KEY": GOOD, "OPENAI_BASE_URL": service + "/v1"})
    assert got.ok
    assert health.preflight(backends.resolve("x", command="x"), {}).ok  # none declared


def _words(name: str, stdout: str = "", log: str = "", out: Path | None = None,
           **kw: Any) -> str | None:
    backend = backends.resolve(name, **kw)
    return health.agent_error(backend, stdout, log, out or Path("/nonexistent"))


def test_the_agents_own_service_errors_are_read_from_their_output_formats(
        tmp_path: Path) -> None:
    offline = (DATA / "codex-offline.jsonl").read_text()
    assert "waiting for network" in (_words("codex", offline) or "")
    assert _words("codex", (DATA / "codex-exec.jsonl").read_text()) is None  # it worked
    not_logged_in = (DATA / "claude-code-not-logged-in.json").read_text()
    assert _words("claude-code", not_logged_in) == "Not logged in · Please run /login"
    assert _words("claude-code", (DATA / "claude-code-result.json").read_text()) is None
    said = _words("mini-swe-agent", log=(DATA / "mini-swe-agent-offline.log").read_text(),
                  out=tmp_path)  # retried until killed: no trajectory
    assert said is not None and "Connection error" in said
    (tmp_path / "trajectory.json").write_text(
        (DATA / "mini-swe-agent-auth-error.json").read_text())
    said = _words("mini-swe-agent", out=tmp_path)
    assert said is not None and said.startswith("AuthenticationError: ")
    (tmp_path / "trajectory.json").write_text(
        (DATA / "mini-swe-agent-trajectory.json").read_text())
    assert _words("mini-swe-agent", out=tmp_path) is None
    log = "pip install ...\nfatal: my-agent: quota exhausted for key\n"
    assert _words("mine", log=log, command="mine", error_regex="quota exhausted") is not None
    assert _words("mine", log=log, command="mine") is None  # no regex: nothing is guessed


def test_runs_that_never_started_are_outside_the_efficiency_figures() -> None:
    runs = [AgentRun("r1", "a", "x/y", "t", "id", wall_s=100.0, started=1.0,
                     tokens={"input": 7, "output": 3, "total": 10}),
            AgentRun("r2", "a", "x/z", "t", "id", wall_s=3600.0, started=2.0,
                     status="agent_error", timed_out=True),
            AgentRun("r3", "a", "x/w", "t", "id", started=3.0, status="agent_unreachable")]
    eff = efficiency.summarise(runs)["a"]
    assert (eff.runs, eff.not_started, eff.timed_out, eff.prep_mean_s) == (1, 2, 0, 100.0)
    assert eff.tokens_unknown == 0
    assert efficiency.record(eff, published=False)["agent_not_started_jobs"] == 2
    assert efficiency.time_cell(eff) == "100.0 / 100.0 s (2 not started)"


@pytest.mark.container
def test_reb_agent_run_without_a_key_fails_in_seconds_and_scores_nothing(
        docker_client: Any, tinynet_task: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_reb.loop.cli import main

    for name in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    rc = main(["agent", "run", "--agent", "codex", "--repo", "reb/tinynet", "--task-image",
               tinynet_task, "--gpus", "none", "--out", str(tmp_path), "--tool-dir",
               str(tmp_path)])
    assert rc == 1 and time.monotonic() - start < 15
    err = capsys.readouterr().err
    assert "agent_unreachable: no key for openai" in err
    [record] = [json.loads(line) for line in (tmp_path / "agent_runs.jsonl").read_text()
                .splitlines()]
    assert (record["status"], record["image"], record["wall_s"]) == \
        ("agent_unreachable", None, None)
    assert time.time() - 60 < record["started"] <= time.time()  # when it was tried, not 0
    assert not (tmp_path / "matrix.jsonl").exists()
    assert not docker_client.containers.list(all=True,
                                             filters={"label": f"reb.run={record['run']}"})


@pytest.mark.container
def test_the_real_codex_that_cannot_reach_its_service_is_an_agent_error(
        docker_client: Any, tinynet_task: str, tmp_path: Path, agent_images: list[str]) -> None:
    """``--no-preflight``: Codex retries until the budget ends; its last events say why, and
    the run is recorded as ``agent_error``: not committed, no matrix row."""
    from pytest_reb.loop.agent.cli import tools_root
    from pytest_reb.loop.agent.run import run_agent
    from pytest_reb.loop.task import select

    try:
        folder = backends.install(backends.BUILTIN["codex"], tools_root() / "codex")
    except backends.BackendError as exc:
        pytest.skip(f"cannot install codex here: {exc}")
    rec = run_agent(docker_client, backends.resolve("codex"), select(["reb/tinynet"])[0],
                    out_root=tmp_path, budget=15, gpus="none", tool_dir=folder,
                    task_image=tinynet_task, secrets={"OPENAI_API_KEY": GOOD},
                    preflight=health.SKIPPED)
    if rec.image:
        agent_images.append(rec.image)
    assert (rec.status, rec.image) == ("agent_error", None), rec.error
    assert rec.error and "Reconnecting" in rec.error  # its own words
    assert not (tmp_path / "matrix.jsonl").exists()
    assert not docker_client.images.list(filters={"label": f"reb.agent-env.run={rec.run}"})
