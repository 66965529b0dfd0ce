"""A loopback OpenAI-compatible chat service that answers scripted tool calls.

It listens on 127.0.0.1 only, answers ``GET /v1/models`` (what a preflight asks) and
``POST /v1/chat/completions`` from a script: each answer is a tool call (by the name of a
tool the request offered, matched without case) or a final text, streamed as server-sent
events when the request asks for a stream, with a ``usage`` of its own. Once the script
is used up every answer is the final text, so a client that keeps asking ends. Every
request is kept (headers, named in lower case, and body) for the test to read.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    """One answer: a call of the tool named ``tool`` with ``arguments``, or ``text``."""

    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = "done"
    usage: tuple[int, int] = (100, 10)


@dataclass
class Service:
    url: str
    requests: list[dict[str, Any]]


def _answer(step: Step, offered: list[str], n: int) -> dict[str, Any]:
    """The assistant message of ``step`` (a tool call by its offered name, or text)."""
    if step.tool is None:
        return {"role": "assistant", "content": step.text}
    name = next((o for o in offered if o.lower() == step.tool.lower()), step.tool)
    return {"role": "assistant", "content": None, "tool_calls": [{
        "id": f"call_{n}", "type": "function",
        "function": {"name": name, "arguments": json.dumps(step.arguments)}}]}


def _handler(script: list[Step], seen: list[dict[str, Any]]) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            return

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _json(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            seen.append({"method": "GET", "path": self.path, "headers": self._headers()})
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "scripted", "object":
                                                             "model"}]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            with lock:
                seen.append({"method": "POST", "path": self.path,
                             "headers": self._headers(), "body": body})
                n = sum(1 for r in seen if r["method"] == "POST")
                step = script[n - 1] if n <= len(script) else Step()
            offered = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
            message = _answer(step, offered, n)
            finish = "tool_calls" if step.tool else "stop"
            usage = {"prompt_tokens": step.usage[0], "completion_tokens": step.usage[1],
                     "total_tokens": sum(step.usage)}
            if not body.get("stream"):
                self._json(200, {"id": f"chat-{n}", "object": "chat.completion",
                                 "created": int(time.time()), "model": body.get("model"),
                                 "choices": [{"index": 0, "message": message,
                                              "finish_reason": finish}], "usage": usage})
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            for chunk in _chunks(n, body.get("model"), message, finish, usage):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    return Handler


def _chunks(n: int, model: Any, message: dict[str, Any], finish: str,
            usage: dict[str, int]) -> Iterator[dict[str, Any]]:
    """The stream of one answer: the delta, the finish, then the usage (as OpenAI sends it
    for ``stream_options.include_usage``)."""
    head = {"id": f"chat-{n}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": 0, **call} for call in message["tool_calls"]]
    yield {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    yield {**head, "choices": [], "usage": usage}


class ScriptedLLM:
    """``with ScriptedLLM(script) as service:`` a server on 127.0.0.1 for the block."""

    def __init__(self, script: list[Step]) -> None:
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script, self.requests))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Service:
        self._thread.start()
        host, port = self._server.server_address[:2]
        return Service(f"http://{host}:{port}/v1", self.requests)

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
