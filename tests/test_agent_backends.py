"""Agent backends: argv templates, mounts, secrets, and usage parsing of real output formats.

Claude Code and Codex cannot reach their services here, so their usage parsers are tested
on recorded samples (``tests/data/agents/README.md`` says which were captured from the real
CLIs here and which follow the published formats), and their install and mount on the
real CLIs, which are run in a task container where they fail for want of a service.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.loop.agent import backends
from pytest_reb.loop.agent.backends import OUT_MOUNT, TOOL_MOUNT, BackendError
from pytest_reb.loop.agent.leaks import scrub, secrets_for
from pytest_reb.loop.agent.run import AgentRun
from pytest_reb.report import efficiency
from pytest_reb.targets import NODE_MOUNT

DATA = Path(__file__).parent / "data" / "agents"


def test_claude_code_argv_is_print_mode_with_json_output() -> None:
    argv = backends.BUILTIN["claude-code"].command("TASK TEXT")
    assert argv[:3] == ["claude", "-p", "TASK TEXT"]
    assert argv[argv.index("--output-format") + 1] == "json"
    assert "/data/project/repo" in argv and "--dangerously-skip-permissions" in argv


def test_codex_argv_is_exec_json_with_the_schema() -> None:
    argv = backends.BUILTIN["codex"].command("TASK TEXT", ["--model", "gpt-5-codex"])
    assert argv[:3] == ["codex", "exec", "--json"]
    assert argv[argv.index("--output-schema") + 1] == "/opt/scimlopsbench/report_schema.json"
    assert argv[argv.index("--cd") + 1] == "/data/project/repo"
    assert argv[-3:] == ["TASK TEXT", "--model", "gpt-5-codex"]


def test_mini_swe_agent_argv_keeps_its_own_packages_out_of_the_agents_shell() -> None:
    backend = backends.BUILTIN["mini-swe-agent"]
    argv = backend.command("T")
    assert argv[:3] == ["python3", "-m", "minisweagent.run.mini"]
    assert f"{OUT_MOUNT}/trajectory.json" in argv and 'environment.env.PYTHONPATH=""' in argv
    assert backend.environment("T")["PYTHONPATH"] == TOOL_MOUNT


def test_placeholders_are_filled_and_an_unknown_one_is_an_error() -> None:
    b = backends.custom("mine", "mine --task {prompt_file} --repo={repo} --json {schema} "
                                "--out {out} {report_path} '{{literal}}'")
    assert b.command("x") == ["mine", "--task", "/opt/scimlopsbench/prompt.md",
                              "--repo=/data/project/repo", "--json",
                              "/opt/scimlopsbench/report_schema.json", "--out", OUT_MOUNT,
                              "/opt/scimlopsbench/report.json", "{literal}"]
    with pytest.raises(BackendError, match=r"unknown placeholder.*repository"):
        backends.custom("mine", "mine {repository}")
    with pytest.raises(BackendError, match="unknown agent"):
        backends.resolve("nobody")
    with pytest.raises(BackendError, match="agent name"):
        backends.resolve("bad name", command="true")


def test_cli_folders_are_mounted_read_only_at_tool(tmp_path: Path) -> None:
    codex = backends.resolve("codex", mounts={str(tmp_path): "/opt/wheels"})
    mounts = codex.all_mounts(tmp_path)
    assert mounts[TOOL_MOUNT] == str(tmp_path) and mounts["/opt/wheels"] == str(tmp_path)
    assert NODE_MOUNT in mounts  # codex.js runs on node, mounted like pyright's
    assert codex.environment("x")["PATH"].startswith(f"{NODE_MOUNT}/bin:{TOOL_MOUNT}/")
    assert NODE_MOUNT not in backends.BUILTIN["claude-code"].all_mounts(tmp_path)
    assert backends.parse_mount(f"{tmp_path}:/opt/x:ro") == (str(tmp_path), "/opt/x")
    with pytest.raises(BackendError, match="does not exist"):
        backends.parse_mount("/no/such/folder:/opt/x")


def test_claude_code_usage_counts_cache_reads_and_writes_as_input() -> None:
    tokens = backends.parse_usage("claude-json", (DATA / "claude-code-result.json").read_text(),
                                  None)
    assert tokens is not None
    assert (tokens.input, tokens.output) == (412 + 188204 + 2911376, 41877)
    assert tokens.record()["total"] == tokens.input + tokens.output
    assert tokens.raw["total_cost_usd"] == 4.1873


def test_claude_code_usage_of_the_captured_run_is_what_it_reported() -> None:
    """The real CLI without credentials reports a usage block of zeros: that is reported."""
    tokens = backends.claude_usage((DATA / "claude-code-not-logged-in.json").read_text())
    assert tokens is not None and (tokens.input, tokens.output) == (0, 0)


def test_codex_usage_sums_its_turns() -> None:
    tokens = backends.parse_usage("codex-jsonl", (DATA / "codex-exec.jsonl").read_text(), None)
    assert tokens is not None
    assert (tokens.input, tokens.output) == (1183540 + 24763, 18422 + 122)
    assert tokens.raw["turns"] == 2 and tokens.raw["reasoning_output_tokens"] == 9731


def test_codex_that_never_finished_a_turn_has_unknown_usage() -> None:
    captured = (DATA / "codex-offline.jsonl").read_text()
    assert '"thread.started"' in captured  # the real CLI's own events
    assert backends.parse_usage("codex-jsonl", captured, None) is None


def test_mini_swe_agent_usage_from_its_trajectory(tmp_path: Path) -> None:
    shutil.copy(DATA / "mini-swe-agent-trajectory.json", tmp_path / "trajectory.json")
    tokens = backends.parse_usage("mini-trajectory", "", tmp_path)
    assert tokens is not None and (tokens.input, tokens.output) == (2481 + 3120 + 4055, 314)
    assert backends.parse_usage("mini-trajectory", "", tmp_path / "none") is None


def test_no_usage_is_unknown_never_zero() -> None:
    assert backends.parse_usage("none", '{"type":"result","usage":{"input_tokens":5}}',
                                None) is None
    runs = [AgentRun("r1", "a", "x/y", "t", "id", wall_s=10.0, started=1.0),
            AgentRun("r2", "a", "x/z", "t", "id", wall_s=30.0, started=2.0, timed_out=True,
                     tokens={"input": 7, "output": 3, "total": 10})]
    eff = efficiency.summarise(runs)["a"]
    assert (eff.prep_mean_s, eff.prep_median_s, eff.timed_out) == (20.0, 20.0, 1)
    assert (eff.tokens_total, eff.tokens_unknown) == (10, 1)
    only_unknown = efficiency.summarise(runs[:1])["a"]
    assert only_unknown.tokens_total is None
    assert efficiency.tokens_cell(only_unknown) == "unknown (1)"
    assert efficiency.record(only_unknown, published=False)["agent_tokens_total_sum"] is None


def test_secrets_come_from_the_environment_and_an_env_file(tmp_path: Path) -> None:
    env_file = tmp_path / "keys.env"
    env_file.write_text("# keys\nexport OPENAI_API_KEY='sk-from-file'\nEXTRA=value-x\n")
    got = secrets_for(backends.BUILTIN["codex"], env_file, ["MY_TOKEN"],
                      environ={"OPENAI_API_KEY": "sk-env", "MY_TOKEN": "tok-1234",
                               "HOME": "/root"})
    assert got == {"OPENAI_API_KEY": "sk-from-file", "MY_TOKEN": "tok-1234", "EXTRA": "value-x"}
    assert scrub("key sk-from-file and tok-1234", got) == "key <redacted> and <redacted>"
    assert scrub("https://api.example", {"OPENAI_BASE_URL": "https://api.example"}) \
        == "https://api.example"  # not a secret


def test_agent_arguments_that_start_with_a_dash_are_taken_as_they_are() -> None:
    from pytest_reb.loop.agent.cli import joined_args
    from pytest_reb.loop.cli import build_parser

    argv = ["agent", "run", "--agent", "codex", "--repo", "x/y", "--arg", "--model", "--arg",
            "gpt-5.1-codex", "--arg=-c", "--arg", "model_reasoning_effort=high"]
    args = build_parser().parse_args(joined_args(argv))
    assert args.arg == ["--model", "gpt-5.1-codex", "-c", "model_reasoning_effort=high"]


# --------------------------------------------------------------------------- real CLIs


def _installed(name: str) -> Path:
    from pytest_reb.loop.agent.cli import tools_root

    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    try:
        return backends.install(backends.BUILTIN[name], tools_root() / name)
    except BackendError as exc:
        pytest.skip(f"cannot install {name} here: {exc}")


@pytest.mark.container
@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_the_real_cli_runs_from_its_read_only_mount(name: str, docker_client: Any,
                                                    tinynet_task: str, tmp_path: Path) -> None:
    """Installed with npm into a host folder, mounted read-only, run with the built-in argv
    and no key (the preflight skipped): it fails in its own words within the budget, and the
    run is an ``agent_error``, not committed (``test_agent_leaks`` commits the same CLIs and
    finds neither them nor their key in the image)."""
    from pytest_reb.loop.agent.health import SKIPPED
    from pytest_reb.loop.agent.run import run_agent
    from pytest_reb.loop.task import select

    folder = _installed(name)
    backend = backends.resolve(name)
    rec = run_agent(docker_client, backend, select(["reb/tinynet"])[0], out_root=tmp_path,
                    budget=20, gpus="none", tool_dir=folder, task_image=tinynet_task,
                    preflight=SKIPPED)
    stdout = (tmp_path / rec.run / "stdout").read_text()
    if name == "claude-code":
        result = json.loads(stdout)
        assert (result["type"], result["is_error"]) == ("result", True)
        assert rec.exit_code == 1 and isinstance(rec.tokens, dict)
    else:
        assert '"type":"thread.started"' in stdout
        assert rec.tokens == "unknown"  # no turn completed: no usage, not 0
    assert (rec.status, rec.image) == ("agent_error", None), rec.error
    assert not docker_client.images.list(filters={"label": f"reb.agent-env.run={rec.run}"})

