"""Strict C1 and C2 against images whose "passing" run never ran the entrypoint (issue 15).

Each image is the demo plus one way code runs before ``train.py``: a ``.pth``
in the venv, Debian's system ``sitecustomize``, a ``sitecustomize`` on an
image-set ``PYTHONPATH``, a ``.pth`` that ends only a launcher's workers, a
``.pth`` imitating the witness from Python, a ``python`` that runs something
else.  Every one exits 0 and prints the log marker, so the official rule
passes it; strict C1 must fail it with ``entrypoint_not_run`` and say what the
witness saw.  The last image patches ``torch.cuda.is_available()`` on the
CPU-only torch: C2 must name the spoof and the kernel that failed, and compat
must pass it as the official probe did.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import run_reb
from support.images import demo_module, module_text

pytestmark = pytest.mark.container

TORCHRUN_CPU = ('torchrun("train.py", "--steps", "2", "--out", "{out}/ckpt", "--device", "cpu", '
                'nproc=2, expect_log=["TRAIN_OK"], timeout=300)')


@pytest.mark.parametrize(("case", "said"), [
    ("pth-exit", "never began a main program"),
    ("sitecustomize-exit", "never began a main program"),
    ("env-pythonpath-hook", "never began a main program"),
    ("forged-witness", "interfered with"),
    ("wrapper-elsewhere", "no process of the run reached"),
])
def test_startup_fakes_fail_strict_c1(pytester: pytest.Pytester, hostile: Callable[[str], str],
                                      image_commit: str, case: str, said: str) -> None:
    run = run_reb(pytester, hostile(case), {"test_demo__tinynet": demo_module(image_commit)},
                  "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.category, c1.strict, c1.compat) == (
        "failed", "entrypoint_not_run", False, True), c1.message
    assert c1.exit_code == 0 and "TRAIN_OK" in c1.stdout_tail
    assert said in c1.message
    assert c1.evidence["witness"]["available"] is True


def test_launcher_workers_that_never_reach_the_script(pytester: pytest.Pytester,
                                                      hostile: Callable[[str], str],
                                                      image_commit: str) -> None:
    module = module_text("reb/tinynet", image_commit, cpu=TORCHRUN_CPU).replace(
        "import Repo, Run", "import Repo, Run, torchrun")
    run = run_reb(pytester, hostile("worker-exit"), {"test_workers": module}, "-m", "c1")
    c1 = run["c1"]
    assert (c1.status, c1.category, c1.compat) == ("failed", "entrypoint_not_run", True), \
        c1.message
    seen = c1.evidence["witness"]
    assert seen["kind"] == "launcher workers"
    starts = [p["start"] for p in seen["processes"] if p.get("start")]
    assert starts == ["module\ttorch.distributed.run"]  # the launcher began; no worker did


def test_the_same_launcher_on_the_honest_image_passes(pytester: pytest.Pytester,
                                                      demo_image: str,
                                                      image_commit: str) -> None:
    module = module_text("reb/tinynet", image_commit, cpu=TORCHRUN_CPU).replace(
        "import Repo, Run", "import Repo, Run, torchrun")
    run = run_reb(pytester, demo_image, {"test_workers": module}, "-m", "c1")
    c1 = run["c1"]
    assert c1.status == "passed", c1.message
    reached = [p for p in c1.evidence["witness"]["processes"] if p.get("reached")]
    assert len(reached) == 2 and all(p["end"] == "finish" for p in reached)


def test_is_available_patched_on_a_cpu_torch(pytester: pytest.Pytester,
                                             hostile: Callable[[str], str],
                                             image_commit: str) -> None:
    module = demo_module(image_commit)
    strict = run_reb(pytester, hostile("available-only"), {"test_demo__tinynet": module},
                     "-m", "c2")["c2"]
    assert (strict.status, strict.category, strict.compat) == ("failed", "cuda_spoofed", True)
    assert "is_available() was patched" in strict.message
    assert "CPU-only build" in strict.message and "failed" in strict.message
    assert strict.evidence["observed"]["kernel"]["ok"] is False
    [hook] = [f for f in strict.findings if f["kind"] == "cuda_hook"]
    assert hook["could_produce"] is True
    compat = run_reb(pytester, hostile("available-only"), {"test_demo__tinynet": module},
                     "-m", "c2", "--reb-compat")["c2"]
    assert compat.status == "passed"  # the official probe trusts is_available()
