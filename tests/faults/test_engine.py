"""Faults of the Docker engine: down at start, gone mid-run, an image it does not have.

- Daemon down at start (``DOCKER_HOST`` names no socket): one clear error line, a
  non-zero exit, no traceback.  The machine's real ``dockerd`` is never touched.
- Daemon stopped mid-run: a second ``dockerd`` of our own (private socket, config,
  data and exec roots in a temporary folder, its own network and mount namespaces)
  runs the target and is stopped (SIGTERM, as ``systemctl stop docker`` does) while a
  tier hangs in it.  That tier fails ``infra``; every later item is still reported,
  as ``infra`` and "not run"; the run ends with failures, not with a traceback.
- That second daemon leaves the host as it found it: its namespaces are not the
  host's, and the host's interfaces (``docker0`` above all: a ``dockerd --bridge none``
  deletes it) and mounts are the same after it as before.
- Image missing: one error line naming it, exit 4, nothing pulled.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import hoststate
from support.faults import AFTER, HANG, Spawned, logged, process_in
from support.images import module_text

pytestmark = pytest.mark.container

NO_DAEMON = "unix:///nonexistent/reb-no-docker.sock"
BASE = "reb-base:bookworm"
#: The tiny image: the base with a one-file git checkout (``minirepo``: a fixed date, so its
#: commit, which two modules share as their target, is the same every time).
TINY = f"""FROM {BASE}
COPY repo /data/project/repo
"""


def test_daemon_down_at_start_is_one_clear_error(pytester: pytest.Pytester,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_DAEMON)
    pytester.makepyfile(test_x=module_text("reb/x", "0" * 40, cpu=AFTER))
    result = pytester.runpytest_subprocess("--reb-image", "reb-demo:latest", "-p",
                                           "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text
    errors = [ln for ln in result.stderr.lines if ln.strip()]
    assert len(errors) == 1, errors
    assert errors[0].startswith("ERROR: pytest-reb: the Docker daemon does not answer")
    assert errors[0].endswith("--reb-image needs it")
    gc = subprocess.run([sys.executable, "-m", "pytest_reb.loop.cli", "gc"], capture_output=True,
                        text=True, timeout=60, env={**os.environ, "DOCKER_HOST": NO_DAEMON})
    assert gc.returncode == 2 and gc.stdout == ""
    assert gc.stderr.startswith("reb gc: the Docker daemon does not answer")
    assert gc.stderr.count("\n") == 1


def test_missing_image_is_named_and_not_pulled(pytester: pytest.Pytester,
                                               docker_client: Any) -> None:
    pytester.makepyfile(test_x=module_text("reb/x", "0" * 40, cpu=AFTER))
    result = pytester.runpytest("--reb-image", "reb-no-such/image:1", "--reb-image",
                                "reb-demo:latest", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [ln for ln in result.stderr.lines if ln.strip()]
    assert line == ("ERROR: pytest-reb: image(s) not on this Docker engine: reb-no-such/image:1 "
                    "(pytest-reb never pulls; build or `docker load` them first)")
    assert not docker_client.images.list(name="reb-no-such/image")


# --------------------------------------------------------------------------- a daemon that dies


class PrivateDaemon:
    """A ``dockerd`` of this test's own, which cannot touch the host's network or mounts.

    Its socket, configuration, data and exec roots and pidfile are under ``root``, which is
    short (a unix socket path holds at most 107 bytes) and its own; ``--config-file`` keeps the
    host's ``/etc/docker/daemon.json`` out.  It runs under ``unshare --net --mount``: in a new
    network namespace, so what it does to interfaces and iptables (with ``--bridge none`` it
    deletes a ``docker0``) happens to that namespace's, and in a new mount namespace (private
    propagation), so the mounts of its data root never appear on the host.  Both namespaces
    are anonymous: they live while a process is in them and go with the last one, which
    ``close`` makes sure of.  (``ip netns add`` would name one by a bind mount under
    ``/run/netns``, itself a change to the host.)  Its socket is a path on the shared file
    system, which a client in the host's namespaces connects to as to any other.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"unix://{root}/d.sock"
        self.log = root / "dockerd.log"
        self.proc: subprocess.Popen[bytes] | None = None
        #: The daemon's namespaces (``net:[inode]``, ``mnt:[inode]``), read once it answers.
        self.namespaces: dict[str, str] = {}

    def start(self) -> None:
        path = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
        dockerd, unshare = shutil.which("dockerd", path=path), shutil.which("unshare", path=path)
        if dockerd is None or unshare is None:
            pytest.skip("no dockerd or unshare binary to start a second daemon with")
        config = self.root / "daemon.json"
        config.write_text("{}\n")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [unshare, "--net", "--mount", "--propagation", "private", "--",
                 dockerd, "--host", self.url, "--config-file", str(config),
                 "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
                 "--pidfile", str(self.root / "d.pid"),
                 "--bridge", "none", "--iptables=false", "--ip6tables=false"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(Exception):
                self.client().ping()
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
                self.close()
                pytest.skip(f"a second dockerd cannot run here ({tail[0][-300:]}); the "
                            "container-killed test covers a tier losing its container")
            time.sleep(0.2)
        # unshare execs dockerd in place: the pid is the daemon's, in its namespaces by now
        theirs = {ns: os.readlink(f"/proc/{self.proc.pid}/ns/{ns}") for ns in NAMESPACES}
        shared = sorted(ns for ns, ident in theirs.items() if ident == _own_namespaces()[ns])
        if shared:  # then its namespaces are the host's: never kill what is in them
            self.close()
            pytest.fail(f"the second dockerd shares the host's {' and '.join(shared)} namespace")
        self.namespaces = theirs

    def client(self) -> Any:
        import docker

        return docker.DockerClient(base_url=self.url)

    def stop(self) -> None:
        """What ``systemctl stop docker`` does: SIGTERM, and the daemon goes away."""
        assert self.proc is not None
        self.proc.terminate()

    def in_its_namespaces(self) -> list[int]:
        """The processes still in the daemon's network or mount namespace (never in ours:
        ``close`` kills these, and in the host's namespaces that would be every process)."""
        ours = _own_namespaces()
        theirs = {ns: ident for ns, ident in self.namespaces.items() if ident != ours[ns]}
        return [pid for pid in _pids() if any(
            _readlink(f"/proc/{pid}/ns/{ns}") == ident for ns, ident in theirs.items())]

    def close(self) -> None:
        """The daemon gone, and everything it started (so its namespaces go), then its files."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        _kill(_started_by(self.root) | set(self.in_its_namespaces()))
        deadline = time.monotonic() + 30
        while self.in_its_namespaces() and time.monotonic() < deadline:
            time.sleep(0.1)
        shutil.rmtree(self.root, ignore_errors=True)


#: The namespaces the second daemon has of its own.
NAMESPACES = ("net", "mnt")


def _own_namespaces() -> dict[str, str]:
    """This process's namespaces, the host's (``net:[inode]``, ``mnt:[inode]``)."""
    return {ns: os.readlink(f"/proc/self/ns/{ns}") for ns in NAMESPACES}


def _pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def _readlink(path: str) -> str | None:
    """A link under /proc, or None for a process that has gone meanwhile."""
    try:
        return os.readlink(path)
    except OSError:
        return None


def _started_by(root: Path) -> set[int]:
    """Its containerd and shims (their command lines name ``root``) and the containers'
    processes (in the cgroups of the ids the shims name).  Nothing else is touched."""
    ids, pids = set(), set()
    for pid in _pids():
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(str(root).encode() in a for a in args):
                pids.add(pid)
                if b"-id" in args:
                    ids.add(args[args.index(b"-id") + 1].decode())
    for cid in ids:
        for procs in Path("/sys/fs/cgroup").glob(f"**/*{cid}*/cgroup.procs"):
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(p) for p in procs.read_text().split())
    return pids


def _kill(pids: set[int]) -> None:
    for pid in pids - {os.getpid(), os.getppid()}:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def tiny(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(tag, commit): the base image with a real one-file checkout (no Python deps, 133 MB).

    A real git checkout, since the integrity verdict fails closed on a ``.git`` that holds
    no object store."""
    import hashlib

    from support.minirepo import git_checkout

    from pytest_reb.loop.images import ensure_base_image

    ensure_base_image(docker_client)
    context = tmp_path_factory.mktemp("tiny")
    (context / "Dockerfile").write_text(TINY)
    commit = git_checkout(context / "repo", {"README": "tiny\n"})  # the same every run
    tag = f"reb-fault-tiny:{hashlib.sha256((TINY + commit).encode()).hexdigest()[:12]}"
    if not docker_client.images.list(name=tag):
        docker_client.images.build(path=str(context), tag=tag, rm=True, forcerm=True,
                                   pull=False, network_mode="none")
    return tag, commit


@pytest.fixture(scope="session")
def tiny_image(tiny: tuple[str, str]) -> str:
    return tiny[0]


@pytest.fixture
def private_daemon(docker_client: Any, tiny_image: str) -> Iterator[PrivateDaemon]:
    """A second engine holding the tiny image; afterwards gone with all it started."""
    daemon = PrivateDaemon(Path(tempfile.mkdtemp(prefix="rebd-", dir="/tmp")))
    daemon.start()
    try:
        image = docker_client.images.get(tiny_image)
        daemon.client().api.load_image(image.save(chunk_size=1 << 20, named=tiny_image))
        yield daemon
    finally:
        daemon.close()


def test_private_daemon_leaves_the_host_as_it_found_it(docker_client: Any) -> None:
    """In namespaces that are not the host's, gone with it; the host's interfaces (a ``docker0``
    above all), mounts, Docker networks and images are the same while it runs and after it as
    before (the host's engine only tells where its own containers' mounts are)."""
    before = hoststate.snapshot(docker_client)
    daemon = PrivateDaemon(Path(tempfile.mkdtemp(prefix="rebd-", dir="/tmp")))
    daemon.start()
    try:
        ours = _own_namespaces()
        assert set(daemon.namespaces) == set(ours)
        assert all(daemon.namespaces[ns] != ours[ns] for ns in ours), (daemon.namespaces, ours)
        assert daemon.client().info()["BridgeNfIptables"] is not None  # it answers from there
        assert hoststate.changes(before, hoststate.snapshot(docker_client)) == []
    finally:
        daemon.close()
    assert daemon.in_its_namespaces() == [], "its namespaces outlived it"
    assert hoststate.changes(before, hoststate.snapshot(docker_client)) == []
    assert not daemon.root.exists()


def test_daemon_stopped_mid_tier(tmp_path: Path, private_daemon: PrivateDaemon,
                              tiny: tuple[str, str]) -> None:
    tiny_image, commit = tiny
    tmp_path.joinpath("test_a_hang.py").write_text(module_text("reb/hang", commit, cpu=HANG))
    tmp_path.joinpath("test_b_after.py").write_text(module_text("reb/after", commit, cpu=AFTER))
    # the tiers in turn: side by side, the hanging pair's C2 may be done before the engine
    # stops (its own verdict, rightly), and "every later item is not run" is what is tested
    run = Spawned(tmp_path, ["--reb-image", tiny_image, "--reb-python", "/usr/bin/python3",
                             "-m", "c1 or c2", "--reb-serial",
                             "--reb-outdir", str(tmp_path / "reports")],
                  env={"DOCKER_HOST": private_daemon.url})
    run.wait_for(process_in(private_daemon.client(), run, "sleep 300"))
    private_daemon.stop()  # mid-tier
    rc = run.finish(timeout=180)
    assert rc == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output
    got = {(o["repo"], o["tier"]): o for o in logged(tmp_path / "reports")}
    assert set(got) == {("reb/hang", "c1"), ("reb/hang", "c2"), ("reb/after", "c1"),
                        ("reb/after", "c2")}, "every item is reported"
    hang = got["reb/hang", "c1"]
    assert (hang["status"], hang["category"]) == ("failed", "infra"), hang["message"]
    assert hang["duration"] < 60  # the engine's death, not the tier's timeout
    for key, rest in got.items():
        assert (rest["status"], rest["category"]) == ("failed", "infra"), (key, rest["message"])
        if key != ("reb/hang", "c1"):
            assert rest["message"].startswith("not run"), (key, rest["message"])
    assert len([ln for ln in run.lines if " infra: " in ln]) >= 4, run.output[-3000:]
