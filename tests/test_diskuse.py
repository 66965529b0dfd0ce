"""The disk channels the layer walk misses, read from the host (``pytest_reb.targets.diskuse``).

Real processes and files on this host's disk: an unlinked file held open or only mapped
counts its blocks once, a memfd (memory) and a named file (the layer walk's) do not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pytest_reb.targets import diskuse

HOLDER = """\
import mmap, os, sys, time
folder, size = sys.argv[1], int(sys.argv[2])
fd = os.open(os.path.join(folder, "open"), os.O_RDWR | os.O_CREAT)
os.posix_fallocate(fd, 0, size)
os.unlink(os.path.join(folder, "open"))
dup = os.dup(fd)  # the same file twice: counted once
mfd = os.open(os.path.join(folder, "mapped"), os.O_RDWR | os.O_CREAT)
os.posix_fallocate(mfd, 0, size)
held = mmap.mmap(mfd, size)
os.close(mfd)
os.unlink(os.path.join(folder, "mapped"))
mem = os.memfd_create("m")
os.posix_fallocate(mem, 0, size)
named = os.open(os.path.join(folder, "named"), os.O_RDWR | os.O_CREAT)
os.posix_fallocate(named, 0, size)
print("READY", flush=True)
time.sleep(60)
"""


def test_unlinked_open_and_mapped_files_count_once_memory_and_named_files_do_not(
        tmp_path: Path) -> None:
    size = 8 << 20
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), str(size)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
        got = diskuse.unlinked_bytes([proc.pid, os.getpid()])
        assert 2 * size <= got < 2 * size + (1 << 20)
    finally:
        proc.kill()
        proc.wait()
    assert diskuse.unlinked_bytes([proc.pid]) == 0  # gone: nothing held


def test_tree_bytes_counts_blocks_once_per_inode_and_follows_no_link(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    data = tmp_path / "d" / "f"
    data.write_bytes(b"x" * (1 << 20))
    os.link(data, tmp_path / "hard")
    (tmp_path / "loop").symlink_to(tmp_path)
    (tmp_path / "out").symlink_to("/usr")
    got = diskuse.tree_bytes(str(tmp_path))
    assert (1 << 20) <= got < (1 << 20) + (64 << 10)


def test_volume_growth_is_past_the_start_only(tmp_path: Path) -> None:
    (tmp_path / "seed").write_bytes(b"s" * (1 << 20))
    baseline = {str(tmp_path): diskuse.tree_bytes(str(tmp_path))}
    assert diskuse.volumes_growth(baseline) == 0
    (tmp_path / "new").write_bytes(b"n" * (2 << 20))
    assert (2 << 20) <= diskuse.volumes_growth(baseline) < (2 << 20) + (64 << 10)
    assert diskuse.volume_dirs({"Mounts": [{"Type": "volume", "Source": "/v/1/_data"},
                                           {"Type": "bind", "Source": "/etc"}]}) == ["/v/1/_data"]
