"""Startup hooks that nobody installed, read on real images: who owns each, seen from the host.

- ``deferred-import-hook``: a ``.pth`` importing only importlib and base64 installs a
  meta-path finder that acts when the entrypoint imports a module (the shape of the GPU
  fake that did its work at the entrypoint's ``import torch``). No installed distribution
  lists it: its finding has no owner, so a strict C3/C4 pass it could have produced is a
  ``startup_hook`` failure (``tests/test_findings.py``; on the H200 in docs/gpu.md). Every
  stage also loaded it, a file no distribution vouches for: strict C1 fails ``integrity``
  naming it (``rules/loaded.py``).
- ``benign-name-hook``: the same code appended to setuptools' own
  ``distutils-precedence.pth``. The name is benign, the bytes are not what setuptools'
  ``RECORD`` lists: no owner either.
- ``editable-install``: a package pip installed in development mode, whose ``.pth`` and
  finder pip lists in the distribution's ``RECORD``: owned, as is the demo's own
  setuptools hook; no note on the pass.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import run_reb
from support.imagecase import SITE
from support.images import demo_module

pytestmark = pytest.mark.container


@pytest.mark.parametrize(("case", "path"), [
    ("deferred-import-hook", f"{SITE}/zz_deferred.pth"),
    ("benign-name-hook", f"{SITE}/distutils-precedence.pth")])
def test_an_unowned_startup_hook_has_no_owner_and_fails_strict_as_loaded(
        case: str, path: str, pytester: pytest.Pytester, hostile: Callable[[str], str],
        image_commit: str) -> None:
    """The run loaded a file no distribution vouches for (``rules/loaded.py``): strict C1
    fails ``integrity`` naming it; the official rule passes."""
    module = {"test_demo__tinynet": demo_module(image_commit)}
    c1 = run_reb(pytester, hostile(case), module, "-m", "c1")["c1"]
    assert (c1.status, c1.strict, c1.compat) == ("failed", False, True), c1.message
    assert c1.category == "integrity" and path in c1.message, c1.message
    [hook] = [f for f in c1.findings if f["path"] == path]
    assert (hook["kind"], hook["owner"], hook["seen_from"]) == ("startup_hook", None, "host")


def test_hooks_pip_installs_for_ordinary_packages_keep_passing(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str) -> None:
    module = {"test_demo__tinynet": demo_module(image_commit)}
    c1 = run_reb(pytester, hostile("editable-install"), module, "-m", "c1")["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    hooks = [f for f in c1.findings if f["kind"] in ("startup_hook", "cuda_hook")]
    assert all(f["owner"] for f in hooks), hooks
    assert "could have produced" not in c1.message
