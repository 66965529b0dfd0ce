"""``--reb-timeout-scale`` is applied once, in ``Target.exec``: what the probes pass is the
stage's own figure, and what reaches the target's ``_exec`` is that figure scaled."""

from __future__ import annotations

from typing import Any

from pytest_reb.targets import ExecResult, LocalTarget, make_target


class Recording(LocalTarget):
    """A local target that records the timeout each command got instead of running it."""

    def __init__(self) -> None:
        super().__init__(gpus=[])
        self.timeouts: list[float] = []

    def _exec(self, argv: list[str], *, timeout: float, **kw: Any) -> ExecResult:
        self.timeouts.append(timeout)
        return ExecResult(argv, 0, "", "", 0.0)


def test_exec_scales_a_stage_timeout_and_leaves_a_fixed_one() -> None:
    target = Recording()
    target.timeout_scale = 2.5
    target.exec(["true"], timeout=40)
    target.exec(["true"], timeout=30, scaled=False)
    assert target.timeouts == [100.0, 30]
    assert target.scaled(120) == 300.0


def test_make_target_carries_the_option() -> None:
    target = make_target("local://", run_id="t", gpus=[], limits=None,  # type: ignore[arg-type]
                         timeout_scale=0.5)
    assert target.timeout_scale == 0.5 and target.scaled(60) == 30.0
