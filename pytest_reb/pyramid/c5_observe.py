"""What the claimed interpreter is, observed from inside the target.

Two questions are asked, by argv and never through a shell: the strict one (a
nonce probe that a script printing a canned version cannot answer) and the
official validator's two commands verbatim, whose raw outcome the compat
rules judge.  The observation is plain data (``rules/c5_evidence.py``), so the
rules stay pure functions that the tests feed hand-made observations.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pytest_reb.pyramid.answers import PYTHON_MARKER, Answered
from pytest_reb.rules.c5_evidence import (
    OFFICIAL_TORCH_CODE,
    OFFICIAL_TORCH_JSON_CODE,
    OFFICIAL_VERSION_CODE,
    Invocation,
    PythonObservation,
)
from pytest_reb.selfreport import MAX_PATH_CHARS, clip

if TYPE_CHECKING:
    from pytest_reb.targets import Target
    from pytest_reb.targets.result import ExecResult

#: The probe answers the nonce reversed, so a script that prints a canned version is caught.
#: Python 2 compatible on purpose: whatever the path names, it must get a fair question.
PYTHON_PROBE = r"""
import json, platform, sys
m = "REB_PYTHON_PROBE "
n = sys.argv[1][::-1]
sys.stdout.write(m + json.dumps({"nonce": n, "python_version": platform.python_version(),
                                 "executable": sys.executable}) + "\n")
sys.stdout.flush()
try:
    import torch
    r = {"nonce": n, "torch_version": str(torch.__version__)}
except BaseException as e:
    r = {"nonce": n, "torch_error": (type(e).__name__ + ": " + str(e))[:300]}
