"""Every collected tier item gets an outcome line, whatever failed under it.

A tier's outcome is made by its stage; what raised outside one (a fixture of the module, a
client library's own exception as the engine went away) used to leave the item failed in
pytest's report and absent from ``outcomes.jsonl``, where ``--reb-resume`` and the summary
look.  Here a conftest's ``reb_ctx`` raises as it is set up, a plain ``RuntimeError``: each
tier item still ends with an ``infra`` line, "not run", naming the error.
"""

from __future__ import annotations

import json

import pytest
from support.images import module_text

RAISING_CONTEXT = """\
import pytest


@pytest.fixture(scope="module")
def reb_ctx(reb_target_spec):
    raise RuntimeError("the module's context could not be made")
"""
AFTER = 'Run(["{python}", "-c", "print(1)"], timeout=60)'


def test_an_item_whose_fixture_raised_is_logged_as_infra(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(RAISING_CONTEXT)
    pytester.makepyfile(test_x=module_text("reb/x", "0" * 40, cpu=AFTER))
    result = pytester.runpytest("--reb-host", "local://", "--reb-outdir",
                                str(pytester.path / "reports"), "-m", "c0 or c1",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    [log] = (pytester.path / "reports").glob("*/outcomes.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(o["tier"] for o in lines) == ["c0", "c1"]
    for o in lines:
        assert (o["repo"], o["status"], o["category"]) == ("reb/x", "failed", "infra")
        assert o["message"] == ("not run to the end: RuntimeError: the module's context "
                                "could not be made")
