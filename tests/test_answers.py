"""C5's strict question answered by C2's probe (``pytest_reb/pyramid/answers.py``).

The board: ``take`` waits only while an answer is promised, the first answer stays, an answer
for another path is none.  The probe: given a nonce, ``cuda_probe.py`` prints C5's two lines
as C5's own probe does (read by C5's own reader), and nothing of them without one; an
answer that is not whole is asked again by C5's own probe.  Both probes run here for real,
under this host's interpreter, with a stand-in ``torch``.  On real containers:
``tests/test_audit_twin.py`` and ``tests/test_lanes.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.torchsite import cpu_torch_site

from pytest_reb.pyramid import c5_observe
from pytest_reb.pyramid.answers import PYTHON_MARKER, Answered, Answers
from pytest_reb.pyramid.c2_cuda import parse
from pytest_reb.rules.c5_evidence import PythonObservation
from pytest_reb.targets import LocalTarget

PROBE = Path(__file__).resolve().parents[1] / "pytest_reb" / "pyramid" / "probes" / "cuda_probe.py"


def answered(path: str = "/py", nonce: str = "ab12") -> Answered:
    return Answered(path, nonce, "", "", 0, False)


def test_take_waits_only_for_a_promised_answer() -> None:
    board = Answers()
    assert board.take("/py", timeout=5) is None  # nothing promised: no wait
    board = Answers()
    board.promise()
    got: list[Answered | None] = []
    taker = threading.Thread(target=lambda: got.append(board.take("/py", timeout=30)))
    taker.start()
    time.sleep(0.2)
    assert taker.is_alive() and not got  # promised, not given: it waits
    board.give(answered())
    taker.join(10)
    assert got == [answered()]


def test_the_first_answer_stays_and_no_challenge_follows_it() -> None:
    board = Answers()
    assert board.challenge() and board.challenge() != board.challenge()
    board.give(None)  # the lane ended with no answer
    board.give(answered())
    assert board.take("/py") is None and board.challenge() is None
    board.promise()  # a promise after the answer changes nothing: no wait
    assert board.take("/py", timeout=5) is None


def test_an_answer_for_another_path_is_none() -> None:
    board = Answers()
    board.give(answered("/opt/other/python"))
    assert board.take("/py") is None and board.take("/opt/other/python") is not None


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return cpu_torch_site(tmp_path)


def probe(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PROBE), *args],
                          env={**os.environ, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=120)


def test_given_a_nonce_the_cuda_probe_answers_as_c5s_own_probe(site: Path) -> None:
    done = probe(site, "0123456789abcdef")
    head, tail = c5_observe._answers(done.stdout, "0123456789abcdef")
    assert head == {"nonce": "fedcba9876543210",
                    "python_version": ".".join(map(str, sys.version_info[:3])),
                    "executable": sys.executable}
    assert tail == {"nonce": "fedcba9876543210", "torch_version": "2.4.0"}
    assert parse(done.stdout) is not None and parse(done.stdout)["torch_version"] == "2.4.0"
    assert c5_observe._answers(done.stdout, "another-nonce") == (None, None)
    assert PYTHON_MARKER not in probe(site).stdout  # no nonce: C2's lines only


def test_a_torch_that_fails_to_import_is_answered_as_c5_words_it(site: Path) -> None:
    (site / "torch" / "__init__.py").write_text("raise OSError('libcudart.so: no such file')\n")
    done = probe(site, "00ff")
    _, tail = c5_observe._answers(done.stdout, "00ff")
    assert tail == {"nonce": "ff00", "torch_error": "OSError: libcudart.so: no such file"}


def test_c5_reads_a_whole_answer_and_asks_again_for_anything_less(site: Path,
                                                                  tmp_path: Path) -> None:
    python = sys.executable
    done = probe(site, "0a0b")
    whole = Answered(python, "0a0b", done.stdout, done.stderr, done.returncode, False)
    obs = c5_observe.observe_python(LocalTarget(), python, checkout=str(tmp_path),
                                    torch_questions=(), answered=whole)
    assert (obs.answered_by, obs.runs, obs.torch_version) == ("c2", True, "2.4.0")
    head_only = "".join(line for line in done.stdout.splitlines(keepends=True)
                        if "torch_version" not in line)
    for partial in (Answered(python, "0a0b", head_only, "", 1, True),  # ended before torch
                    Answered(python, "ffff", done.stdout, "", 0, False),  # another nonce
                    Answered("/usr/bin/python9", "0a0b", done.stdout, "", 0, False)):
        obs = PythonObservation(path=python)
        assert not c5_observe._reused(obs, partial) and obs.runs is None
