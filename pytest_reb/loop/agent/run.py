"""One agent run: a preflight, a container of the task image, the agent inside within a
budget, a secret scan of what it left, a commit.

Unlike the official harness, the agent and the verifier never share a live container: the
agent's container is committed to an image, removed, and the image is verified later in
containers of its own without network. So the environment can be handed on, verified
again, or kept as evidence.

* A run that cannot work is not scored: the preflight (``health``) checks in seconds that
  the agent can reach its model before the budget starts, and a run that ended on the
  agent's own connection or authentication error is ``agent_error``. Neither is committed
  nor written to the matrix.
* Network (this phase and ``--reb-prepare`` are the only ones that have any) and the GPUs
  asked for; no Docker socket, no host path writable but the run's own ``out`` folder,
  which is a bind mount and so never part of the commit; the built-in CLIs keep their
  state on a tmpfs (``STATE_MOUNT``), which is not part of it either.
* The budget holds: the host waits at most ``budget`` seconds for the agent's process, then
  SIGKILLs the container's init, which takes every process of its pid namespace with it.
  A run that ends in time is killed the same way, so a daemon it left is not alive later.
* No secret is kept: keys reach the agent's process only (the ``exec``, never the
  container's ``Env``); before the commit the host reads the layer the container added for
  every key in its common encodings (``leaks``): a hit is ``secret_leaked``, nothing is
  committed, and the record names the paths, never the value (``--scrub-secrets`` takes
  those paths out of the layer instead, and says so). Everything that comes back to the
  host is scrubbed, file names included, and the image's metadata is checked.
* Recorded: wall time (the paper's preparation time), exit code, timed out, the status,
  the bounded log, and token usage where the CLI reports it, else ``unknown``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb.evidence.gpu_use import host_gpus
from pytest_reb.loop.agent import DEFAULT_BUDGET, commit, health, leaks
from pytest_reb.loop.agent.backends import Backend, parse_usage
from pytest_reb.loop.agent.contract import OUT_MOUNT, STATE_MOUNT
from pytest_reb.loop.task import TASK_REPOSITORY, Task
from pytest_reb.runs.ids import new_run_id
from pytest_reb.spec import OFFICIAL_REPO_DIR, PROMPT_PATH
from pytest_reb.targets import TailBuffer, image_file, labels

#: How much of the agent's stdout is kept on the host to read its usage from.
STDOUT_LIMIT = 64 << 20
#: Once the agent's process has exited, how long its output may still drain.
DRAIN_S = 3.0
#: The label the agent's container carries beside the run's own (``target.labels``).
AGENT_LABEL = "reb.agent.name"
#: Statuses of a run. Only ``finished`` and ``timed_out`` are committed and in the matrix.
KEPT = ("finished", "timed_out")


class AgentRunError(RuntimeError):
    """A run that could not be made at all (no task image, engine refused): one line."""


@dataclass
class AgentRun:
    """The record of one run, a line of ``agent_runs.jsonl``; ``reb table`` reads it."""

    run: str
    agent: str
    repo: str
    task_image: str
    task_image_id: str
    image: str | None = None
    #: finished, timed_out (both kept), agent_unreachable, agent_error, secret_leaked,
    #: commit_failed, interrupted (Ctrl-C), failed (the engine or the host, one line)
    status: str = "finished"
    budget_s: float = DEFAULT_BUDGET
    network: str = ""
    gpus: list[str] = field(default_factory=list)
    started: float = 0.0
    wall_s: float | None = None
    exit_code: int | None = None
    timed_out: bool = False
    tokens: dict[str, Any] | str = "unknown"
    argv: list[str] = field(default_factory=list)
    log: str = ""
    out: str = ""
    error: str | None = None
    #: what the preflight checked, one line
    preflight: str = ""
    #: what the secret scan read, one line; the paths it found (no value), and those
    #: ``--scrub-secrets`` took out of the layer
    secret_scan: str = ""
    leaks: list[str] = field(default_factory=list)
    scrubbed: list[str] = field(default_factory=list)
    #: the tag of the commit, named before it starts; the commit's seconds
    image_tag: str | None = None
    commit_s: float | None = None


def network_mode(asked: str) -> str:
    """``auto`` is Docker's bridge where its ``docker0`` exists, else the host's network."""
    if asked != "auto":
        return asked
    return "bridge" if Path("/sys/class/net/docker0").exists() else "host"


def gpu_devices(asked: str) -> list[str]:
    """``all`` (every GPU of this host), ``none``, or a list such as ``0,1``."""
    if asked == "all":
        return host_gpus()
    if asked in ("none", ""):
        return []
    return [g.strip() for g in asked.split(",") if g.strip()]


def task_image_of(client: Any, task: Task, image: str | None) -> tuple[str, str]:
    """(tag, id) of the starting image: the one given, else ``reb-task:<owner>__<name>``."""
    from docker.errors import ImageNotFound

    tag = image or f"{TASK_REPOSITORY}:{task.slug}"
    try:
        return tag, client.images.get(tag).id
    except ImageNotFound:
        raise AgentRunError(f"no task image {tag}; make it with: reb task build {task.repo}") \
            from None


def run_agent(client: Any, backend: Backend, task: Task, *, out_root: Path,
              budget: float = DEFAULT_BUDGET, network: str = "auto", gpus: str = "all",
              secrets: Mapping[str, str] | None = None, tool_dir: Path | None = None,
              extra_args: Sequence[str] = (), task_image: str | None = None,
              matrix: Path | None = None, preflight: health.Preflight | None = None,
              scrub_secrets: bool = False) -> AgentRun:
    """Run ``backend`` on ``task`` once; commit what is clean, record, append the matrix row.

    ``preflight`` is one made already (a run over many repositories checks once), else it is
    made now; ``health.SKIPPED`` starts the budget unchecked.
    """
    from docker.errors import APIError
    from docker.types import DeviceRequest, Mount

    secrets = dict(secrets or {})
    tag, image_id = task_image_of(client, task, task_image)
    run_id = f"{new_run_id()}-{backend.name}"
    folder = out_root / run_id
    (folder / "out").mkdir(parents=True)
    record = AgentRun(run_id, backend.name, task.repo, tag, image_id, budget_s=budget,
                      network=network_mode(network), gpus=gpu_devices(gpus),
                      log=str(folder / "agent.log"), out=str(folder / "out"),
                      started=time.time())  # the agent's own start replaces it (``_exec``)
    text = image_file(client, tag, PROMPT_PATH, limit=1 << 20)
    if text is None:
        raise AgentRunError(f"{tag} has no {PROMPT_PATH}: not a task image (reb task build)")
    prompt = text.decode(errors="replace")
    argv = backend.command(prompt, extra_args)
    record.argv = [leaks.scrub("<the task text>" if a == prompt else a, secrets) for a in argv]
    check = preflight or health.preflight(backend, secrets, extra_args, os.environ)
    record.preflight = check.checked
    if not check.ok:
        record.status, record.error = "agent_unreachable", check.checked
        _finish(record, backend, folder, secrets, out_root, matrix)
        return record
    mounts = [Mount(dst, src, type="bind", read_only=True)
              for dst, src in backend.all_mounts(tool_dir).items()]
    mounts.append(Mount(OUT_MOUNT, str((folder / "out").resolve()), type="bind"))
    mounts.append(Mount(STATE_MOUNT, None, type="tmpfs"))
    config = client.images.get(tag).attrs.get("Config") or {}
    # the keep-alive is the command; an image's own entrypoint (a CUDA image's) wraps it, as
    # it will wrap whatever runs in the committed image, which gets the image's CMD back
    run_labels = labels(run_id, **{AGENT_LABEL: backend.name})
    kwargs: dict[str, Any] = dict(
        command=["sleep", "infinity"], detach=True, init=True,
        network_mode=record.network, shm_size="16g", mounts=mounts, labels=run_labels)
    if record.gpus:
        kwargs["device_requests"] = [DeviceRequest(device_ids=record.gpus,
                                                   capabilities=[["gpu"]])]
    try:
        ctr = client.containers.run(tag, **kwargs)
    except APIError as exc:
        raise AgentRunError(f"cannot start a container of {tag}: {exc.explanation}") from None
    layer: int | None = None
    try:
        path = next((e[5:] for e in config.get("Env") or [] if e.startswith("PATH=")),
                    "/usr/bin:/bin")
        env = {k: v.replace("$PATH", path) for k, v in backend.environment(prompt).items()}
        _exec(client, ctr, argv, {**env, **secrets}, folder, record)
        with contextlib.suppress(APIError):
            ctr.kill()  # every process the agent left, daemons included
        ctr.wait(timeout=60)
        _classify(record, backend, folder)
        _read_tokens(record, backend, folder)  # a label of the commit: the layout reads it
        if record.status in KEPT:
            layer = _keep(client, ctr, record, task, secrets, (config.get("Cmd"), run_labels),
                          scrub_secrets)
    except KeyboardInterrupt:
        record.status = "interrupted"
        raise
    except Exception as exc:
        record.status, record.error = "failed", f"{type(exc).__name__}: {str(exc)[:500]}"
        raise
    finally:
        with contextlib.suppress(Exception):
            commit.remove_container(client, ctr, commit.commit_timeout(layer))
        _finish(record, backend, folder, secrets, out_root, matrix)
    return record


def _classify(record: AgentRun, backend: Backend, folder: Path) -> None:
    """Finished, timed out, or ended on the agent's own service error (not a run)."""
    record.status = "timed_out" if record.timed_out else "finished"
    if record.timed_out or record.exit_code != 0:
        stdout = (folder / "stdout").read_text(errors="replace")
        said = health.agent_error(backend, stdout, Path(record.log).read_text(errors="replace"),
                                  folder / "out")
        if said is not None:
            record.status, record.error = "agent_error", f"the agent stopped on: {said}"


