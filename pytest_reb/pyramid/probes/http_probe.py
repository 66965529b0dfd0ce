"""Client for ``server_http`` runs: start the server, wait until it answers, ask, check.

Runs inside the target (network is off; everything is on loopback) with the
standard library only.  Argument: one JSON object with ``server`` (argv),
``port``, ``ready`` ("GET /health"), ``ready_within``, ``request``,
``json_body`` / ``form_files`` / ``form_fields``, ``expect_json_key``,
``min_bytes`` and ``request_timeout``.  Exit 0 only when the answer passes.
The server's output goes to this process's stdout/stderr so the host sees it.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid


def _request(method: str, url: str, spec: dict, timeout: float) -> tuple[int, bytes]:
    headers = {}
    data = None
    if spec.get("json_body") is not None:
        data = json.dumps(spec["json_body"]).encode()
        headers["Content-Type"] = "application/json"
    elif spec.get("form_files") or spec.get("form_fields"):
        boundary = uuid.uuid4().hex
        parts = []
        for name, value in (spec.get("form_fields") or {}).items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
                         f"\r\n\r\n{value}\r\n".encode())
        for name, path in (spec.get("form_files") or {}).items():
            with open(path, "rb") as fh:
                body = fh.read()
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                         f'filename="{os.path.basename(path)}"\r\nContent-Type: '
                         "application/octet-stream\r\n\r\n".encode() + body + b"\r\n")
        data = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def main() -> int:
    spec = json.loads(sys.argv[1])
    base = f"http://127.0.0.1:{spec['port']}"
    server = subprocess.Popen(spec["server"], start_new_session=True)
    verdict = {"ok": False}
    try:
        method, path = spec["ready"].split(" ", 1)
        deadline = time.monotonic() + float(spec["ready_within"])
        ready = False
        while time.monotonic() < deadline and server.poll() is None:
            try:
                status, _ = _request("GET", base + path, {}, 5)
                ready = status == 200
            except OSError:
                ready = False
            if ready:
                break
            time.sleep(0.5)
        if not ready:
            verdict["error"] = (f"server exited with {server.returncode}" if server.poll()
                                is not None else f"{spec['ready']} not 200 within "
                                f"{spec['ready_within']}s")
            return 1
        method, path = spec["request"].split(" ", 1)
        status, body = _request(method, base + path, spec, float(spec["request_timeout"]))
        verdict.update(status=status, bytes=len(body))
        if status // 100 != 2:
            verdict["error"] = f"{spec['request']} answered {status}"
            return 1
        if spec.get("expect_json_key"):
            try:
                doc = json.loads(body)
            except ValueError:
                verdict["error"] = "answer is not JSON"
                return 1
            if not isinstance(doc, dict) or spec["expect_json_key"] not in doc:
                verdict["error"] = f"answer has no {spec['expect_json_key']!r} key"
                return 1
        if len(body) < int(spec.get("min_bytes") or 0):
            verdict["error"] = f"answer has {len(body)} bytes, fewer than {spec['min_bytes']}"
            return 1
        verdict["ok"] = True
        return 0
    finally:
        with contextlib.suppress(OSError):
            os.killpg(server.pid, signal.SIGKILL)
        print("REB_HTTP_PROBE " + json.dumps(verdict), flush=True)


if __name__ == "__main__":
    sys.exit(main())
