"""Helpers of the hostile-image and fault tests: a bare demo target, a pytest-reb run through
pytester and its outcomes, what containers and the host hold after a tier."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_reb.outcome import Outcome, OutcomeLog
from pytest_reb.targets import LABEL_OWNER, DockerTarget, Limits, owner_label
from pytest_reb.targets.ourtools import BUSYBOX


def demo_target(demo_image: str, run_id: str, *, memory: str = "1g") -> Iterator[DockerTarget]:
    """A bare target of the demo image for a fixture to yield (128 pids), closed after."""
    t = DockerTarget(demo_image, run_id=run_id, gpus=[], limits=Limits(memory=memory, pids=128))
    try:
        yield t
    finally:
        t.close()


@dataclass
class RebRun:
    """One pytest-reb run through pytester: its result, its outcomes, its folder."""

    result: Any
    run_dir: Path | None
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # "repo|tier" and "tier"

    def __getitem__(self, key: str) -> Outcome:
        return self.outcomes[key]


def run_reb(pytester: pytest.Pytester, image: str, modules: dict[str, str], *args: str,
            plugins: tuple[object, ...] = ()) -> RebRun:
    """Write ``modules`` (file stem -> source) and run pytest-reb on ``image`` in-process."""
    for stem, source in modules.items():
        pytester.path.joinpath(f"{stem}.py").write_text(source)
    result = pytester.runpytest("--rootdir", str(pytester.path), "--reb-image", image,
                                "--reb-outdir", str(pytester.path / "reports"),
                                "-p", "no:cacheprovider", *args,
                                plugins=list(plugins))
    logs = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    run = RebRun(result, logs[-1].parent if logs else None)
    for o in (OutcomeLog(logs[-1]) if logs else ()):
        run.outcomes[f"{o.repo}|{o.tier}"] = o
        run.outcomes[o.tier] = o
    return run


class AfterTier:
    """A plugin for the run under test: calls ``check(containers)`` once ``tier`` finished.

    The containers are this process's containers of ``image`` (the run's target),
    while they still exist: the module's teardown has not removed them yet.  A lane's
    sibling (and its twin) goes as its lane ends, which may be while they are listed: one
    removed meanwhile is not listed (``ignore_removed``).
    """

    def __init__(self, client: Any, image: str, tier: str,
                 check: Callable[[list[Any]], None]) -> None:
        self.client, self.image, self.tier, self.check = client, image, tier, check
        self.called = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and f"test_{self.tier}_" in report.nodeid:
            found = self.client.containers.list(filters={"label": [
                f"{LABEL_OWNER}={owner_label()}", f"reb.target={self.image}"]},
                ignore_removed=True)
            self.called += 1
            self.check(found)


def output_while_there(ctr: Any, argv: list[str]) -> str | None:
    """``argv``'s output in ``ctr`` as root, or None where the container went meanwhile: a
    lane's sibling is removed as its lane ends, which may be while ``AfterTier`` lists it
    (the engine then refuses the exec, or runs it into a container it is taking down)."""
    import docker

    try:
        res = ctr.exec_run(argv, user="0:0")
        if res.exit_code in (0, None):
            return res.output.decode()
        ctr.reload()
    except docker.errors.NotFound:
        return None
    return res.output.decode() if ctr.status == "running" else None


def c1_not_a_finish(pytester: pytest.Pytester, image: str, module: str,
                    expected: str) -> Outcome:
    """Strict C1 of a hostile image whose demo entrypoint trained but whose end the image
    wrote: the official pass (exit 0 and the marker), strict ``entrypoint_not_run`` with
    ``expected`` in its message; the outcome, for what a case checks beyond that."""
    c1 = run_reb(pytester, image, {"test_demo__tinynet": module}, "-m", "c1")["c1"]
    assert "TRAIN_OK steps=5" in c1.stdout_tail and "rank 0" not in c1.stdout_tail
    assert c1.compat is True, c1.message
    assert (c1.status, c1.category, c1.strict) == ("failed", "entrypoint_not_run", False), \
        c1.message
    assert expected in c1.message
    return c1


def yaml_missing_in_strict_only(pytester: pytest.Pytester, image: str, module: str) -> None:
    """C0 of a demo image whose ``yaml`` Python would not load: strict fails ``deps`` with
    ``yaml`` missing, which the official count (and so compat) does not see."""
    c0 = run_reb(pytester, image, {"test_demo": module}, "-m", "c0")["c0"]
    assert (c0.status, c0.category, c0.strict) == ("failed", "deps", False), c0.message
    assert c0.evidence["missing"] == ["yaml"] and c0.evidence["missing_official"] == []
    compat = run_reb(pytester, image, {"test_demo": module}, "-m", "c0", "--reb-compat")["c0"]
    assert (compat.status, compat.evidence["missing_count"]) == ("passed", 0)


def host_processes_with(token: str) -> list[int]:
    """Host pids whose command line holds ``token`` (this process excepted)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def only_keepalive(containers: list[Any]) -> list[str]:
    """Processes other than ``docker-init`` and our keep-alive in the containers."""
    left = []
    for ctr in containers:
        for row in ctr.top(ps_args="-o pid,args").get("Processes") or []:
            args = row[-1]
            if "docker-init" not in args and args != f"{BUSYBOX} sleep 2147483647":
                left.append(args)
    return left
