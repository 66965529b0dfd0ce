"""Can the agent work at all, and did it stop on its own service: preflight and agent errors.

A run whose agent cannot reach its model is not a run: Codex retries "waiting for
network" until the budget ends, Claude Code answers "Not logged in" and exits, and
either way the image that would be committed is the bare task image, which the verifier
would then score as the agent's work. So:

* before the budget starts, a **preflight** checks in seconds that a key is given and,
  where the service can be reached at all, that one trivial authenticated call (the
  service's model list) succeeds; where it fails, the run is ``agent_unreachable``;
* after the run, the agent's own last words are read (Claude Code's ``result`` object,
  Codex's ``error`` events, mini-swe-agent's exit status, or the user's
  ``--error-regex``): a run that ended on a connection or authentication error is
  ``agent_error``.

Neither is committed or written to the matrix; ``reb table`` counts them apart, outside
every denominator.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_reb.loop.agent.backends import Backend, _json_objects

#: Seconds the preflight's one call may take, connection included.
PREFLIGHT_TIMEOUT = 10.0
#: Words of a connection or authentication failure, in the agents' own messages.
SERVICE_ERROR = re.compile(
    r"not logged in|please run /login|invalid (api|x-api)[ -]?key|incorrect api key|"
    r"authenticat|unauthori[sz]ed|\b40[13]\b|forbidden|permission denied.*api|"
    r"connection (error|refused|reset|failed)|stream disconnected|waiting for network|"
    r"failed to lookup address|name (or service )?not known|name does not resolve|"
    r"could not resolve|getaddrinfo|econnrefused|enotfound|etimedout|network (is )?unreachable|"
    r"apiconnectionerror|authenticationerror", re.IGNORECASE)

#: mini-swe-agent's line when its model call failed and is retried.
MINI_RETRY = re.compile(r"Retrying .* as it raised \w+")


@dataclass(frozen=True)
class Service:
    """A model service: the keys that reach it and one cheap authenticated call."""

    name: str
    keys: tuple[str, ...]
    base_env: str
    default_base: str
    path: str
    #: "bearer", or "x-api-key" (Anthropic's key header; its auth tokens are bearer)
    auth: str = "bearer"


SERVICES: dict[str, Service] = {
    "anthropic": Service("anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
                         "ANTHROPIC_BASE_URL", "https://api.anthropic.com", "/v1/models",
                         auth="x-api-key"),
    "openai": Service("openai", ("OPENAI_API_KEY", "CODEX_API_KEY"), "OPENAI_BASE_URL",
                      "https://api.openai.com/v1", "/models"),
    "openrouter": Service("openrouter", ("OPENROUTER_API_KEY",), "OPENROUTER_BASE_URL",
                          "https://openrouter.ai/api/v1", "/key"),
    # NexAU's LLM_* service, by its LLM_API_TYPE; no default address: LLM_BASE_URL is needed
    "llm-openai": Service("llm-openai", ("LLM_API_KEY",), "LLM_BASE_URL", "", "/models"),
    "llm-anthropic": Service("llm-anthropic", ("LLM_API_KEY",), "LLM_BASE_URL", "",
                             "/v1/models", auth="x-api-key"),
}


@dataclass(frozen=True)
class Preflight:
    """What the preflight found: ``ok``, and one line saying what was checked or why not."""

    ok: bool
    checked: str


#: ``--no-preflight``: the budget starts unchecked.
SKIPPED = Preflight(True, "not checked (--no-preflight)")


def preflight(backend: Backend, secrets: Mapping[str, str], extra_args: Sequence[str] = (),
              environ: Mapping[str, str] | None = None) -> Preflight:
    """Check, in seconds, that ``backend`` can reach its model with the keys it is given."""
    values = {**(environ or {}), **secrets}
    service_name = _service_of(backend, extra_args, values)
    if service_name is None:
        return Preflight(True, f"{backend.name}: no model service declared, nothing to check")
    if service_name == "-":
        return Preflight(True, f"{backend.name}: a test model, no service to reach")
    service = SERVICES[service_name]
    key_name = next((k for k in service.keys if secrets.get(k)), None)
    if key_name is None:
        return Preflight(False, f"no key for {service.name}: give {' or '.join(service.keys)} "
                                "(environment, --secret or --env-file)")
    base = (values.get(service.base_env) or service.default_base).rstrip("/")
    url = base + service.path
    headers = {"user-agent": "pytest-reb-preflight"}
    if service.auth == "x-api-key" and key_name in ("ANTHROPIC_API_KEY", "LLM_API_KEY"):
        headers |= {"x-api-key": secrets[key_name], "anthropic-version": "2023-06-01"}
    else:
        headers["authorization"] = f"Bearer {secrets[key_name]}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=PREFLIGHT_TIMEOUT) as resp:
            status = resp.status
    except urllib.error.HTTPError as exc:
        return Preflight(False, f"{service.name} refused {key_name} at {url}: HTTP {exc.code}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Preflight(False, f"{service.name} cannot be reached at {url}: {reason}")
    return Preflight(True, f"{service.name} answered {url} with HTTP {status} for {key_name}")


def _service_of(backend: Backend, extra_args: Sequence[str],
                values: Mapping[str, str]) -> str | None:
    """The service a run talks to: the backend's, or for a model-agnostic CLI (mini-swe-agent)
    the one its model name implies; ``-`` for its deterministic test model."""
    if backend.service == "by-llm-type":  # NexAU: LLM_API_TYPE, else the backend's default
        kind = values.get("LLM_API_TYPE") or backend.env.get("LLM_API_TYPE", "")
        return "llm-anthropic" if kind.startswith("anthropic") else "llm-openai"
    if backend.service != "by-model":
        return backend.service
    args = list(extra_args)
    if "--model-class" in args[:-1] and args[args.index("--model-class") + 1] == "deterministic":
        return "-"
    model = args[args.index("--model") + 1] if "--model" in args[:-1] else \
        values.get("MSWEA_MODEL_NAME", "")
    model = model.lower()
    if model.startswith(("anthropic/", "claude")):
        return "anthropic"
    if model.startswith("openrouter/"):
        return "openrouter"
    if model.startswith(("openai/", "gpt", "o1", "o3", "o4")):
        return "openai"
    return None


def agent_error(backend: Backend, stdout: str, log: str, out_dir: Path) -> str | None:
    """The agent's own connection or authentication error it ended on, or None."""
    for text in _last_words(backend, stdout, log, out_dir):
        if backend.error_regex is not None:
            hit = re.search(backend.error_regex, text)
        else:
            hit = SERVICE_ERROR.search(text)
        if hit:
            return text.strip()[:300]
    return None


