"""Each bundle's compat variants against facts of its official scripts.

Two facts decide cases no generated report reaches by chance: the shape of
the validator's torch question (the plain ``import torch; print(torch.__version__)``
or a JSON answer), which decides what an interpreter whose answer is a fixed
text means; and what the bundle's ``run_all.sh`` leaves in its cuda stage
folder when the interpreter gave the cuda check no answer (no ``python_path``,
no such file, not executable, a folder, a timeout, a crash, nothing or no JSON
printed), which every validator then reads.  ``tests/data/compat_facts.json``
holds both as extracted from the release (facts, not its code); the release
tests read the scripts themselves where ``REB_OFFICIAL_RELEASE`` names a
checkout of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.officialscripts import release, torch_question
from support.repomodules import benchmark

from pytest_reb.spec import Repo
from pytest_reb.variants import SITUATIONS

FACTS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "compat_facts.json").read_text())["bundles"]


def repo_of(bundle: str) -> Repo:
    return benchmark()[bundle.replace("@", "/", 1)]


def test_the_facts_cover_every_bundle() -> None:
    assert {b.replace("@", "/", 1) for b in FACTS} == set(benchmark())


@pytest.mark.parametrize("bundle", sorted(FACTS))
def test_the_variant_asks_torch_as_the_validator_does(bundle: str) -> None:
    assert repo_of(bundle).c5_compat.torch_probe == FACTS[bundle]["torch_question"]


@pytest.mark.parametrize("bundle", sorted(FACTS))
def test_the_variant_writes_the_cuda_stage_run_all_leaves(bundle: str) -> None:
    variant = repo_of(bundle).c2_compat
    assert {s: getattr(variant, s) for s in SITUATIONS} == FACTS[bundle]["cuda_record"]


@pytest.mark.parametrize("bundle", sorted(FACTS))
def test_the_torch_question_is_read_from_the_release(bundle: str) -> None:
    """The fact against the script itself (skipped without the release)."""
    script = release() / "scripts" / bundle / "benchmark_scripts" / "validate_agent_report.py"
    asked = torch_question(script.read_text(encoding="utf-8"))
    assert asked == FACTS[bundle]["torch_question"] == repo_of(bundle).c5_compat.torch_probe


def test_the_question_shape_reader() -> None:
    """The reader tells a JSON answer from a plain one, a snippet from a one-liner."""
    plain = 'run([py, "-c", "import torch; print(torch.__version__)"])\nprint(json.dumps(x))\n'
    one_line_json = "c = \"import json,torch; print(json.dumps({'v': torch.__version__}))\""
    snippet = 'probe = r"""\nimport json\ntry:\n  import torch\n  ok = 1\nexcept: pass\n' \
              'print(json.dumps(out))\n"""\nprint("import torch")\n'
    assert torch_question(plain) == "plain"
    assert torch_question(one_line_json) == "json"
    assert torch_question(snippet) == "json"
    assert torch_question("print(1)\n") is None
