"""The host's channel for the witness (``witness.observe``) on real processes of this host.

The record file is the target's to write; these cases write it, or the witness's memory,
from inside the process after the main program started, by means the audit hook does not
see or must refuse, and check that only what the host read from a stopped process grants
a finish.  The same forgers as Docker images are in tests/hostile/test_witness_channel.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.forgeries import FD_FORGER, MEMMOVE_FORGER
from support.watched import watched

from pytest_reb import witness
from pytest_reb.witness import observe

LIB = witness.library_path()
pytestmark = pytest.mark.skipif(LIB is None, reason="no C compiler to build the witness")


def run(repo: Path, hooks: str | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                         str | None, dict[int, observe.Seen]]:
    """``python train.py`` in ``repo`` under the witness, watched by the host's observer, with
    ``hooks`` as a ``sitecustomize`` (a forger loaded before the entrypoint)."""
    record = repo / "reb-witness.log"
    argv = [sys.executable, "train.py"]
    exp = witness.expect(argv, python=sys.executable, entrypoint=None, checkout=str(repo),
                         cwd=str(repo), nproc=1, ranks=False, server=False, stopped=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REB_"))}
    if hooks is not None:  # outside the checkout, as an environment's site-packages is
        folder = repo.parent / f"{repo.name}-hooks"
        folder.mkdir(exist_ok=True)
        (folder / "sitecustomize.py").write_text(hooks)
        env["PYTHONPATH"] = str(folder)
    env.update(witness.env_vars(str(LIB), str(record), exp.entries, None, str(repo),
                                witness.stops_for(exp)))
    res, procs = watched(argv, repo, env, str(LIB), record)
    seen = {p.seen.host_pid: p.seen for p in procs.values() if p.seen is not None}
    return res, witness.judge(exp, procs), seen


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    # the forgers act at the entrypoint's own ``import torch``: a stand-in module of that name
    (tmp_path / "torch.py").write_text("")
    (tmp_path / "train.py").write_text("import torch\nprint('TRAIN_OK steps=5')\n")
    return tmp_path


def test_the_symbol_offset_is_read_from_the_built_library() -> None:
    assert LIB is not None
    nm = subprocess.run(["nm", "-D", LIB], capture_output=True, text=True, check=True).stdout
    value = next(int(line.split()[0], 16) for line in nm.splitlines()
                 if line.endswith(" reb_witness_state"))
    assert observe.symbol_offset(LIB) == value  # the first PT_LOAD is at 0 with GNU ld


def test_an_honest_run_is_seen_stopped_at_its_finish(repo: Path) -> None:
    res, problem, seen = run(repo)
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert problem is None
    [one] = seen.values()
    assert one.problem is None and one.state is not None
    assert (one.state.end, one.reasons, one.state.reached) == ("finish", [observe.STOP_FINISH],
                                                               True)
    assert one.exe == os.path.realpath(sys.executable)


def test_a_finish_written_to_the_file_after_start_is_no_finish(repo: Path) -> None:
    """libc's ``open`` through ctypes, ``os.write`` and ``exit_group``: the file says finish."""
    res, problem, seen = run(repo, FD_FORGER.replace("/data/project/repo", str(repo)))
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert " finish" in (repo / "reb-witness.log").read_text()
    assert seen == {}
    assert problem is not None and "ran but did not finish" in problem
    assert "the record file says 'finish', but the host never saw" in problem


def test_memory_written_by_ctypes_is_refused(repo: Path) -> None:
    """The state is found by unaudited ``memmove`` reads; its page is read-only and ctypes'
    ``mprotect`` is refused; the forger's own ``SIGSTOP`` is not the witness's."""
    res, problem, seen = run(repo, MEMMOVE_FORGER)
    assert res.returncode == 0 and "TRAIN_OK" in res.stdout
    assert " r--p" in res.stdout  # found, read-only
    assert "mprotect: reb witness: its memory is the host's" in res.stdout
    # its own stop is not the witness's: the host neither took nor continued it; what it took
    # are the ends of the forger and of its forked helper, exits from code not the checkout's
    assert [s.state.how for s in seen.values() if s.state] == [observe.HOW_EXIT_OTHER] * 2
    assert all(s.reasons == [observe.STOP_FINISH] for s in seen.values())
    assert problem is not None and "interfered with: ctypes.dlsym mprotect" in problem


ALIASES = {  # every way to name /proc/<pid>/mem that the kernel resolves
    "dlsym": "import ctypes\nctypes.c_int.in_dll(ctypes.CDLL(None), 'reb_witness_state')\n",
    "proc-mem": "open('/proc/self/mem', 'r+b')\n",
    "dev-fd of /proc/self": "import os\nfd = os.open('/proc/self', os.O_RDONLY)\n"
                            "open(f'/dev/fd/{fd}/mem', 'r+b')\n",
    "proc-self-fd of /proc/self": "import os\nfd = os.open('/proc/self', os.O_RDONLY)\n"
                                  "os.open(f'/proc/self/fd/{fd}/mem', os.O_RDWR)\n",
    "thread-self": "open('/proc/thread-self/mem', 'r+b')\n",
    "task": "import os\nopen(f'/proc/self/task/{os.getpid()}/mem', 'r+b')\n",
    "dot path": "open('/./proc/../proc/self/./mem', 'r+b')\n",
    "symlink": "import os, tempfile\nd = tempfile.mkdtemp()\n"
               "os.symlink('/proc/self/mem', d + '/state')\nopen(d + '/state', 'r+b')\n",
    "symlinked folder": "import os, tempfile\nd = tempfile.mkdtemp()\n"
                        "os.symlink('/proc/self', d + '/me')\nos.open(d + '/me/mem', os.O_RDWR)\n",
    "openat a /proc dirfd": "import os\nfd = os.open('/proc/self', os.O_RDONLY)\n"
                            "os.open('mem', os.O_RDWR, dir_fd=fd)\n",
    "bytes path": "import os\nos.open(b'/proc/./self//mem', os.O_RDWR)\n",
}