sys.stdout.write(m + json.dumps(r) + "\n")
sys.stdout.flush()
"""
#: The three file tests, by our ``sh`` (``Target.util``); the path comes in as ``$1``.
TESTS_SCRIPT = 'for f in e d x; do test -$f "$1"; echo "$f $?"; done'
PROBE_TIMEOUT = 60.0
VERSION_TIMEOUT = 30.0
TEST_TIMEOUT = 15.0


def _path_problem(path: str) -> str | None:
    """Why ``path`` cannot be handed to exec at all, or None."""
    if not path.startswith("/"):
        return "not an absolute path"
    if len(path) > MAX_PATH_CHARS:
        return f"longer than any path can be ({MAX_PATH_CHARS} characters)"
    if "\x00" in path:
        return "not a path (it holds a NUL character)"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "not a path (it is not valid Unicode)"
    return None


def observe_python(target: Target, python_path: str, *, cwd: str = "/",
                   checkout: str | None = None, gpus: Sequence[str] = (),
                   torch_questions: Collection[str] = ("plain", "json"),
                   answered: Answered | None = None) -> PythonObservation:
    """Ask the target what ``python_path`` is; argv lists only, no shell anywhere.

    ``cwd`` is ``/`` rather than the checkout for the strict questions, so a
    missing checkout cannot pass for a broken interpreter.  The official
    questions are asked where the official validators ask them, in the
    ``checkout`` (when given): there a relative path names a file under it,
    and every bundle accepts one that runs.  A bare name (no ``/``) is asked
    too when no such file is there, since ``subprocess`` runs it through
    ``PATH`` and some validators run it without looking for the file.

    Every question runs where the official validator ran its own, with the
    GPUs the run has (``gpus``, the lease: the ``gpu`` profile), so a device
    count read from the interpreter is the machine's, not the CPU profile's 0.
    Of the official torch questions only ``torch_questions`` are asked (the
    variant's ``torch_questions``: each is an ``import torch`` of its own).
    Where the target has a twin (``Target.twin``), the strict probe runs there,
    in a fresh container of the image, beside the official questions: neither
    sees a process of the other, nor anything an earlier tier's command left.
    Where C2's probe, in that fresh container, already answered a challenge for
    this path whole (``answered``, ``answers.py``), that answer is read instead.
    """
    ask = _Asker(target, list(gpus), frozenset(torch_questions))
    obs = PythonObservation(path=python_path[:MAX_PATH_CHARS])
    problem = _path_problem(python_path)
    official_cwd = checkout or cwd
    if problem:
        obs.absolute = python_path.startswith("/")
        obs.exists = False if obs.absolute else None
        obs.runs = False
        obs.problem = problem
        if not obs.absolute and checkout and _path_problem("/" + python_path) is None:
            obs.exists, _, obs.executable = ask.tests(python_path, checkout)
            obs.executable = obs.executable if obs.exists else None
            if (obs.exists and obs.executable is not False) or "/" not in python_path:
                ask.officially(obs, python_path, checkout)
        return obs

    obs.exists, obs.is_dir, obs.executable = ask.tests(python_path, cwd)
    if obs.exists is False:
        obs.is_dir = obs.executable = None
        obs.runs, obs.problem = False, "not there (no such file)"
        return obs
    with ThreadPoolExecutor(1, thread_name_prefix="reb-c5") as pool:
        probed = None
        if obs.is_dir:
            obs.runs, obs.problem = False, "a directory, not an interpreter"
        elif obs.executable is False:
            obs.runs, obs.problem = False, "not executable"
        elif _reused(obs, answered):
            pass
        elif (twin := target.twin()) is not None:  # each imports torch: side by side, apart
            probed = pool.submit(_run_probe, obs, _Asker(twin, ask.gpus, ask.torch_questions), cwd)
        else:
            _run_probe(obs, ask, cwd)
        if obs.executable is not False:
            ask.officially(obs, python_path, official_cwd)
        if probed is not None:
            probed.result()
    return obs


class _Asker:
    """Runs the observation's commands on one target, all in one device profile.

    The ``gpu`` profile with the run's lease (none: it sees no GPU, as the
    ``cpu`` profile does), so the file tests and the questions share a container.
    """

    def __init__(self, target: Target, gpus: list[str], torch_questions: frozenset[str]) -> None:
        self.target, self.gpus, self.torch_questions = target, gpus, torch_questions

    def exec(self, argv: list[str], timeout: float, cwd: str) -> ExecResult:
        # the kept bytecode (read-only) spares each question compiling what it imports
        return self.target.exec(argv, timeout=timeout, cwd=cwd, env=self.target.kept_bytecode(),
                                profile="gpu", gpus=self.gpus)

    def tests(self, path: str, cwd: str) -> tuple[bool | None, bool | None, bool | None]:
        """``test -e``, ``-d`` and ``-x`` of ``path`` in the target, in one command (the
        path an argument, never part of the script): True, False, or None for each that
        could not be answered."""
        res = self.exec([*self.target.util("sh"), "-c", TESTS_SCRIPT, "sh", path],
                        TEST_TIMEOUT, cwd)
        said = dict(line.split(" ", 1) for line in res.stdout.splitlines()
                    if line[:2] in ("e ", "d ", "x ")) if not res.timed_out else {}
        exists, is_dir, executable = ({"0": True, "1": False}.get(said.get(f, "")) for f in "edx")
        return exists, is_dir, executable

    def officially(self, obs: PythonObservation, python: str, cwd: str) -> None:
        """The official validators' questions, each asked whatever the other answered.

        Some bundles probe torch even when the version question printed nothing,
        so the compat rules get both answers and decide by the bundle's variant.
        """
        obs.official_version = self.invoke(python, OFFICIAL_VERSION_CODE, VERSION_TIMEOUT, cwd)
        if "plain" in self.torch_questions:
            obs.official_torch = self.invoke(python, OFFICIAL_TORCH_CODE, PROBE_TIMEOUT, cwd)
        if "json" in self.torch_questions:
            obs.official_torch_json = self.invoke(python, OFFICIAL_TORCH_JSON_CODE,
                                                  PROBE_TIMEOUT, cwd)

    def invoke(self, python: str, code: str, timeout: float, cwd: str) -> Invocation:
        res = self.exec([python, "-c", code], timeout, cwd)
        return Invocation(res.exit_code, res.stdout[-2000:], res.stderr[-2000:], res.timed_out)


def _run_probe(obs: PythonObservation, ask: _Asker, cwd: str) -> None:
    """The strict question: run the nonce probe and read its (at most two) answers.

    The nonce is a challenge, not a secret: it must reach the claimed
    interpreter, which is the image's, so argv, stdin and environment are all
    equally open to it.  What must not see it is anything else of the image,
    and nothing else runs: the timeout is the host's (once a replaced
    ``timeout`` read the nonce from argv and answered for the interpreter),
    and no process of an earlier command is alive to read ``/proc/*/cmdline``.
    """
    nonce = secrets.token_hex(8)
    res = ask.exec([obs.path, "-c", PYTHON_PROBE, nonce], PROBE_TIMEOUT, cwd)
    _judge(obs, *_answers(res.stdout, nonce), res)


def _reused(obs: PythonObservation, answered: Answered | None) -> bool:
    """Whether C2's probe answered the challenge for this path, whole (both lines), and
    ``obs`` now says so.  Anything less (another path, a run that ended before ``import
    torch`` answered, no line at all) is asked again by C5's own probe."""
    if answered is None or answered.path != obs.path:
        return False
    head, tail = _answers(answered.stdout, answered.nonce)
    if head is None or tail is None:
        return False
    _judge(obs, head, tail, answered)
    obs.answered_by = "c2"
    return True


def _answers(stdout: str, nonce: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The probe's first line (the interpreter) and its torch line, each only with the nonce
    reversed."""
    head: dict[str, Any] | None = None
    tail: dict[str, Any] | None = None
    for line in stdout.splitlines():
        if not line.startswith(PYTHON_MARKER + " "):
            continue
        try:
            data = json.loads(line[len(PYTHON_MARKER) + 1:])
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("nonce") != nonce[::-1]:
            continue
        if head is None and isinstance(data.get("python_version"), str):
            head = data
        elif "torch_version" in data or "torch_error" in data:
            tail = data
    return head, tail


def _judge(obs: PythonObservation, head: dict[str, Any] | None, tail: dict[str, Any] | None,
           res: ExecResult | Answered) -> None:
    """``obs`` from the probe's answers and how its run ended."""
    if head is None:
        obs.runs = False
        said = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["nothing"]
        how = "timed out" if res.timed_out else f"exit {res.exit_code}"
        obs.problem = (f"not a Python interpreter: it did not answer the probe ({how}; "
                       f"printed {clip(said[0], 160)!r})")
        return
    obs.runs = True
    obs.python_version = clip(head["python_version"], 100)
    obs.sys_executable = clip(str(head.get("executable")), 300)
    if tail is not None and isinstance(tail.get("torch_version"), str):
        obs.torch_version = clip(tail["torch_version"], 100)
    elif tail is not None:
        obs.torch_error = clip(str(tail.get("torch_error")), 300)
    elif res.timed_out:
        obs.torch_error = "timed out importing torch"
    else:
        obs.torch_error = f"the interpreter exited {res.exit_code} while importing torch"