def _keep(client: Any, ctr: Any, record: AgentRun, task: Task, secrets: Mapping[str, str],
          restore: tuple[list[str] | None, Mapping[str, str]], scrub_secrets: bool) -> int | None:
    """Scan the container's layer for secrets; commit it when clean. The layer's size.

    ``restore``: the task image's CMD, and the run's labels, which the commit empties."""
    found = leaks.scan_layer(ctr, secrets)
    if found and scrub_secrets:
        record.scrubbed = leaks.revert(ctr, found)
        found = leaks.scan_layer(ctr, secrets)
    record.secret_scan = found.summary()
    if found:
        record.status, record.leaks = "secret_leaked", found.paths
        record.error = (f"a secret is in {len(found.paths)} path(s) of the agent's layer: "
                        "not committed (--scrub-secrets takes them out and commits)")
        return found.layer_bytes
    values = {"repo": task.repo, "agent": record.agent, "run": record.run,
              "task-image": record.task_image_id, "timed-out": str(record.timed_out).lower(),
              "exit-code": "" if record.exit_code is None else str(record.exit_code),
              "wall-s": str(record.wall_s), "started": f"{record.started:.3f}",
              "tokens": json.dumps(record.tokens, sort_keys=True)}
    record.image_tag = commit.image_tag(task.slug, record.run)
    start = time.monotonic()
    try:
        image_id = commit.commit(client, ctr, record.image_tag, record.run,
                                 commit.changes(values, restore[1], restore[0]),
                                 timeout=commit.commit_timeout(found.layer_bytes))
    except commit.CommitError as exc:
        record.status, record.error = "commit_failed", str(exc)
        return found.layer_bytes
    finally:
        record.commit_s = round(time.monotonic() - start, 3)
    # the config (Env, Labels, Cmd, Entrypoint) and every step of the history, the task
    # image's included: a custom --task-image may carry a key the agent never wrote
    metadata = json.dumps([client.api.inspect_image(image_id), client.api.history(image_id)])
    if leaks.scrub(metadata, secrets) != metadata:
        client.images.remove(image_id, force=True)
        record.status, record.image_tag = "secret_leaked", None
        record.error = ("a secret is in the committed image's config or history (the task "
                        "image's or the commit's); image removed")
        return found.layer_bytes
    record.image = record.image_tag
    return found.layer_bytes


