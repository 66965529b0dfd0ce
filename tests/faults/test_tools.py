"""The machine lacks our own tools: one clear error, never a fallback to the image's.

pytest-reb runs nothing of the image as part of the harness, so a host
without a static busybox (or with a dynamic one, which would load the
image's libc) cannot run a container target at all; the error says what to
install.  A keep-alive the commands cannot signal, and a ``/.reb`` that is
a mount point of its own, are checked on a real container.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.targets import DockerTarget, Limits, TargetError
from pytest_reb.targets.ourtools import is_static

pytestmark = pytest.mark.container


@pytest.mark.parametrize("busybox", ["/nonexistent/busybox", shutil.which("ls") or "/bin/ls"])
def test_no_static_busybox_is_one_clear_error(demo_image: str, busybox: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REB_BUSYBOX", busybox)
    target = DockerTarget(demo_image, run_id="tests-tools", gpus=[])
    try:
        with pytest.raises(TargetError, match=r"statically linked busybox.*busybox-static"):
            target.exec(["true"], timeout=10)
    finally:
        target.close()


def test_static_is_told_apart_from_dynamic() -> None:
    assert is_static(Path("/bin/busybox"))
    assert not is_static(Path(shutil.which("ls") or "/bin/ls"))
    assert not is_static(Path(__file__))


def test_a_command_cannot_touch_the_keepalive_or_our_tools(demo_image: str,
                                                           docker_client: Any) -> None:
    target = DockerTarget(demo_image, run_id="tests-tools", gpus=[], limits=Limits())
    try:
        res = target.exec(["sh", "-c", "kill -9 -1; mv /.reb /.gone; rm -rf /.reb; "
                           "echo > /.reb/busybox; echo done"], timeout=30)
        assert "done" in res.stdout
        ctr = target.container()
        assert ctr.attrs["Config"]["Healthcheck"] == {"Test": ["NONE"]}
        again = target.exec(["/.reb/busybox", "true"], timeout=30)
        assert again.exit_code == 0 and target.container().id == ctr.id  # same container
    finally:
        target.close()
