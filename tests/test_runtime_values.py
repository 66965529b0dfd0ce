"""Setup steps, run-time values and helper processes: the vocabulary the official probes needed.

The official harness computed some argv values while it ran (a checkpoint's
name, a one-sample fraction, a lighthouse's address) and generated files
before the entrypoint.  These tests run real stages through the plugin on
``local://`` and in a real container, and check what the stage saw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.minirepo import git_checkout

from pytest_reb.pids import alive as process_alive
from pytest_reb.pyramid.entrypoint import Places

#: Our support files: a setup step that writes a value, a helper that prints an address late.
SHIM_FILES = {
    "write_value.py": "import sys\nopen(sys.argv[1], 'w').write(sys.argv[2] + '\\n')\n",
    "lighthouse.py": (
        "import os, sys, time\n"
        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "print('starting', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n"
        "print('listening on http://127.0.0.1:4242 now', flush=True)\n"
        "time.sleep(600)\n"
    ),
}

#: The stage prints every value it was given, one per line, in one write: two runs
#: ``together`` share the output pipe, and print's separate writes interleaved there
#: ("ARGSARGS 0.125 ...").
SHOW = ("import os, sys; sys.stdout.write(''.join(f'{k} {v}\\n' for k, v in ["
        "('ARGS', ' '.join(sys.argv[1:])), ('LIGHTHOUSE', os.environ.get('LIGHTHOUSE')), "
        "('PORT', os.environ['PORT']), ('CWD', os.getcwd())]))")


def module(shims: Path, *, glob: str = "{repo}/ckpt/*.pt", mod: str = "json",
           setup_code: int = 0, ready_after: float = 0.2, ready_within: float = 20,
           together: bool = False, pid_file: str = "") -> str:
    """A repository module whose CPU stage uses every run-time word of the vocabulary."""
    pid_file = pid_file or str(shims.parent / "helper.pid")
    fail = [["{python}", "-c", f"import sys; print('setup broke'); sys.exit({setup_code})"]]
    other = ("together=[Run(['{python}', '-c', " + repr(SHOW) + ", 'second', "
             "'{file:{out}/value}'], env={'PORT': '{port}'})],") if together else ""
    return f"""
from pytest_reb import Helper, Repo, Run

repo = Repo(
    "me/values", commit="{'0' * 40}", imports_total=1,
    cpu=Run(["{{python}}", "-c", {SHOW!r}, "{{file:{{out}}/value}}", "{{glob:{glob}}}",
             "{{module:{mod}}}"],
            env={{"PORT": "{{port}}"}}, cwd="{{out}}/work",
            setup=[["{{python}}", "{{shims}}/write_value.py", "{{out}}/value", "0.125"],
                   *{fail!r}],
            helpers=[Helper(["{{python}}", "{{shims}}/lighthouse.py", "{pid_file}",
                             "{ready_after}"], export="LIGHTHOUSE",
                            ready=r"listening on (\\S+)", ready_within={ready_within})],
            {other}
            timeout=60, shim_dir={str(shims)!r}),
)
"""


@pytest.fixture
def shims(tmp_path: Path) -> Path:
    folder = tmp_path / "shims"
    folder.mkdir()
    for name, text in SHIM_FILES.items():
        (folder / name).write_text(text)
    return folder


def run_stage(pytester: pytest.Pytester, text: str) -> dict[str, Any]:
    """Run the module's C1 on ``local://`` and return its outcome row."""
    checkout = pytester.path / "checkout"
    (checkout / "ckpt").mkdir(parents=True, exist_ok=True)
    # A real checkout at the module's commit: the integrity verdict fails closed otherwise.
    commit = git_checkout(checkout, {"ckpt/b.pt": "w", "ckpt/a.pt": "w"})
    pytester.makepyfile(test_values_repo=text.replace("0" * 40, commit))
    pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-host", "local://", "--reb-python",
        sys.executable, "--reb-repo-dir", str(checkout), "--reb-repo", "me/values",
        "--reb-outdir", str(pytester.path / "reports"), "-p", "no:cacheprovider", "-m", "c1")
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return next(r for r in rows if r["tier"] == "c1")


def alive(pid_file: Path) -> bool:
    """Whether the process the file names is still running (``pids.alive``: a zombie
    waiting for its reaper, or one inside ``exit``, is not)."""
    return process_alive(int(pid_file.read_text()))


def test_every_value_is_resolved_before_the_run(pytester: pytest.Pytester, shims: Path) -> None:
    o = run_stage(pytester, module(shims))
    assert o["status"] == "passed", o["message"]
    checkout = pytester.path / "checkout"
    lines = o["stdout_tail"].splitlines()
    assert lines[0] == f"ARGS 0.125 {checkout}/ckpt/a.pt {json.__file__}"
    assert lines[1] == "LIGHTHOUSE http://127.0.0.1:4242"
    assert 20000 <= int(lines[2].split()[1]) < 40001
    assert lines[3].startswith("CWD /tmp/reb-out-") and lines[3].endswith("/c1/work")
    assert "{file:" not in " ".join(o["command"]), "the recorded command is the one that ran"
    ev = o["evidence"]  # what ran before the command, and what each value turned out to be
    assert [step["exit_code"] for step in ev["setup"]] == [0, 0]
    assert ev["setup"][0]["command"][1].endswith("/write_value.py")
    assert sorted(ev["resolved"].values()) == sorted(
        ["0.125", f"{checkout}/ckpt/a.pt", json.__file__])
    pid_file = shims.parent / "helper.pid"
    assert pid_file.is_file() and not alive(pid_file), "the helper must not outlive the stage"


