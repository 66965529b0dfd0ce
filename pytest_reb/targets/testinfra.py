"""Any other testinfra URL as the target (``ssh://gpu-node``, ``docker://name``, ``kubectl://pod``).

testinfra has no timeout, so the command is wrapped in ``timeout -k`` and the
call runs in a thread with a host deadline.  The module shares testinfra's
name because it is the target made of it; ``import testinfra`` is absolute,
so it is the library's.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Sequence
from typing import Any

from pytest_reb.evidence.gpu_use import gpu_indices
from pytest_reb.targets.base import HOST_SLACK, KILL_GRACE, Target, cuda_visible, wrap_timeout
from pytest_reb.targets.result import ExecResult, TailBuffer, finish


class TestinfraTarget(Target):
    """Any testinfra URL (``ssh://gpu-node``, ``docker://name``, ``kubectl://pod``).

    testinfra has no timeout, so the command is wrapped in ``timeout -k`` and
    the call runs in a thread with a host deadline.  There is no host-side
    view of the remote processes, so no GPU evidence: strict GPU tiers say so.
    """

    __test__ = False  # not a pytest test class despite its name

    def __init__(self, url: str, gpus: Sequence[str] | None = None) -> None:
        import testinfra

        self.name = url
        self._host = testinfra.get_host(url)
        self.gpus = list(gpus) if gpus is not None else self._remote_gpus()

    def _remote_gpus(self) -> list[str]:
        """The GPUs of the remote host (``nvidia-smi -L`` there), not the controller's."""
        res = self._exec(["nvidia-smi", "-L"], timeout=30, env={}, cwd=None, devices=[])
        return gpu_indices(res.stdout) if res.exit_code == 0 else []

    def _exec(self, argv: list[str], *, timeout: float, env: dict[str, str], cwd: str | None,
              devices: list[str]) -> ExecResult:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible(env, devices)
        line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()),
                           *wrap_timeout(argv, timeout)])
        if cwd:
            line = f"cd {shlex.quote(cwd)} && {line}"
        box: dict[str, Any] = {}
        start = time.monotonic()
        worker = threading.Thread(target=lambda: box.update(r=self._host.run(line)), daemon=True)
        worker.start()
        worker.join(timeout + KILL_GRACE + HOST_SLACK)
        duration = time.monotonic() - start
        if "r" not in box:
            res = ExecResult(argv, None, "", "host deadline passed; the remote command may "
                             "still run", duration, killed_by_host=True)
            return finish(res, timeout, None)
        r = box["r"]
        out, err = TailBuffer(), TailBuffer()
        out.feed(r.stdout_bytes)
        err.feed(r.stderr_bytes)
        return finish(ExecResult(argv, r.rc, out.text(), err.text(), duration,
                                  stdout_bytes=out.total, stderr_bytes=err.total), timeout, None)

    def read_file(self, path: str, limit: int = 1 << 20) -> bytes | None:
        box: dict[str, Any] = {}
        cmd = shlex.join(["head", "-c", str(limit), path])
        worker = threading.Thread(target=lambda: box.update(r=self._host.run(cmd)), daemon=True)
        worker.start()
        worker.join(60)
        r = box.get("r")
        return bytes(r.stdout_bytes) if r is not None and r.rc == 0 else None

    @property
    def host(self) -> Any:
        return self._host
