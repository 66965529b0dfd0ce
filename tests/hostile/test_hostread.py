"""The host's own reads of a target cannot be raced or made to spend (issue 14, items 5 and 6).

Each attack is done for real in a container of the demo image, by a process
left running in it the way a surviving daemon of the agent's would be:

- the symlink-swap race: ``tinynet/`` and a symlink to a host directory are
  exchanged with ``renameat2(RENAME_EXCHANGE)`` in a tight loop, so a host
  that checks a path and then opens it reads its own file; the container is
  frozen for the check, and the host's secret never reaches a finding;
- a 1.5 MB zlib bomb that declares a 1.5 GiB blob, in place of the blob of an
  edited file: the check (in a child process, so its peak RSS is its own)
  stays far below the blob's size;
- a 3 GiB sparse pack: refused before anything is copied, in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hostile import demo_target

from pytest_reb.evidence import integrity
from pytest_reb.targets import DockerTarget

pytestmark = pytest.mark.container

REPO = "/data/project/repo"
ROOT = Path(__file__).resolve().parents[2]

SWAPPER = textwrap.dedent("""\
    import ctypes, os, shutil, sys
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = sys.argv[1].encode(), sys.argv[2].encode()
    # overlayfs exchanges only entries of its upper layer (else EXDEV): copy the dir up first
    shutil.copytree(sys.argv[1], sys.argv[1] + ".up")
    shutil.rmtree(sys.argv[1])
    os.rename(sys.argv[1] + ".up", sys.argv[1])
    os.symlink(sys.argv[3], sys.argv[2])
    while True:  # renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
        libc.syscall(316, -100, a, -100, b, 2)
""")

BOMB = textwrap.dedent("""\
    import os, sys, zlib
    path, size = sys.argv[1], 1536 << 20
    c = zlib.compressobj(9)
    os.chmod(path, 0o644)
    with open(path, "wb") as out:
        out.write(c.compress(b"blob %d\\0" % size))
        zero = bytes(1 << 20)
        for _ in range(size >> 20):
            out.write(c.compress(zero))
        out.write(c.flush())
    print(os.path.getsize(path))
""")


@pytest.fixture
def target(demo_image: str) -> Iterator[DockerTarget]:
    yield from demo_target(demo_image, "tests-hostread", memory="2g")


def _python(target: DockerTarget, script: str, *args: str, detach: bool = False) -> str:
    ctr = target.container()
    res = ctr.exec_run(["/usr/bin/python3", "-c", script, *args], detach=detach,
                       user="0:0")  # as root, as commands run (the container's user is nobody)
    if detach:
        return ""
    assert res.exit_code == 0, res.output
    return str(res.output.decode())


def test_the_symlink_swap_race_never_reads_host_files(target: DockerTarget, image_commit: str,
                                                      tmp_path: Path) -> None:
    secret = tmp_path / "host-secret"
    secret.mkdir()
    marker = "REB-HOST-SECRET-" + os.urandom(6).hex()
    for name in ("__init__.py", "config.py", "data.py", "model.py"):
        (secret / name).write_text(f"{marker}\n")
    _python(target, SWAPPER, f"{REPO}/tinynet", f"{REPO}/tinynet-swap", str(secret), detach=True)
    time.sleep(0.5)
    seen = []
    for _ in range(15):
        found = integrity.check(target, REPO, image_commit)
        seen.append(found)
        assert marker not in json.dumps(found)
    # the swap was live: the frozen checks saw the directory in one place or the other
    assert any(f for f in seen), "the swapper never ran"


def test_a_zlib_bomb_blob_does_not_inflate_in_the_host(target: DockerTarget,
                                                       image_commit: str) -> None:
    tree = integrity.examine(target, REPO, image_commit).tree
    assert tree is not None
    blob = tree["tinynet/model.py"][1]
    obj = f"{REPO}/.git/objects/{blob[:2]}/{blob[2:]}"
    size = int(_python(target, BOMB, obj))
    assert size < 2 << 20  # a 1.5 MB file that declares 1.5 GiB
    _python(target, "import sys; open(sys.argv[1], 'a').write('# edited\\n')",
            f"{REPO}/tinynet/model.py")
    # the check in a child process, so that its peak RSS is its own
    code = textwrap.dedent(f"""\
        import json, sys
        from pytest_reb.evidence import integrity
        from pytest_reb.targets import hostview
        import docker
        ctr = docker.from_env().containers.get({target.container().id!r})
        pid = ctr.attrs["State"]["Pid"]
        view = hostview.HostView(f"/proc/{{pid}}/root")
        found = integrity._Check(view, {REPO!r}, {image_commit!r}, False).run().findings
        print(json.dumps(found))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0, out
    found = json.loads(out)
    assert [(f["kind"], f["path"]) for f in found] == [("modified", "tinynet/model.py")]
    assert "not shown" in found[0]["diff"]
    assert usage.ru_maxrss < 400 << 10, f"peak RSS {usage.ru_maxrss >> 10} MiB"  # KiB


def test_a_sparse_pack_is_not_copied(target: DockerTarget, image_commit: str) -> None:
    _python(target, textwrap.dedent("""\
        import os, sys
        os.makedirs(sys.argv[1], exist_ok=True)
        with open(sys.argv[1] + "/pack-" + "ab" * 20 + ".pack", "wb") as fh:
            fh.truncate(3 << 30)
    """), f"{REPO}/.git/objects/pack")
    started = time.monotonic()
    [found] = integrity.check(target, REPO, image_commit)
    assert found["kind"] == "unverifiable" and "is sparse" in found["detail"]
    assert time.monotonic() - started < 30


def test_a_refused_unpause_is_judged_by_the_container_not_the_answer(
        target: DockerTarget) -> None:
    """The engine refuses to unpause a container that is not paused (a pause that
    timed out and never landed): that container is not lost; one removed is."""
    from pytest_reb.targets import hostview

    ctr = target.container()
    ctr.reload()
    pid = ctr.attrs["State"]["Pid"]
    with pytest.raises(Exception, match="not paused"):
        ctr.unpause()  # the engine's own refusal, as the thaw meets it
    assert hostview._thaw(ctr, pid) is None
    ctr.pause()
    assert hostview._thaw(ctr, pid) is None
    ctr.reload()
    assert ctr.status == "running"
    ctr.remove(force=True)
    assert "lost during the host-side read" in (hostview._thaw(ctr, pid) or "")
