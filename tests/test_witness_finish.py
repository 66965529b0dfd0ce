"""The finish and the status the host records are final (strict C1, C3, C4).

A finish is the main program's own end, seen as its outermost frame returning
(``reb_witness_finish.c``): an uncaught exception is none, nor a ``SystemExit(0)`` that an
import hook raises inside the entrypoint's ``import``; a ``SystemExit`` the checkout raises
(``sys.exit``, ``raise SystemExit``, a CLI library's standalone mode) is one when its status
is 0.  The host takes the state at that moment, before exit handlers: an ``os._exit(0)``
from ``atexit`` or a libc ``__cxa_atexit(_exit, 0)`` registered through ctypes turns a
failing run's exit status into 0 and changes nothing.  Real processes under the witness.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.standin import CC, LIB, build, hook_dir, repo_with, stage

pytestmark = pytest.mark.skipif(LIB is None or CC is None, reason="no C compiler")
PY = sys.executable
#: An import hook that does something at the entrypoint's own ``import json``.
AT_IMPORT = ("import sys\n"
             "class At:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'json':\n"
             "            sys.meta_path.remove(self)\n"
             "{body}"
             "sys.meta_path.insert(0, At())\n")


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("standin"))


def ends(seen: object) -> list[str | None]:
    return [p.state.end for p in seen.procs.values() if p.state]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("train", "status"), [
    ("print('done')\n", 0),
    ("import sys\nsys.exit(0)\n", 0),
    ("raise SystemExit\n", 0),
    ("import sys\nsys.exit(main := 0)\n", 0),
    ("import standin_cli\nstandin_cli.main()\n", 0),  # sys.exit inside the library it calls
    ("import os\nprint('x', flush=True)\nos._exit(0)\n", 0),
])
def test_the_checkouts_own_ends_are_finishes(libs: Path, tmp_path: Path, train: str,
                                             status: int) -> None:
    (libs / "site" / "standin_cli.py").write_text(
        "import sys\n\ndef main():\n    print('command ran')\n    sys.exit(0)\n")
    seen = stage(libs, repo_with(tmp_path, train), [PY, "train.py"])
    assert seen.res.returncode == status, seen.res.stderr
    assert seen.finish is None, seen.finish


@pytest.mark.parametrize(("train", "said"), [
    ("raise ValueError('broken')\n", "an uncaught exception"),
    ("import sys\nsys.exit(3)\n", "SystemExit(3)"),
    ("raise KeyboardInterrupt\n", "an uncaught exception"),
])
def test_a_failing_main_program_is_no_finish(libs: Path, tmp_path: Path, train: str,
                                            said: str) -> None:
    seen = stage(libs, repo_with(tmp_path, train), [PY, "train.py"])
    assert seen.res.returncode != 0
    assert seen.finish is not None and "did not finish" in seen.finish
    assert said in seen.finish


def test_systemexit_from_an_import_hook_is_no_finish(libs: Path, tmp_path: Path) -> None:
    hooks = hook_dir(tmp_path, AT_IMPORT.format(
        body="            print('TRAIN_OK', flush=True)\n            raise SystemExit(0)\n"))
    seen = stage(libs, repo_with(tmp_path, "import json\nraise ValueError\n"), [PY, "train.py"],
                 hooks=hooks)
    assert seen.res.returncode == 0 and "TRAIN_OK" in seen.res.stdout
    assert seen.finish is not None
    assert "SystemExit raised by code not the checkout's" in seen.finish


@pytest.mark.parametrize("after", [
    "import atexit, os\natexit.register(os._exit, 0)\n",
    "import ctypes\nlibc = ctypes.CDLL(None)\n"
    "getattr(libc, '__cxa_atexit')(libc._exit, 0, None)\n",
])
def test_nothing_after_the_hosts_stop_changes_the_verdict(libs: Path, tmp_path: Path,
                                                          after: str) -> None:
    """A failing entrypoint whose exit status an import hook turns into 0 from an exit handler
    (Python's ``atexit``, or libc's, registered through ctypes): exit 0, and no finish."""
    body = "".join(f"            {line}\n" for line in after.splitlines())
    hooks = hook_dir(tmp_path, AT_IMPORT.format(body=body))
    seen = stage(libs, repo_with(tmp_path, "import json\nraise ValueError('broken')\n"),
                 [PY, "train.py"], hooks=hooks)
    assert seen.res.returncode == 0, seen.res.stderr
    assert "ValueError" in seen.res.stderr
    assert seen.finish is not None and "an uncaught exception" in seen.finish
    assert ends(seen) == ["an uncaught exception"]
