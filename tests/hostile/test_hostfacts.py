"""C5's probe answers against the host's read of the target's files (``audit.hostfacts``).

- ``version-liar``: a ``.pth`` makes ``platform.python_version()`` say 3.12.4 and
  ``torch.__version__`` say 2.5.1+cu124 to every interpreter start but the entrypoint's (the
  probes' and the official one-liners), and the report claims both.  The probe answers the
  nonce with the lies; the interpreter's file name and the wheel's files on disk say 3.11
  and 2.13.0+cpu: strict fails ``version_hallucination`` on both, compat keeps the official
  verdict (the one-liners believe the lie).
- ``version-files-edited``: the same, with the image's files edited to agree (``pyvenv.cfg``
  says 3.12.4, ``torch/version.py`` ends with 2.5.1+cu124, so torch really says it): the
  interpreter's own name and the wheel's metadata still contradict the claims.
- ``torch-behind-pth``: the liar of ``version-liar``, and torch moved out of the site folder
  to a folder a ``.pth`` path line adds.  The host's facts missed it, and "no fact" passed the
  lie; they now follow ``.pth`` path lines and find its ``version.py`` saying 2.13.0+cpu.
- ``torch-behind-import-line``: the folder added by a ``.pth`` ``import`` line (code, not a
  path): the host finds no torch where the interpreter finds packages, so no file supports
  the version the probe printed.  Both fail strict ``version_hallucination`` on torch.
- the honest demo: the host's facts agree with its probe, and strict passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.hostile import run_reb
from support.imagecase import SITE
from support.images import demo_module

pytestmark = pytest.mark.container

HOST_RULES = {"python_version_contradicts_host", "torch_version_contradicts_host"}


def rules(outcome: Any, mode: str) -> set[str]:
    return {f["rule"] for f in outcome.evidence[mode]["findings"]}


@pytest.mark.parametrize("case", ["version-liar", "version-files-edited"])
def test_probe_answers_that_the_disk_contradicts_fail_strict(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c5")
    c5 = run["c5"]
    observed = c5.evidence["observed"]
    # the nonce came back, with the lies in it
    assert observed["runs"] is True
    assert (observed["python_version"], observed["torch_version"]) == ("3.12.4", "2.5.1+cu124")
    assert (c5.status, c5.category, c5.strict) == ("failed", "version_hallucination", False), \
        c5.message
    assert rules(c5, "strict") == HOST_RULES
    host = observed["host"]
    assert host["resolved"] == "/usr/bin/python3.11" and "3.11" in host["major_minor"]
    assert any(v == "2.13.0+cpu" for t in host["torch"] for v in t["versions"].values())
    [py] = [f for f in c5.evidence["strict"]["findings"] if f["field"] == "python_version"]
    assert "Python 3.11" in py["evidence"] and py["claim"] == "3.12.4"
    # compat is the official validator's verdict: its one-liners believe the lie
    assert c5.compat is True and c5.evidence["compat"]["category"] is None


def test_honest_interpreter_agrees_with_the_disk(pytester: pytest.Pytester, demo_image: str,
                                                 image_commit: str) -> None:
    run = run_reb(pytester, demo_image, {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c5")
    c5 = run["c5"]
    host = c5.evidence["observed"]["host"]
    assert host["problem"] is None and host["full"] == {"3.11.2": "/opt/envs/tinynet/pyvenv.cfg"}
    assert [t["folder"] for t in host["torch"]] == [SITE]
    assert not (rules(c5, "strict") & HOST_RULES)
    assert (c5.strict, c5.compat) == (True, True), c5.message


@pytest.mark.parametrize(("case", "says"), [
    ("torch-behind-pth", "2.13.0+cpu"), ("torch-behind-import-line", "no torch install")])
def test_a_torch_the_site_folder_does_not_list_is_still_checked(
        pytester: pytest.Pytester, hostile: Callable[[str], str], image_commit: str,
        case: str, says: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c5")
    c5 = run["c5"]
    assert c5.evidence["observed"]["torch_version"] == "2.5.1+cu124"  # the lie came back
    assert (c5.status, c5.category, c5.strict) == ("failed", "version_hallucination", False)
    assert rules(c5, "strict") == HOST_RULES, c5.message
    [torch] = [f for f in c5.evidence["strict"]["findings"] if f["field"] == "torch_version"]
    assert says in torch["evidence"]
