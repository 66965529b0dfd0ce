"""The one-line messages of entrypoint stages: a failure's headline names its cause, a pass
says what was checked (issue 32, item 3).

The outputs are tracebacks as the programs print them: transformers' version
check (its hint line after the error), a launcher's summary after a rank's
import error, torch's CPU-only assertion.  They go through the real
diagnosis (``diagnose.for_run``) and the real categories (``categorise``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_reb.evidence.tracebacks import exception_line
from pytest_reb.rules.entrypoint_stage import passed
from pytest_reb.rules.stage_messages import (
    categorise,
    diagnosis_of,
    failed,
    named_cause,
)
from pytest_reb.spec import Http, Run
from pytest_reb.targets import ExecResult
from pytest_reb.witness import Expect

SITE = "/opt/venv/lib/python3.10/site-packages"
LAUNCHERS = Path(__file__).parent / "data" / "launchers"

HF_HUB_CONFLICT = f"""\
Traceback (most recent call last):
  File "/data/project/repo/train.py", line 9, in <module>
    from transformers import AutoTokenizer
  File "{SITE}/transformers/__init__.py", line 26, in <module>
    from . import dependency_versions_check
  File "{SITE}/transformers/dependency_versions_check.py", line 57, in <module>
    require_version_core(deps[pkg])
  File "{SITE}/transformers/utils/versions.py", line 117, in require_version_core
    return require_version(requirement, hint)
  File "{SITE}/transformers/utils/versions.py", line 111, in require_version
    _compare_versions(op, got_ver, want_ver, requirement, pkg, hint)
  File "{SITE}/transformers/utils/versions.py", line 44, in _compare_versions
    raise ImportError(
ImportError: huggingface-hub>=0.30.0,<1.0 is required for a normal functioning of this \
module, but found huggingface-hub==1.1.2.
Try: `pip install transformers -U` or `pip install -e '.[dev]'` if you're working with git main
"""

#: A rank's import error, then the launcher's own traceback and summary after it.
RANK_MISSING_MODULE = f"""\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/data/project/repo/vim/main.py", line 21, in <module>
[rank0]:     from models_mamba import vim_tiny_patch16_224
[rank0]:   File "/data/project/repo/vim/models_mamba.py", line 12, in <module>
[rank0]:     from einops import rearrange
[rank0]: ModuleNotFoundError: No module named 'einops'
E1201 20:41:07.118000 412 torch/distributed/elastic/multiprocessing/api.py:869] failed \
(exitcode: 1) local_rank: 0 (pid: 431) of binary: /opt/venv/bin/python
Traceback (most recent call last):
  File "/opt/venv/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "{SITE}/torch/distributed/run.py", line 892, in main
    run(args)
  File "{SITE}/torch/distributed/launcher/api.py", line 263, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
vim/main.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 431)
============================================================
"""

LAUNCHER_TAIL = f"""\
Traceback (most recent call last):
  File "/opt/venv/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "{SITE}/torch/distributed/launcher/api.py", line 263, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-07_21:47:12
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : {{code}} (pid: {{pid}})
  error_file: <N/A>
  traceback : {{why}}
============================================================
"""

#: torchrun's summary of a rank killed by a signal: no traceback of the rank's own.
KILLED_RANK = ("W1207 21:47:11.5 41 torch/distributed/elastic/multiprocessing/api.py:900] "
               "Sending process 56 closing signal SIGTERM\n" + LAUNCHER_TAIL.format(
                   code=-9, pid=57, why="Signal 9 (SIGKILL) received by PID 57"))

#: A rank's own error, prefixed by the launcher, that no rule of the diagnosis explains.
RANK_VALUE_ERROR = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/data/project/repo/train.py", line 51, in <module>
[rank1]:     loss = model(batch)
[rank1]: ValueError: expected 3 input channels, got 1
""" + LAUNCHER_TAIL.format(code=1, pid=58, why="To enable traceback see: "
                           "https://pytorch.org/docs/stable/elastic/errors.html")

CPU_ONLY_TORCH = f"""\
Traceback (most recent call last):
  File "/data/project/repo/train.py", line 40, in <module>
    model = Net().cuda()
  File "{SITE}/torch/nn/modules/module.py", line 1050, in cuda
    return self._apply(lambda t: t.cuda(device))
  File "{SITE}/torch/nn/modules/module.py", line 900, in _apply
    param_applied = fn(param)
  File "{SITE}/torch/cuda/__init__.py", line 310, in _lazy_init
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
"""

