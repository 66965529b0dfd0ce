"""The witness's host channel (issue 25, class 1 as a class): what grants "ran and finished"
is read by the host from a process the witness stopped, never from the record file.

The forgers of the class are in ``test_witness_forgers.py``. Honest runs must still pass
strict with the host's reads: the demo's C1, a ``torchrun``
with two CPU workers (each judged), and ``honest-workers``: DataLoader workers, a forked
child that ``os._exit``s, and ``torch.multiprocessing.spawn``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.hostile import run_reb
from support.images import demo_module, module_text

pytestmark = pytest.mark.container

TORCHRUN_CPU = ('torchrun("train.py", "--steps", "2", "--out", "{out}/ckpt", "--device", "cpu", '
                'nproc=2, expect_log=["TRAIN_OK"], timeout=300)')
WORKERS = 'Run(["{python}", "workers.py"], timeout=300, expect_log=["WORKERS_OK"])'


def _told(outcome: Any) -> str:
    """A failed run's headline and its output's end: a rank's failure is in the output."""
    return f"{outcome.message}\n{outcome.stdout_tail[-4000:]}"


def _ends(outcome: object) -> list[str | None]:
    procs = outcome.evidence["witness"]["processes"]  # type: ignore[attr-defined]
    return [p["host"]["end"] for p in procs if p.get("host")]


def test_the_honest_demo_is_seen_finishing(pytester: pytest.Pytester, demo_image: str,
                                           image_commit: str) -> None:
    run = run_reb(pytester, demo_image, {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    assert _ends(c1) == ["finish"]
    assert c1.evidence["witness"]["vetted_interpreter"]


def test_honest_multiprocess_runs_pass(pytester: pytest.Pytester, hostile: Callable[[str], str],
                                       image_commit: str) -> None:
    """Each torchrun worker is seen at its own finish; every process of the run is read at its
    end (forked workers and children too, whose ends are never the entrypoint's finish)."""
    launch = module_text("reb/tinynet", image_commit, cpu=TORCHRUN_CPU).replace(
        "import Repo, Run", "import Repo, Run, torchrun")
    run = run_reb(pytester, hostile("honest-workers"), {"test_workers": launch}, "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict) == ("passed", True), _told(c1)
    assert _ends(c1).count("finish") >= 2  # both workers (and the launcher)
    pytester.path.joinpath("test_workers.py").unlink()
    spawn = module_text("reb/tinynet", image_commit, cpu=WORKERS)
    run = run_reb(pytester, hostile("honest-workers"), {"test_spawn": spawn}, "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict) == ("passed", True), _told(c1)
    assert "WORKERS_OK total=2016" in c1.stdout_tail
    ends = _ends(c1)
    # the main program, its two spawned ranks and the resource tracker finish; the DataLoader
    # workers (forks) and the forked child are read at their ends too, which are no finishes
    assert ends.count("finish") >= 3 and "exit 0" in ends
    assert "exit 0 from code not the checkout's" in ends
