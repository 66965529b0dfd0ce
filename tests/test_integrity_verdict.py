"""Which checkout edits block a stage in strict (``rules/integrity_verdict.Verdict``).

A ``.pth`` in a checkout is research code's weights, not Python's path file (``site`` reads
those only in site directories): deleting or replacing one is a finding, never "tracked code
the entrypoint can import" (a real run of ClearerVoice-Studio failed C1 strict on a snapshot
that lacked ``sfd_face.pth``).  Tracked ``.py`` and ``.so`` edits still block every stage.
"""

from __future__ import annotations

import pytest

from pytest_reb import Run
from pytest_reb.evidence.integrity import Examined
from pytest_reb.rules.integrity_verdict import Verdict

PINNED = "a" * 40
RUN = Run(["{python}", "train.py"], entrypoint="train.py")


def _verdict(*findings: tuple[str, str]) -> Verdict:
    return Verdict(PINNED, Examined(PINNED, [{"kind": k, "path": p, "detail": "x"}
                                             for k, p in findings], head=PINNED))


@pytest.mark.parametrize("kind", ["deleted", "modified", "type_changed"])
def test_a_weights_pth_of_the_checkout_is_data(kind: str) -> None:
    verdict = _verdict((kind, "models/faceDetector/s3fd/sfd_face.pth"))
    assert verdict.status == "edited"  # still recorded on every outcome
    assert verdict.stage_problem(RUN) is None


@pytest.mark.parametrize("path", ["tinynet/model.py", "tinynet/_ops.cpython-311-x86_64-gnu.so"])
def test_tracked_code_edited_blocks_the_stage(path: str) -> None:
    problem = _verdict(("modified", path)).stage_problem(RUN)
    assert problem is not None and path in problem


def test_an_edited_entrypoint_is_named_first() -> None:
    problem = _verdict(("modified", "README.md"), ("modified", "train.py")).stage_problem(RUN)
    assert problem is not None and problem.startswith("the entrypoint train.py")