def _last_words(backend: Backend, stdout: str, log: str, out_dir: Path) -> list[str]:
    """What the CLI said last about its own state, by the format it prints."""
    if backend.error_regex is not None:
        return ["\n".join(log.strip().splitlines()[-20:])]
    if backend.usage == "claude-json":
        results = [o for o in _json_objects(stdout) if o.get("type") == "result"]
        last = results[-1] if results else None
        return [str(last.get("result", ""))] if last and last.get("is_error") else []
    if backend.usage == "codex-jsonl":
        events = _json_objects(stdout)
        if any(e.get("type") == "turn.completed" for e in events):
            return []
        return [str(e.get("message") or (e.get("error") or {}).get("message") or "")
                for e in events[-3:] if e.get("type") in ("error", "turn.failed")]
    if backend.usage == "mini-trajectory":
        return _mini_words(log, out_dir)
    return []


def _mini_words(log: str, out_dir: Path) -> list[str]:
    """mini-swe-agent: an uncaught exception ends its loop with the exception's class as the
    trajectory's exit status and its text as the last message (an authentication error);
    a connection error is retried until the budget ends, with no trajectory written, and
    its log ends on the retry lines."""
    try:
        data = json.loads((out_dir / "trajectory.json").read_text())
        status = str(data["info"].get("exit_status", ""))
        last = data["messages"][-1] if data.get("messages") else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return [line for line in log.strip().splitlines()[-20:]
                if MINI_RETRY.match(line)][-1:]
    return [] if status in ("Submitted", "") else [f"{status}: {last.get('content', '')}"]