def _exec(client: Any, ctr: Any, argv: list[str], env: dict[str, str], folder: Path,
          record: AgentRun) -> None:
    """Run the agent's argv in ``ctr``; stop it at the budget by killing the container."""
    api = client.api
    tail = TailBuffer()
    stdout = (folder / "stdout").open("wb")
    written = 0

    def pump(stream: Any) -> None:
        nonlocal written
        with contextlib.suppress(Exception):
            for out, err in stream:
                for chunk in (out, err):
                    if chunk:
                        tail.feed(chunk)
                if out and written < STDOUT_LIMIT:
                    stdout.write(out[: STDOUT_LIMIT - written])
                    written += len(out)

    exec_id = api.exec_create(ctr.id, argv, environment=env, workdir=OFFICIAL_REPO_DIR)["Id"]
    record.started = time.time()
    start = time.monotonic()
    stream = api.exec_start(exec_id, stream=True, demux=True)
    reader = threading.Thread(target=pump, args=(stream,), name="reb-agent", daemon=True)
    reader.start()
    deadline = start + record.budget_s
    while reader.is_alive() and time.monotonic() < deadline:
        reader.join(min(0.5, max(0.0, deadline - time.monotonic())))
        if reader.is_alive() and not api.exec_inspect(exec_id).get("Running", True):
            # the agent exited; a daemon it left may hold the output open: drain, move on
            reader.join(DRAIN_S)
            break
    info = api.exec_inspect(exec_id)
    if info.get("Running"):
        record.timed_out = True
        with contextlib.suppress(Exception):
            ctr.kill()
    record.wall_s = round(time.monotonic() - start, 3)
    reader.join(10)
    stdout.close()
    record.exit_code = None if record.timed_out else info.get("ExitCode")
    (folder / "agent.log").write_bytes(tail.text().encode())