#: No rule of the diagnosis explains it; a logger's line follows the traceback.
SHAPE_ERROR = """\
Traceback (most recent call last):
  File "/data/project/repo/train.py", line 51, in <module>
    loss = model(batch)
  File "/data/project/repo/model.py", line 88, in forward
    raise ValueError(f"expected 3 input channels, got {x.shape[1]}")
ValueError: expected 3 input channels, got 1
2026-12-01 20:14:03 INFO shutting down 4 data loader workers
"""


def run_failed(stderr: str, exit_code: int = 1, **kw: Any) -> tuple[str, list[dict[str, Any]],
                                                                   str]:
    res = ExecResult(["/opt/venv/bin/python", "train.py"], exit_code, "step 0\n", stderr, 2.5,
                     **kw)
    category = categorise(res)
    diagnosis = diagnosis_of(res, category, "c1")
    return category, diagnosis, failed(res, category, diagnosis)


def test_a_version_conflict_is_the_headline_and_the_hint_after_it_the_detail() -> None:
    category, diagnosis, message = run_failed(HF_HUB_CONFLICT)
    assert (category, diagnosis[0]["class"]) == ("deps", "version_conflict")
    assert message == (
        "exit 1 (deps): version_conflict: ImportError: huggingface-hub>=0.30.0,<1.0 is required "
        "for a normal functioning of this module, but found huggingface-hub==1.1.2.; "
        "last line: Try: `pip install transformers -U` or `pip install -e '.[dev]'` if you're "
        "working with git main")


