"""C5 asks only the official torch questions the repository's validator reads.

Each official question is an ``import torch`` of its own in the target, a few
seconds each on a real environment; the bundles read either the plain
``print(torch.__version__)`` or the JSON probe (and the JSON one also where the
device count comes from it), never both.  What is not asked must not change a
verdict: the compat audit of a variant gets the same counts from the questions
it reads as from all of them.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import pytest

from pytest_reb.pyramid.c5_observe import observe_python
from pytest_reb.rules.c5 import audit
from pytest_reb.selfreport import load_report
from pytest_reb.spec import CompatVariant
from pytest_reb.targets import LocalTarget


@pytest.fixture
def python(tmp_path: Path) -> str:
    """This interpreter, wrapped, with a stand-in torch of a known version."""
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text('__version__ = "2.4.0"\n'
                                      "class cuda:\n    is_available = staticmethod(lambda: False)"
                                      "\n    device_count = staticmethod(lambda: 0)\n")
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nPYTHONPATH='{site.parent}' exec '{sys.executable}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.mark.parametrize(("variant", "asked"), [
    (CompatVariant(), {"plain"}),
    (CompatVariant(torch_probe="json"), {"json"}),
    (CompatVariant(gpu_from="stage_or_probe"), {"plain", "json"}),
    (CompatVariant(torch_probe="json", gpu_from="probe"), {"json"}),
])
def test_a_variant_names_the_questions_it_reads(variant: CompatVariant, asked: set[str]) -> None:
    assert variant.torch_questions == asked


@pytest.mark.parametrize("variant", [CompatVariant(), CompatVariant(torch_probe="json"),
                                     CompatVariant(gpu_from="probe")])
@pytest.mark.parametrize("claim", ["2.4.0", "9.9.9", None])
def test_the_questions_not_asked_change_no_verdict(python: str, tmp_path: Path,
                                                   variant: CompatVariant,
                                                   claim: str | None) -> None:
    report = {"python_path": python, "python_version": platform.python_version(),
              "torch_version": claim, "cuda_available": False, "gpu_count": 0,
              "ddp_expected_ok": None, "env_tool": "venv", "env_name": None, "notes": ""}
    load = load_report(json.dumps(report).encode(), source="report.json")
    target = LocalTarget()
    every = observe_python(target, python, checkout=str(tmp_path))
    few = observe_python(target, python, checkout=str(tmp_path),
                         torch_questions=variant.torch_questions)
    assert (few.official_torch is None) == ("plain" not in variant.torch_questions)
    assert (few.official_torch_json is None) == ("json" not in variant.torch_questions)
    judged = [audit(load, seen, {}, compat=True, variant=variant) for seen in (every, few)]
    assert judged[0].counts == judged[1].counts
    assert judged[0].passed == judged[1].passed == (claim != "9.9.9")


def test_torch_is_probed_without_a_version_through_the_json_question(
        python: str, tmp_path: Path) -> None:
    """A validator that probes torch although its version question failed still judges the
    torch claim when only its JSON question was asked."""
    failing = tmp_path / "python-no-version"
    failing.write_text(f"#!/bin/sh\ncase \"$2\" in *python_version*) exit 1;; esac\n"
                       f"exec '{python}' \"$@\"\n")
    failing.chmod(0o755)
    variant = CompatVariant(torch_probe="json", torch_needs_version=False)
    report = {"python_path": str(failing), "python_version": "3.0.0", "torch_version": "9.9.9",
              "cuda_available": False, "gpu_count": 0, "ddp_expected_ok": None,
              "env_tool": "venv", "env_name": None, "notes": ""}
    load = load_report(json.dumps(report).encode(), source="report.json")
    seen = observe_python(LocalTarget(), str(failing), checkout=str(tmp_path),
                          torch_questions=variant.torch_questions)
    assert seen.official_torch is None and seen.official_torch_json is not None
    rules = [f.rule for f in audit(load, seen, {}, compat=True, variant=variant).findings]
    assert "torch_version_mismatch" in rules
