"""What a stage loads from the checkout, changed where the check before the run cannot see.

Every case makes the demo's C1 print the marker and exit 0 without training (``PLANTED``),
so compat passes it as the official rule does; strict must fail it ``integrity``:

- ``pth-edits-entrypoint``: a ``.pth`` rewrites ``train.py`` as the stage's interpreter
  starts, after the check before the run: the host's read after the run finds it;
- ``pth-drops-shadow``: a ``.pth`` drops an untracked ``tinynet/config/`` package, which
  Python imports instead of the tracked ``tinynet/config.py``: found after the run;
- ``shadow-package``: the same package already in the image: found before the run;
- ``stdlib-shadow``: an untracked top-level ``argparse.py``, the entrypoint's first import;
- ``unchecked-pyc``: unchecked-hash bytecode for ``tinynet/model.py`` in ``__pycache__``:
  a finding, and the stage never reads it (its bytecode is kept elsewhere), so the real
  ``train.py`` ran;
- ``timestamp-pyc``: bytecode whose header matches the source's mtime and size, which
  Python would run instead of the source: not read either, and the honest run passes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import run_reb
from support.images import demo_module

pytestmark = pytest.mark.container

CASES = {  # case -> (finding path, words of the strict message)
    "pth-edits-entrypoint": ("train.py", "during the run, the entrypoint train.py"),
    "pth-drops-shadow": ("tinynet/config", "during the run, untracked tinynet/config"),
    "shadow-package": ("tinynet/config", "instead of the tracked tinynet/config.py"),
    "stdlib-shadow": ("argparse.py", "the standard library's `argparse`"),
    "unchecked-pyc": ("tinynet/__pycache__/model.cpython-311.pyc", "unchecked-hash bytecode"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_the_stage_loads_is_the_pinned_commit(pytester: pytest.Pytester,
                                                    hostile: Callable[[str], str],
                                                    image_commit: str, case: str) -> None:
    path, words = CASES[case]
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert c1.compat is True, c1.message  # exit 0 and TRAIN_OK: the official pass
    assert (c1.status, c1.category, c1.strict) == ("failed", "integrity", False), c1.message
    assert words in c1.message
    if not case.startswith("pth-"):  # found before the run: on the target's findings
        assert path in {f["path"] for f in c1.findings}, c1.findings
    planted = "PLANTED" in c1.stdout_tail
    assert planted is (case != "unchecked-pyc"), c1.stdout_tail  # the bytecode is never read


def test_bytecode_matching_its_source_is_never_read(pytester: pytest.Pytester,
                                                    hostile: Callable[[str], str],
                                                    image_commit: str) -> None:
    run = run_reb(pytester, hostile("timestamp-pyc"),
                  {"test_demo__tinynet": demo_module(image_commit)}, "-m", "c1")
    c1 = run["c1"]
    assert "PLANTED" not in c1.stdout_tail and "TRAIN_OK" in c1.stdout_tail
    assert (c1.status, c1.strict, c1.compat) == ("passed", True, True), c1.message
