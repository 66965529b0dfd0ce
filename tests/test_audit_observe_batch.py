"""C5's questions to the report's interpreter share one start, with the answers of separate ones.

Each ``import torch`` costs seconds, and C5 asked four times (the strict nonce
probe, then the official validators' three questions).  The batched probe asks
them all in one start; these tests hold it to the answers a fresh ``python -c``
gives in the checkout, and to asking each question alone where one start
could answer otherwise (a checkout that shadows a module the strict part
imported).  The interpreter is real (a wrapper of this one that logs each
start) with a stand-in ``torch``; the target is the local one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_reb.audit.observe import OFFICIAL_QUESTIONS, observe_python
from pytest_reb.target import LocalTarget

TORCH = "__version__ = '2.4.0+cpu'\nclass cuda:\n    is_available = staticmethod(lambda: False)\n" \
        "    device_count = staticmethod(lambda: 0)\n"


def interpreter(tmp_path: Path, torch: str) -> tuple[str, Path]:
    """A wrapper of this Python that sees ``torch`` and logs every start to a file."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(torch)
    starts = tmp_path / "starts"
    wrapper = tmp_path / "bin" / "python"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\necho start >> '{starts}'\n"
                       f"PYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")
    wrapper.chmod(0o755)
    return str(wrapper), starts


def fresh(python: str, code: str, cwd: Path) -> tuple[int, str, str]:
    """What the official validator saw: a fresh ``python -c CODE`` in the checkout."""
    res = subprocess.run([python, "-c", code], cwd=cwd, capture_output=True, text=True)
    return res.returncode, res.stdout, res.stderr


@pytest.mark.parametrize("torch", [TORCH, "raise ImportError('no torch built for this CPU')",
                                   "import sys\nsys.exit(3)", "x = 1  # no __version__"],
                         ids=["torch", "import-error", "exits", "no-version"])
def test_one_start_answers_as_fresh_starts_would(tmp_path: Path, torch: str) -> None:
    python, starts = interpreter(tmp_path, torch)
    checkout = tmp_path / "repo"
    checkout.mkdir()
    obs = observe_python(LocalTarget(), python, checkout=str(checkout))
    assert obs.runs
    assert starts.read_text().count("start") == 1
    starts.unlink()
    for key, code, _ in OFFICIAL_QUESTIONS:
        run = getattr(obs, key)
        code_, out, err = fresh(python, code, checkout)
        assert (run.exit_code, run.stdout) == (code_, out), key
        assert run.stderr.strip().splitlines()[-1:] == err.strip().splitlines()[-1:], key


def test_a_checkout_that_shadows_an_imported_module_is_asked_apart(tmp_path: Path) -> None:
    python, starts = interpreter(tmp_path, TORCH)
    checkout = tmp_path / "repo"
    (checkout / "torch").mkdir(parents=True)
    (checkout / "torch" / "__init__.py").write_text("__version__ = 'the checkout'\n")
    obs = observe_python(LocalTarget(), python, checkout=str(checkout))
    assert obs.torch_version == "2.4.0+cpu"  # the strict question, asked from /
    assert obs.official_torch.stdout == "the checkout\n"  # as the validator saw it
    assert starts.read_text().count("start") == 1 + len(OFFICIAL_QUESTIONS)
