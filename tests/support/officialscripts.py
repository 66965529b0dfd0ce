"""Facts read from the official release's scripts, for the compat tests.

The release is never part of this project: a test that reads it takes its
folder from ``REB_OFFICIAL_RELEASE`` (a checkout holding
``scripts/<owner>@<repo>/benchmark_scripts``) and is skipped without it; the
facts themselves, extracted once, are kept in ``tests/data/compat_facts.json``
so the always-run tests check every variant against them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

#: ``import torch`` as the validators write it (``import json,torch`` too).
IMPORT_TORCH = re.compile(r"import (?:json, ?)?torch\b")


def release() -> Path:
    """The official release named by ``REB_OFFICIAL_RELEASE``; the test is skipped without it."""
    where = os.environ.get("REB_OFFICIAL_RELEASE", "")
    if not where or not (Path(where) / "scripts").is_dir():
        pytest.skip("REB_OFFICIAL_RELEASE names no checkout of the official release "
                    "(its scripts/ folder); the facts table stands in for it")
    return Path(where)


def torch_question(validator: str) -> str | None:
    """The shape of a validator's torch question: ``json`` where the code that first imports
    torch prints ``json.dumps`` of its answer, ``plain`` where it prints the version alone;
    None where it asks none.

    The code is the string it sits in: a triple-quoted snippet, or else the rest of the
    line (a ``-c`` one-liner).
    """
    found = IMPORT_TORCH.search(validator)
    if found is None:
        return None
    at = found.start()
    for quote in ('"""', "'''"):
        if validator[:at].count(quote) % 2:
            snippet = validator[validator.rfind(quote, 0, at):validator.find(quote, at)]
            break
    else:
        snippet = validator[at:validator.find("\n", at)]
    return "json" if "json.dumps" in snippet else "plain"
