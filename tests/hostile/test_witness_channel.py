"""The witness's host channel (issue 25, class 1 as a class): what grants "ran and finished"
is read by the host from a process the witness stopped, never from the record file.

Forgers act inside the process after the main program started, at the entrypoint's own
``import torch`` (an import hook from a ``.pth``), by means the audit hook does not see:

- ``ctypes-fd-forger``: opens the record through libc by ctypes, writes reach and finish
  with ``os.write`` and leaves by exec'ing ``/bin/true`` (exit 0, past the witness's
  ``_exit``): the file says "finish" and nothing in it says otherwise; the host never saw
  the process stopped at a finish;
- ``memmove-stop-forger``: finds the state by unaudited ``ctypes.memmove`` reads, finds its
  page read-only, is refused ``mprotect``, stops itself with ``SIGSTOP`` (a child continues
  it): the host does not take a stop whose state is not the witness's, and the refusal is
  a taint.

Honest runs must still pass strict with the host's reads: the demo's C1, a ``torchrun``
with two CPU workers (each judged), and ``honest-workers``: DataLoader workers, a forked
child that ``os._exit``s, and ``torch.multiprocessing.spawn``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import run_reb
from .images import demo_module, module_text

pytestmark = pytest.mark.container

FORGERS = {  # case -> words of the strict message
    "ctypes-fd-forger": "the record file says 'finish', but the host never saw the process "
                        "stopped at a finish",
    "memmove-stop-forger": "the witness was interfered with: ctypes.dlsym mprotect",
}
TORCHRUN_CPU = ('torchrun("train.py", "--steps", "2", "--out", "{out}/ckpt", "--device", "cpu", '
                'nproc=2, expect_log=["TRAIN_OK"], timeout=300)')
WORKERS = 'Run(["{python}", "workers.py"], timeout=300, expect_log=["WORKERS_OK"])'


@pytest.mark.parametrize("case", sorted(FORGERS))
def test_a_finish_written_inside_the_process_is_no_finish(pytester: pytest.Pytester,
                                                          hostile: Callable[[str], str],
                                                          image_commit: str, case: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert "TRAIN_OK steps=5" in c1.stdout_tail and "rank 0" not in c1.stdout_tail
    assert c1.compat is True, c1.message  # exit 0 and the marker: the official pass
    assert (c1.status, c1.category, c1.strict) == ("failed", "entrypoint_not_run", False), \
        c1.message
    assert FORGERS[case] in c1.message
    hosts = [p.get("host") for p in c1.evidence["witness"]["processes"] if p.get("host")]
    assert not [h for h in hosts if h["end"]], hosts  # no finish the host took


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
    """Each torchrun worker is seen at its own finish; forked workers and children do not
    stop (only the process that began a main program does), spawned ones do."""
    launch = module_text("reb/tinynet", image_commit, cpu=TORCHRUN_CPU).replace(
        "import Repo, Run", "import Repo, Run, torchrun")
    run = run_reb(pytester, hostile("honest-workers"), {"test_workers": launch}, "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    assert _ends(c1).count("finish") >= 2  # both workers (and the launcher)
    pytester.path.joinpath("test_workers.py").unlink()
    spawn = module_text("reb/tinynet", image_commit, cpu=WORKERS)
    run = run_reb(pytester, hostile("honest-workers"), {"test_spawn": spawn}, "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    assert "WORKERS_OK total=2016" in c1.stdout_tail
    assert _ends(c1).count("finish") == 3  # the main program and its two spawned ranks
