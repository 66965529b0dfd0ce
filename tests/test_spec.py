"""The vocabulary of a ``repos/`` module (``spec.py``): a ``Run``'s log rules and retry, and the
shape of a launcher (``torchrun``).
"""

from __future__ import annotations

from pytest_reb.spec import Retry, Run, torchrun


def test_run_log_rules_and_retry() -> None:
    run = Run(["x"], expect_log=["TRAIN_OK"], reject_log=["Traceback"],
              retry=Retry(when="mutually exclusive", run=Run(["y"])))
    assert run.judge_log("TRAIN_OK") is None
    assert "expected log marker" in str(run.judge_log("done"))
    assert "failure pattern" in str(run.judge_log("TRAIN_OK\nTraceback (most recent"))
    assert run.retry_for("sampler option is mutually exclusive with shuffle") == Run(["y"])
    assert run.retry_for("other") is None


def test_torchrun_launcher_shape() -> None:
    run = torchrun("train.py", "--x", nproc=4)
    assert list(run.argv) == ["{python}", "-m", "torch.distributed.run", "--standalone",
                              "--nproc_per_node=4", "train.py", "--x"]
    assert (run.launcher, run.nproc, run.min_gpus) == ("torchrun", 4, 4)
