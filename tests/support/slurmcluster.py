"""A one-machine Slurm cluster of the suite's own: munged, slurmctld and slurmd in a temp folder.

Everything it uses lives under one temporary folder: the munge key, socket,
pid, log and seed files; ``slurm.conf``; the state and spool directories;
the logs.  The daemons run in the foreground as children of the test process
(no system service, nothing under /etc/slurm or /etc/munge is read or
written: ``SLURM_CONF`` points every client at our file), on ports chosen
free, under a cluster name of their own, so two suites on one machine never
meet.  ``stop`` cancels every job, ends the daemons it started (by their
pids) and removes the folder.

Debian's ``slurm-wlm`` 22.05 and ``munge`` (``.ci/setup-slurm.sh``).  No
accounting database: ``sacct`` needs slurmdbd and MySQL, so finished jobs are
read from ``squeue -t all`` (``MinJobAge`` keeps them) and the
``jobcomp/filetxt`` record.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")


def missing_binaries() -> list[str]:
    """The daemons and clients this cluster needs that are not on PATH."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    need = ("mungekey", *DAEMONS, "sbatch", "squeue", "scancel", "sinfo")
    return [b for b in need if shutil.which(b, path=path) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalSlurm:
    """Start with ``start()``; ``env`` is what a client needs; ``stop()`` ends it all."""

    def __init__(self, cpus: int = 2) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="reb-slurm-"))
        self.root.chmod(0o755)  # munged wants every folder above its socket searchable
        self.name = f"reb{secrets.token_hex(4)}"
        self.cpus = cpus
        self.conf = self.root / "slurm.conf"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {**os.environ, "SLURM_CONF": str(self.conf),
                    "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin"}

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def run(self, *argv: str, check: bool = True, timeout: float = 60) -> str:
        """A Slurm client command against this cluster; its stdout."""
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                              timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr}")
        return proc.stdout

    def start(self) -> None:
        for sub in ("munge", "state", "spool", "log"):
            self.path(sub).mkdir(mode=0o755)
        key = self.path("munge", "munge.key")
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], env=self.env, check=True,
                       capture_output=True)
        key.chmod(0o600)
        socket_path = self.path("munge", "munge.socket")
        self._spawn("munged", ["munged", "--foreground", f"--socket={socket_path}",
                               f"--key-file={key}", f"--pid-file={self.path('munge', 'pid')}",
                               f"--log-file={self.path('log', 'munged.log')}",
                               f"--seed-file={self.path('munge', 'seed')}"])
        self._until(socket_path.exists, "munged made no socket")
        self.conf.write_text(self._conf(socket_path))
        self._spawn("slurmctld", ["slurmctld", "-D", "-f", str(self.conf)])
        self._spawn("slurmd", ["slurmd", "-D", "-f", str(self.conf), "-N", self.node])
        self._until(lambda: self.run("sinfo", "-h", "-o", "%t", check=False).strip() == "idle",
                    "the node never became idle")

    @property
    def node(self) -> str:
        return f"{self.name}n0"

    def _conf(self, socket_path: Path) -> str:
        host = socket.gethostname().split(".")[0]  # slurmctld runs only where this names it
        log = self.path("log")
        return "\n".join([
            f"ClusterName={self.name}",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={socket_path}",
            f"StateSaveLocation={self.path('state')}",
            f"SlurmdSpoolDir={self.path('spool')}",
            f"SlurmctldPidFile={self.path('slurmctld.pid')}",
            f"SlurmdPidFile={self.path('slurmd.pid')}",
            f"SlurmctldLogFile={log}/slurmctld.log", f"SlurmdLogFile={log}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
            "MpiDefault=none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt", f"JobCompLoc={log}/jobcomp.txt",
            "ReturnToService=2", "MinJobAge=3600", "KillWait=10",
            f"NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={host} "
            f"CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=reb Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n"

    def _spawn(self, name: str, argv: list[str]) -> None:
        out = self.path("log", f"{name}.out").open("wb")
        self.procs[name] = subprocess.Popen(argv, env=self.env, stdout=out,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def _until(self, ok: object, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if callable(ok) and ok():
                return
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                break
            time.sleep(0.5)
        raise RuntimeError(f"local Slurm: {what}; {self.logs()}")

    def logs(self) -> str:
        """The tail of every daemon's output, for a failure message."""
        parts = []
        for name in DAEMONS:
            path = self.path("log", f"{name}.out")
            if path.exists():
                parts.append(f"--- {name}:\n" + "\n".join(
                    path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(parts)

    def stop(self) -> None:
        """Cancel every job, end the daemons (ours, by pid), remove the folder."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run("scancel", "--user=root", check=False)
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline and self.run("squeue", "-h", check=False).strip():
                time.sleep(1)
        for name in reversed(DAEMONS):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)