def _finish(record: AgentRun, backend: Backend, folder: Path, secrets: Mapping[str, str],
            out_root: Path, matrix: Path | None) -> None:
    """Scrub what came back, read the usage, append the record and (when kept) the matrix row."""
    leaks.scrub_folder(folder, secrets)
    _read_tokens(record, backend, folder)
    record.error = None if record.error is None else leaks.scrub(record.error, secrets)
    record.leaks = [leaks.scrub(p, secrets) for p in record.leaks]
    record.scrubbed = [leaks.scrub(p, secrets) for p in record.scrubbed]
    _append(out_root / "agent_runs.jsonl", asdict(record))
    if record.image is not None and record.status in KEPT:
        _append(matrix or out_root / "matrix.jsonl",
                {"repo": record.repo, "agent": record.agent, "image": record.image})
    (folder / "run.json").write_text(json.dumps(asdict(record), indent=2) + "\n")


def _read_tokens(record: AgentRun, backend: Backend, folder: Path) -> None:
    """The usage the CLI reported (numbers only, so read before or after the scrub alike)."""
    stdout = (folder / "stdout").read_text(errors="replace") if (folder / "stdout").is_file() \
        else ""
    tokens = parse_usage(backend.usage, stdout, folder / "out")
    record.tokens = tokens.record() if tokens is not None else "unknown"


def _append(path: Path, row: Mapping[str, Any]) -> None:
    """One JSON line, under a lock: runs of several agents may append to one file at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        fh.write(json.dumps(row, sort_keys=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def load_runs(paths: Sequence[Path]) -> list[AgentRun]:
    """The records of ``agent_runs.jsonl`` files (or folders holding one)."""
    runs: list[AgentRun] = []
    names = set(AgentRun.__dataclass_fields__)
    for path in paths:
        file = path / "agent_runs.jsonl" if path.is_dir() else path
        for line in file.read_text().splitlines():
            if line.strip():
                data = json.loads(line)
                runs.append(AgentRun(**{k: v for k, v in data.items() if k in names}))
    return runs