def test_a_ranks_missing_module_wins_over_the_launchers_traceback_after_it() -> None:
    _, diagnosis, message = run_failed(RANK_MISSING_MODULE)
    assert exception_line(RANK_MISSING_MODULE) == (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")
    assert diagnosis[0]["class"] == "missing_package"
    assert message == ("exit 1 (deps): missing_package: [rank0]: ModuleNotFoundError: No "
                       "module named 'einops'; launcher: rank 0 (local_rank: 0) exitcode 1 "
                       "(pid: 431)")
    assert "File " not in message  # the importer's frame stays in the diagnosis


def test_a_killed_rank_is_told_by_the_launchers_root_cause_not_its_rule_line() -> None:
    """A rank that died of a signal printed no traceback: the launcher's summary (which rank,
    which signal) is the headline, not ``ChildFailedError:`` and a line of ``=``."""
    category, diagnosis, message = run_failed(KILLED_RANK)
    assert (category, diagnosis[0]["class"]) == ("runtime", "unclassified")
    assert message == ("exit 1 (runtime): launcher: rank 1 (local_rank: 1) exitcode -9 "
                       "(pid: 57): Signal 9 (SIGKILL) received by PID 57")


def test_a_ranks_unclassified_exception_is_the_headline_without_its_prefix() -> None:
    _, diagnosis, message = run_failed(RANK_VALUE_ERROR)
    assert diagnosis[0]["class"] == "unclassified"
    assert message == ("exit 1 (runtime): ValueError: expected 3 input channels, got 1; "
                       "launcher: rank 1 (local_rank: 1) exitcode 1 (pid: 58)")


def test_torchruns_own_words_for_a_rank_that_raised_and_one_that_was_killed() -> None:
    """The launcher's output as torch 2.13 prints it (``tests/data/launchers``): the rank's
    exception and the root cause, whatever the other rank's SIGTERM said before them."""
    _, diagnosis, raised = run_failed((LAUNCHERS / "torchrun-rank-raised.txt").read_text())
    assert raised == ("exit 1 (runtime): ValueError: expected 3 input channels, got 1; "
                      "launcher: rank 1 (local_rank: 1) exitcode 1 (pid: 12)")
    assert diagnosis[0]["class"] == "unclassified"  # its evidence: the rank's, the launcher's
    assert diagnosis[0]["evidence"] == ["ValueError: expected 3 input channels, got 1",
                                        "launcher: rank 1 (local_rank: 1) exitcode 1 (pid: 12)"]
    _, _, killed = run_failed((LAUNCHERS / "torchrun-rank-killed.txt").read_text())
    assert killed == ("exit 1 (runtime): launcher: rank 1 (local_rank: 1) exitcode -9 (pid: 12) "
                      "(SIGKILL): Signal 9 (SIGKILL) received by PID 12")


def test_a_cpu_only_torch_is_named_once_when_it_is_also_the_last_line() -> None:
    category, diagnosis, message = run_failed(CPU_ONLY_TORCH)
    assert (category, diagnosis[0]["class"]) == ("cuda_unavailable", "cuda_build")
    assert message == ("exit 1 (cuda_unavailable): cuda_build: AssertionError: Torch not "
                       "compiled with CUDA enabled")


def test_without_a_named_cause_the_tracebacks_exception_line_is_the_headline() -> None:
    category, diagnosis, message = run_failed(SHAPE_ERROR)
    assert (category, diagnosis[0]["class"]) == ("runtime", "unclassified")
    assert named_cause(diagnosis) is None
    assert message == ("exit 1 (runtime): ValueError: expected 3 input channels, got 1; "
                       "last line: 2026-12-01 20:14:03 INFO shutting down 4 data loader workers")


def test_without_a_traceback_the_last_line_is_the_headline() -> None:
    _, _, message = run_failed("loading config\nSegmentation fault (core dumped)\n", 139)
    assert message == "exit 139 (runtime): Segmentation fault (core dumped)"


def test_what_the_host_saw_comes_before_any_line() -> None:
    _, _, message = run_failed(SHAPE_ERROR, 124, timed_out=True)
    assert message == "timed out after 2s; the process tree was killed"
    _, _, message = run_failed("", 137, disk_limited=True, disk_used=21 << 30)
    assert message.startswith("the container's disk use (writable layer, volumes, unlinked open "
                              "files) grew to 21504 MiB")
    _, _, message = run_failed("", 137, oom_killed=True)
    assert message == ("exit 137 (oom): out_of_memory: the kernel's OOM killer ended a "
                       "process of the run (exit 137); last line: step 0")


def test_the_exception_line_is_the_first_unindented_line_after_the_frames() -> None:
    assert exception_line("no traceback here") is None
    assert exception_line("Traceback (most recent call last):\n  File \"x.py\", line 1, in "
                          "<module>\n    f()\n    ^^^\nKeyboardInterrupt\n") == "KeyboardInterrupt"
    assert exception_line("Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                          "the program's own words, not an exception\n") is None


REPO = "/data/project/repo"
DEMO = f"{REPO}/train.py"
PYTHON = "/opt/venv/bin/python"


def ok(argv: list[str], **kw: Any) -> ExecResult:
    return ExecResult(argv, 0, "TRAIN_OK\n", "", 3.21, **kw)


def test_a_passed_cpu_run_says_what_was_checked() -> None:
    run = Run(["{python}", "train.py", "--epochs", "1"], timeout=600, expect_log=["TRAIN_OK"])
    message = passed(ok([PYTHON, "train.py", "--epochs", "1"]), run, python=PYTHON,
                     checkout=REPO, timeout=600, profile="cpu",
                     expect=Expect((DEMO, "train.py"), "python file"), gpu_checked=False,
                     setup_steps=1)
    assert message == (f"`{PYTHON} train.py --epochs 1`: exit 0 within 600 s after 1 setup "
                       "step(s); its log met the run's rules; no GPU visible; the witness saw "
                       f"{DEMO} run to its end")


def test_a_passed_multi_gpu_run_names_the_gpus_that_computed_and_the_ranks() -> None:
    compute = {"0": {"gpm": {"sm_active_ms": 0.4}}, "1": {"gpm": {"sm_active_ms": 0.3}}}
    res = ok([PYTHON, "-m", "torch.distributed.run", "train.py"],
             gpu_holders={431: [0], 432: [1]}, gpu_compute=compute)
    run = Run(["{python}", "-m", "torch.distributed.run", "{repo}/train.py"], timeout=900)
    message = passed(res, run, python=PYTHON, checkout=REPO, timeout=1800, profile="gpu",
                     expect=Expect((DEMO,), "launcher workers", workers=2), gpu_checked=True)
    assert message == (f"`{PYTHON} -m torch.distributed.run {DEMO}`: exit 0 within 1800 s; "
                       "GPU(s) 0, 1 held a CUDA context of the run and computed; the witness "
                       f"saw {DEMO} run to its end in 2 processes")


def test_a_passed_server_run_says_it_was_stopped_and_answered_and_nothing_volatile() -> None:
    """The port and the {out} folder are new every run, the duration too: none is in the line,
    so two runs of the same work have the same summary (``reb merge``)."""
    run = Run(["{python}", "serve.py", "--port", "{port}", "--log", "{out}/log"],
              stop_after=8, http=Http(request="POST /predict"))
    message = passed(ok([PYTHON, "/opt/reb/probes/http_probe.py", '{"port": 23817}']), run,
                     python=PYTHON, checkout=REPO, timeout=600, profile="cpu",
                     expect=Expect((), "python file", needs_finish=False), gpu_checked=False)
    assert message == (f"`{PYTHON} serve.py --port '{{port}}' --log '{{out}}/log'`: stopped "
                       "with SIGINT after 8 s, then exit 0 within 600 s; the server answered "
                       "POST /predict; no GPU visible; the witness saw a main program run")
