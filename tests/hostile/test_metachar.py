"""Shell metacharacters in every string the image or the report controls: no injection.

- ``metachar``: ``$(...)``, backticks, ``;``, quotes and pipes in every string of the
  report, in the interpreter's path, in ``.pth`` and package file names, in ``PATH`` and
  another variable of the image, in an untracked file name and an edited tracked file of
  the checkout.  C1 passes, the claimed interpreter's path passed as one argument; C2
  fails ``cuda_unavailable`` as for the honest demo; C5 fails ``version_hallucination``
  (the claims are garbage); no canary file appears, in the container or on the host.

A canary is a file that ``touch`` would create if anything put one of those
strings through a shell: ``/tmp/pwned`` and ``reb-pwned`` (relative: where a
shell ran) in the container, ``/tmp/reb-hostile-host-canary`` and ``reb-pwned`` in
the run's folder on the host.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.hostile import AfterTier, output_while_there, run_reb
from support.imagecase import SITE
from support.images import module_text
from support.payloads import HOST_CANARY, INJECTED_PYTHON, RELATIVE_CANARY, TARGET_CANARY

pytestmark = pytest.mark.container

C1 = 'Run(["{python}", "-c", "import sys; print(\'C1_OK\', sys.argv)"], expect_log=["C1_OK"])'


def test_no_string_of_the_image_or_report_reaches_a_shell(
        pytester: pytest.Pytester, docker_client: Any, hostile: Callable[[str], str],
        image_commit: str) -> None:
    Path(HOST_CANARY).unlink(missing_ok=True)
    image = hostile("metachar")
    seen: dict[str, Any] = {}

    def check(containers: list[Any]) -> None:
        assert containers  # the run's container, and the twin where C2 and C5 asked
        seen["in_target"] = []
        for ctr in containers:  # as root, as commands run
            found = output_while_there(ctr, ["find", "/", "-xdev", "(", "-path", TARGET_CANARY,
                                             "-o", "-name", RELATIVE_CANARY, ")", "-print"])
            seen["in_target"] += (found or "").split()

    after = AfterTier(docker_client, image, "c5", check)
    run = run_reb(pytester, image, {"test_metachar": module_text(
        "reb/metachar", image_commit, cpu=C1)}, "-m", "c1 or c2 or c5", plugins=(after,))
    c1, c2, c5 = run["c1"], run["c2"], run["c5"]
    # the run ran (the official pass); strict names the image's unowned .pth files verbatim
    assert (c1.compat, c1.status, c1.category) == (True, "failed", "integrity"), c1.message
    assert f"{SITE}/$(touch {RELATIVE_CANARY}).pth" in c1.message
    assert c1.command is not None and c1.command[0] == INJECTED_PYTHON
    assert (c2.status, c2.category) == ("failed", "cuda_unavailable"), c2.message
    assert (c5.status, c5.category) == ("failed", "version_hallucination"), c5.message
    assert c5.evidence["observed"]["sys_executable"] == INJECTED_PYTHON
    # the names were read, as data
    hooks = {f["path"] for f in c2.findings if f["kind"] == "startup_hook"}
    assert f"{SITE}/$(touch {RELATIVE_CANARY}).pth" in hooks
    assert any(f["kind"] == "fake_nvidia_smi" and f["path"].startswith("/opt/$(touch ")
               for f in c2.findings)
    [edit] = [f for f in c1.findings if f["kind"] == "modified"]
    assert edit["path"] == "configs/tiny.yaml" and "$(touch" in edit["diff"]
    # and nothing ran them
    assert after.called == 1 and seen == {"in_target": []}
    assert not os.path.exists(HOST_CANARY)
    assert not list(pytester.path.rglob(f"*{RELATIVE_CANARY}*"))