@pytest.mark.parametrize("how", sorted(ALIASES))
def test_other_ways_to_the_state_are_refused(repo: Path, how: str) -> None:
    code = ALIASES[how]
    (repo / "train.py").write_text(f"try:\n    exec({code!r})\nexcept PermissionError as e:\n"
                                   "    print('refused', e)\n")
    res, problem, _ = run(repo)
    assert "refused reb witness" in res.stdout
    assert problem is not None and "interfered with" in problem


def test_a_state_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError, match="no witness state"):
        observe.parse_state(b"\0" * observe.SIZE)


#: The host's side, run as ``nobody`` with the system interpreter: the command it watches is
#: its child, of the same user (what ``local://`` is), and may make itself undumpable.
NOBODY_HOST = """\
import json, os, subprocess, sys
from pytest_reb import witness
from pytest_reb.witness import observe
lib, repo = sys.argv[1], sys.argv[2]
argv = [sys.executable, "train.py"]
exp = witness.expect(argv, python=sys.executable, entrypoint=None, checkout=repo, cwd=repo,
                     nproc=1, ranks=False, server=False, stopped=False)
env = {"PATH": os.environ["PATH"], **witness.env_vars(lib, repo + "/rec.log", exp.entries,
                                                      None, repo, witness.stops_for(exp))}
proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.PIPE, text=True)
with observe.Observer(observe.Library(lib, lib), lambda: observe.tree(proc.pid)) as obs:
    out = proc.communicate(timeout=60)[0]
text = open(repo + "/rec.log").read()
print(json.dumps([out, witness.judge(exp, witness.merge([text], [obs.seen]))]))
"""


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
                    reason="needs root to become nobody, and a system interpreter")
@pytest.mark.parametrize("undumpable", [False, True])
def test_a_refused_read_fails_closed(tmp_path_factory: pytest.TempPathFactory,
                                     undumpable: bool) -> None:
    """Same user and an ancestor: the host reads; a process that made itself undumpable
    cannot be read by a host that is not root, and strict fails, saying why."""
    import json
    import shutil
    import tempfile

    assert LIB is not None
    repo = Path(tempfile.mkdtemp(prefix="reb-nobody-"))
    try:
        repo.chmod(0o777)
        shutil.copy(LIB, repo / "libreb_witness.so")
        prctl = "import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n" if undumpable else ""
        (repo / "train.py").write_text(prctl + "print('TRAIN_OK')\n")
        (repo / "host.py").write_text(NOBODY_HOST)
        res = subprocess.run(["/usr/bin/python3", str(repo / "host.py"),
                              str(repo / "libreb_witness.so"), str(repo)],
                             capture_output=True, text=True, timeout=90, user=65534, group=65534,
                             env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__)
                                                                            .parents[1])})
        assert res.returncode == 0, res.stderr
        out, problem = json.loads(res.stdout)
        assert "TRAIN_OK" in out
        if undumpable:
            assert problem is not None and "the host may not read the mappings of pid" in problem
            assert "undumpable), so its finish cannot be taken" in problem
        else:
            assert problem is None
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def test_a_run_the_harness_ends_is_seen_at_its_reach(tmp_path: Path) -> None:
    """``stop_after``: SIGINT ends the run; the host took the reach when it happened."""
    (tmp_path / "train.py").write_text("import time\nprint('TRAIN_OK', flush=True)\n"
                                       "time.sleep(30)\n")
    argv = ["timeout", "--preserve-status", "--signal=SIGINT", "2s", sys.executable, "train.py"]
    exp = witness.expect(argv, python=sys.executable, entrypoint=None, checkout=str(tmp_path),
                         cwd=str(tmp_path), nproc=1, ranks=False, server=False, stopped=True)
    assert witness.stops_for(exp) == "reach"
    record = tmp_path / "rec.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "REB_"))}
    env.update(witness.env_vars(str(LIB), str(record), exp.entries, None, str(tmp_path),
                                witness.stops_for(exp)))
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    with observe.Observer(observe.Library(str(LIB), str(LIB)),
                          lambda: observe.tree(proc.pid)) as obs:
        out = proc.communicate(timeout=60)[0]
    assert "TRAIN_OK" in out
    assert [s.reasons for s in obs.seen.values()] == [[observe.STOP_REACH]]
    assert witness.judge(exp, witness.merge([record.read_text()], [obs.seen])) is None
