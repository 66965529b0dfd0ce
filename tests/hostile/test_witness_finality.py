"""Code known by where it was loaded from, and a finish the image cannot write (issue 48,
classes 1 and 3): strict C1 on the demo with each of ``witness_cases.CASES``.

Every case prints the marker and exits 0, so compat passes it (the official rule); strict
fails it ``entrypoint_not_run``, because:

- class 1: the ``os._exit(0)`` comes from a code object that names ``train.py`` or
  ``tinynet/config.py`` but is not what that file compiles to (``marshal.loads`` at start-up,
  ``code.replace(co_filename=...)``, a sourceless ``site-packages/torch.pyc`` compiled with
  ``dfile=train.py`` and torch deleted, ``compile()`` under ``config.py``'s name from an
  edited PyYAML): an exit from code not the checkout's is no finish;
- class 3: ``/dev/fd/<fd of /proc/self>/mem`` and a symbolic link to ``/proc/self/mem`` are
  refused (a taint in the state the host reads); an uncaught exception is no finish, whatever
  exit status libc's ``__cxa_atexit(_exit, 0)`` or Python's ``atexit`` make of it afterwards;
  ``SystemExit(0)`` from an import hook is not the entrypoint's.

The honest demo passing strict is ``test_witness_channel.py``'s first test.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.hostile import c1_not_a_finish, run_reb
from support.images import demo_module, module_text

pytestmark = pytest.mark.container

CASES = {  # case -> words of the strict message
    "marshal-exit": "ran but did not finish",
    "replace-exit": "ran but did not finish",
    "sourceless-torch-pyc": "ran but did not finish",
    "config-name-compile": "ran but did not finish",
    "devfd-mem-forger": "the witness was interfered with: open /dev/fd/",
    "symlink-mem-forger": "the witness was interfered with: open /tmp/",
    "cxa-atexit-exit0": "an uncaught exception",
    "atexit-exit0": "an uncaught exception",
    "hook-systemexit": "SystemExit raised by code not the checkout's",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_end_the_image_wrote_is_not_a_finish(pytester: pytest.Pytester,
                                                hostile: Callable[[str], str],
                                                image_commit: str, case: str) -> None:
    c1 = c1_not_a_finish(pytester, hostile(case), demo_module(image_commit), CASES[case])
    assert c1.exit_code == 0, c1.message
    if case.endswith("-exit") or case in ("sourceless-torch-pyc", "config-name-compile"):
        assert "exit 0 from" in c1.message  # the exit the file records, from no checkout code
    hosts = [p.get("host") for p in c1.evidence["witness"]["processes"] if p.get("host")]
    assert not [h for h in hosts if h["end"] == "finish"], hosts


TRAIN_ARGS = '"--steps", "5", "--out", "{out}/ckpt", "--device", "cpu"'
LAUNCHERS = {  # how the run starts the entrypoint -> the module's CPU run
    "subprocess": f'Run(["{{python}}", "launch_subprocess.py", {TRAIN_ARGS}], timeout=300, '
                  'expect_log=["TRAIN_OK"], entrypoint="train.py")',
    "os.system": f'Run(["{{python}}", "launch_system.py", {TRAIN_ARGS}], timeout=300, '
                 'expect_log=["TRAIN_OK"], entrypoint="train.py")',
    "shell script": f'Run(["sh", "launch.sh", {TRAIN_ARGS}], timeout=300, '
                    'expect_log=["TRAIN_OK"], entrypoint="train.py")',
}


@pytest.mark.parametrize("kind", sorted(LAUNCHERS))
def test_an_honest_launcher_passes_strict(pytester: pytest.Pytester,
                                          hostile: Callable[[str], str], image_commit: str,
                                          kind: str) -> None:
    """The entrypoint run in a child interpreter: the child's own end is the finish."""
    module = module_text("reb/tinynet", image_commit, cpu=LAUNCHERS[kind])
    c1 = run_reb(pytester, hostile("honest-launchers"), {"test_launch": module}, "-m", "c1")["c1"]
    assert (c1.status, c1.strict) == ("passed", True), c1.message
    procs = c1.evidence["witness"]["processes"]
    assert [p["host"]["end"] for p in procs if p.get("reached")] == ["finish"], procs
