"""Startup hooks that nobody installed: a strict pass they could have produced is no pass.

- ``deferred-import-hook``: a ``.pth`` importing only importlib and base64 installs a
  meta-path finder that acts when the entrypoint imports a module (the shape of the GPU
  fake that did its work at the entrypoint's ``import torch``). No installed distribution
  lists it: strict C1 fails ``startup_hook`` and names it; compat passes, as officially.
- ``benign-name-hook``: the same code appended to setuptools' own
  ``distutils-precedence.pth``. The name is benign, the bytes are not what setuptools'
  ``RECORD`` lists: the same failure.
- ``editable-install``: a package pip installed in development mode, whose ``.pth`` and
  finder pip lists in the distribution's ``RECORD``: C1 passes strict, as does the demo's
  own environment with setuptools' hook.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import run_reb
from .images import SITE, demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize(("case", "path"), [
    ("deferred-import-hook", f"{SITE}/zz_deferred.pth"),
    ("benign-name-hook", f"{SITE}/distutils-precedence.pth")])
def test_an_unowned_startup_hook_fails_a_strict_pass(
        case: str, path: str, pytester: pytest.Pytester, hostile: Callable[[str], str],
        image_commit: str) -> None:
    module = {"test_demo__tinynet": demo_module(image_commit)}
    c1 = run_reb(pytester, hostile(case), module, "-m", "c1")["c1"]
    assert (c1.status, c1.category, c1.strict, c1.compat) == ("failed", "startup_hook",
                                                               False, True), c1.message
    assert path in c1.message and "no installed distribution owns" in c1.message
    [hook] = [f for f in c1.findings if f["path"] == path]
    assert (hook["kind"], hook["owner"], hook["seen_from"]) == ("startup_hook", None, "host")
    compat = run_reb(pytester, hostile(case), module, "-m", "c1", "--reb-compat")["c1"]
    assert (compat.status, compat.strict) == ("passed", False)


def test_hooks_pip_installs_for_ordinary_packages_keep_passing(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    module = {"test_demo__tinynet": demo_module(image_commit)}
    c1 = run_reb(pytester, hostile("editable-install"), module, "-m", "c1")["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    hooks = [f for f in c1.findings if f["kind"] in ("startup_hook", "cuda_hook")]
    assert all(f["owner"] for f in hooks), hooks
