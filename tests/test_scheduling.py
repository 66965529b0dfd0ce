"""Under ``-n``, the items of one (repository module, target) pair stay on one xdist worker
(``scheduling.TargetScheduling``, ``distribute.scope_of``).
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from pytest_reb.plugin.scheduling import TargetScheduling
from pytest_reb.runs.shards import scope_of


@pytest.mark.parametrize(("nodeid", "scope"), [
    ("repos/test_a.py::test_c1_cpu[alpha@img:1]", "repos/test_a.py[alpha@img:1]"),
    ("repos/test_a.py::test_c5_audit[alpha@img:1]", "repos/test_a.py[alpha@img:1]"),
    ("repos/test_a.py::test_c1_cpu[ssh://gpu-node]", "repos/test_a.py[ssh://gpu-node]"),
    ("test_x.py::test_c1_cpu[beta@reg:5000/x:y]", "test_x.py[beta@reg:5000/x:y]"),
    ("tests/test_plain.py::test_something", "tests/test_plain.py"),
])
def test_scope_is_module_and_target(nodeid: str, scope: str) -> None:
    assert scope_of(nodeid) == scope


class FakeWorker:
    """Just enough of xdist's ``WorkerController`` for a scheduler."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.queue: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def test_target_scheduling_keeps_each_pair_on_one_worker(pytester: pytest.Pytester) -> None:
    """The scheduler xdist gets (driven as xdist's controller drives it): pairs never split."""
    collection = [f"repos/test_{r}.py::{t}[{a}@img-{r}]" for r in "ab" for a in ("x", "y", "z")
                  for t in ("test_c0_imports", "test_c1_cpu", "test_c2_cuda", "test_c5_audit")]
    sched = TargetScheduling(pytester.parseconfig("--tx", "2*popen", "--dist", "loadscope"))
    workers = [FakeWorker("gw0"), FakeWorker("gw1")]
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    ran: dict[str, set[str]] = defaultdict(set)
    while any(w.queue for w in workers):
        for w in workers:  # the workers finish items in turn
            if w.queue:
                index = w.queue.pop(0)
                ran[scope_of(collection[index])].add(w.gateway.id)
                sched.mark_test_complete(w, index)
    assert len(ran) == 6 and all(len(ws) == 1 for ws in ran.values()), ran
    assert set().union(*ran.values()) == {"gw0", "gw1"}
    assert sched.tests_finished