def test_together_runs_share_the_helper(pytester: pytest.Pytester, shims: Path) -> None:
    o = run_stage(pytester, module(shims, together=True))
    assert o["status"] == "passed", o["message"]
    out = o["stdout_tail"]
    assert out.count("LIGHTHOUSE http://127.0.0.1:4242") == 2
    assert "ARGS second 0.125" in out


@pytest.mark.parametrize(("kwargs", "category", "words"), [
    ({"setup_code": 3}, "runtime", "setup step `"),
    ({"glob": "{repo}/ckpt/*.safetensors"}, "runtime", "no file matches"),
    ({"mod": "no_such_module_anywhere"}, "deps", "cannot find the module no_such_module"),
    ({"ready_after": 30, "ready_within": 1}, "runtime", "printed no line matching"),
])
def test_a_stage_that_cannot_start_says_why(pytester: pytest.Pytester, shims: Path,
                                            kwargs: dict[str, Any], category: str,
                                            words: str) -> None:
    o = run_stage(pytester, module(shims, **kwargs))
    assert (o["status"], o["category"]) == ("failed", category)
    assert words in (o["message"] + o["stderr_tail"]), o
    if "setup_code" in kwargs:
        assert [step["exit_code"] for step in o["evidence"]["setup"]] == [0, 3]
    if "ready_after" in kwargs:
        assert not alive(shims.parent / "helper.pid"), "a helper never ready is killed too"
        assert "[helper 0] starting" in o["stderr_tail"]


def test_values_are_quoted_in_shell_scripts() -> None:
    at = Places("py", "/r", "/a", "/o", resolved={"{file:/o/v}": "x; touch /tmp/pwned"})
    assert at.fill("echo {file:/o/v}", shell=True) == "echo 'x; touch /tmp/pwned'"
    assert at.fill("{file:/o/v}") == "x; touch /tmp/pwned"
    assert at.fill("{glob:/a/*} {shims}") == "{glob:/a/*} {shims}", "unknown values stay"


@pytest.mark.container
def test_values_and_helpers_in_a_container(pytester: pytest.Pytester, demo_image: str,
                                           demo_commit: str, shims: Path) -> None:
    """The same stage in a hardened container: shims mounted read-only, {shims} resolves there.

    The module is pinned at the demo checkout's commit, so the integrity verdict is intact."""
    text = module(shims, glob="{repo}/tinynet/*.py", together=True, pid_file="{out}/helper.pid")
    text = text.replace("0" * 40, demo_commit)
    pytester.makepyfile(test_values_repo=text)
    pytester.runpytest_subprocess(
        "--rootdir", str(pytester.path), "--reb-image", demo_image,
        "--reb-python", "/opt/envs/tinynet/bin/python", "--reb-repo", "me/values",
        "--reb-outdir", str(pytester.path / "reports"), "-p", "no:cacheprovider", "-m", "c1")
    [log] = sorted((pytester.path / "reports").glob("*/outcomes.jsonl"))
    o = next(json.loads(r) for r in log.read_text().splitlines() if '"c1"' in r)
    assert o["status"] == "passed", o["message"]
    out = o["stdout_tail"]
    assert "ARGS 0.125 /data/project/repo/tinynet/__init__.py " in out
    assert out.count("LIGHTHOUSE http://127.0.0.1:4242") == 2


def test_a_stubborn_helper_dies_with_a_hung_run(pytester: pytest.Pytester, shims: Path) -> None:
    """The run hangs past its timeout and the helper ignores SIGTERM: both are killed by the
    host, and the stage says it timed out."""
    (shims / "stubborn.py").write_text(
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "print('ready at here', flush=True)\n"
        "time.sleep(600)\n")
    pid_file = shims.parent / "stubborn.pid"
    text = f"""
from pytest_reb import Helper, Repo, Run

repo = Repo(
    "me/values", commit="{'0' * 40}", imports_total=1,
    cpu=Run(["{{python}}", "-c", "import time; time.sleep(600)"], timeout=3,
            helpers=[Helper(["{{python}}", "{{shims}}/stubborn.py", "{pid_file}"],
                            export="WHERE", ready=r"ready at (\\S+)")],
            shim_dir={str(shims)!r}),
)
"""
    o = run_stage(pytester, text)
    assert (o["status"], o["category"]) == ("failed", "timeout")
    assert pid_file.is_file() and not alive(pid_file)


def test_a_runs_pythonpath_goes_in_front_of_the_environments(pytester: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """``env={"PYTHONPATH": "{repo}/src"}`` is the official ``{repo}/src${PYTHONPATH:+:...}``:
    what the environment itself put on the path stays, behind it."""
    monkeypatch.setenv("PYTHONPATH", "/env/own/site")
    o = run_stage(pytester, f"""
from pytest_reb import Repo, Run

repo = Repo("me/values", commit="{'0' * 40}", imports_total=1,
            cpu=Run(["{{python}}", "-c", "import os; print('PP', os.environ['PYTHONPATH'])"],
                    env={{"PYTHONPATH": "{{repo}}/src"}}, timeout=60))
""")
    assert o["status"] == "passed", o["message"]
    [line] = [ln for ln in o["stdout_tail"].splitlines() if ln.startswith("PP ")]
    assert line.startswith(f"PP {pytester.path / 'checkout'}/src:")
    assert line.endswith(":/env/own/site")
