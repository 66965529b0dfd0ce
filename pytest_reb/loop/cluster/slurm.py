"""A run matrix as a Slurm job array: generated ``sbatch`` scripts, a dependent merge job.

Plain scripts rather than submitit: what runs on the cluster is three short
shell files a person can read, edit and resubmit by hand (``array.sbatch``,
``merge.sbatch``, ``submit.sh``), the submit side needs ``sbatch`` and
nothing of ours, and a task is a pytest command line, not a pickled Python
callable that must unpickle under the same interpreter on every node.

Array tasks share one resource request, but ours differ (a C4 pair needs two
GPUs, a CPU-only pair none; time limits come from the stage timeouts), so
``submit.sh`` submits ``array.sbatch`` once per group of tasks with equal
``--gres``/``--time`` (``--array=<their indices>``) and then ``merge.sbatch``
with ``--dependency=afterany:`` on all groups.  Task *i* runs
``pytest --reb-shard i+1/N --reb-outdir OUT/tasks/i``; a task that finds an
earlier attempt's run there continues it with ``--reb-resume``, so a
cancelled, failed or preempted (``--requeue``) task never reruns finished
items.  A task whose pytest ended (all verdicts given) writes ``done``; the
merge job joins the runs of all tasks with ``reb merge``'s code and says
which tasks are not done, and ``reb slurm --resubmit OUT`` submits those.

Folder layout (``OUT`` must be on a file system every node sees)::

    OUT/plan.json             tasks: pairs, GPUs, seconds; how pytest is run
    OUT/array.sbatch          the array task script
    OUT/merge.sbatch          the merge job script
    OUT/submit.sh             sbatch lines of the first submission (resubmit-N.sh later)
    OUT/submissions.jsonl     job ids of every submission
    OUT/tasks/<i>/<run>/      each task's run (outcomes.jsonl, summary.json); done
    OUT/logs/                 Slurm's output files
    OUT/merged/<job id>/      merged runs; OUT/merged/latest names the newest
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_reb.loop.cluster.plan import Plan
from pytest_reb.report import merge as merging

#: Slurm job states after which a job never runs again.
FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                          "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"})
#: ``squeue`` columns of the status lines: id, name, state, elapsed, limit, GRES, node/reason.
SQUEUE_FORMAT = "%.14i %.20j %.10T %.10M %.12l %.12b %R"


class SlurmError(RuntimeError):
    """sbatch or squeue failed, or a folder is not a ``reb slurm`` submission."""


@dataclass(frozen=True)
class SlurmOptions:
    """How tasks are submitted and how each runs pytest."""

    name: str = "reb"
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    constraint: str | None = None
    sbatch_args: tuple[str, ...] = ()  # anything else for sbatch, passed as given
    python: str = "python3"
    pytest_args: tuple[str, ...] = ()
    workdir: str = field(default_factory=os.getcwd)  # where the tasks' pytest runs

    def passthrough(self) -> list[str]:
        """The sbatch options every job of the run gets (tasks and merge alike)."""
        named = {"partition": self.partition, "account": self.account, "qos": self.qos,
                 "constraint": self.constraint}
        return [f"--{k}={v}" for k, v in named.items() if v] + list(self.sbatch_args)


def slurm_time(seconds: int) -> str:
    """``--time`` as ``D-HH:MM:SS``, which every Slurm version parses the same way."""
    minutes, secs = divmod(max(int(seconds), 60), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"


def task_options(gpus: int, seconds: int) -> list[str]:
    """The per-task request: time limit, and GPUs through GRES when the task needs any."""
    return [f"--time={slurm_time(seconds)}"] + ([f"--gres=gpu:{gpus}"] if gpus else [])


def groups(tasks: Sequence[Mapping[str, Any]]) -> list[tuple[list[str], list[int]]]:
    """Tasks (``plan.json`` records) of equal request, as (sbatch options, array indices)."""
    by_request: dict[tuple[str, ...], list[int]] = {}
    for task in tasks:
        request = tuple(task_options(task["gpus"], task["seconds"]))
        by_request.setdefault(request, []).append(task["index"])
    return [(list(req), ids) for req, ids in by_request.items()]


def pytest_argv(plan: Plan, opts: SlurmOptions) -> list[str]:
    """pytest's arguments of every task, before the per-task tiers, shard, folder, GPUs, resume."""
    return [opts.python, "-m", "pytest", *map(str, plan.modules), "--reb-matrix",
            str(plan.matrix), f"--reb-timeout-scale={plan.timeout_scale:g}", *opts.pytest_args]


def _directives(lines: list[str]) -> str:
    return "".join(f"#SBATCH {line}\n" for line in lines)


def array_script(plan: Plan, out: Path, opts: SlurmOptions) -> str:
    """``array.sbatch``: one array task runs one shard of the matrix, continuing its last run."""
    table = "".join(f"#   task {t.index} ({t.gpus} GPU, {slurm_time(t.seconds)}, "
                    f"{','.join(t.tiers)}): {', '.join(p.key for p in t.pairs)}\n"
                    for t in plan.tasks)
    # tasks differ in tiers once the cluster's GPUs drop some: one -m per task index
    marks = " ".join(f"[{t.index}]={shlex.quote(t.marker_expression())}" for t in plan.tasks)
    shards = plan.tasks[0].shards
    py = shlex.quote(opts.python)
    return (
        "#!/bin/bash\n"
        "# pytest-reb on Slurm: array task i runs --reb-shard i+1/N of the run matrix.\n"
        "# Made by `reb slurm`; submit.sh gives each group of tasks its --array, --time and\n"
        "# --gres. The pairs of each task:\n" + table +
        _directives([f"--job-name={opts.name}", f"--output={out}/logs/task-%a-%A.out",
                     "--open-mode=append", "--requeue", f"--chdir={opts.workdir}",
                     *opts.passthrough()]) +
        "set -uo pipefail\n"
        "task=${SLURM_ARRAY_TASK_ID:?run as a Slurm array task}\n"
        f"marks=({marks})\n"
        f"out={shlex.quote(str(out))}/tasks/$task\n"
        'mkdir -p "$out"\n'
        "# an earlier attempt (cancelled, failed, preempted) is continued, never redone;\n"
        "# containers its pytest could not remove (killed) go first\n"
        "resume=()\n"
        'for run in "$out"/[0-9]*/; do\n'
        '    [ -d "$run" ] || continue\n'
        f'    {py} -m pytest_reb.loop.cli gc --run "$(basename "$run")"\n'
        '    [ -f "$run/outcomes.jsonl" ] && resume=(--reb-resume)\n'
        "done\n"
        "# the job's GPUs as the host numbers them (Docker runs outside the job's cgroup);\n"
        "# none allocated means none used\n"
        "gpus=${SLURM_JOB_GPUS:-}\n"
        f'echo "reb: task $task = shard $((task + 1))/{shards} on $(hostname),'
        ' tiers ${marks[$task]}, GPUs [$gpus], ${resume[*]:-new run}"\n'
        + shlex.join(pytest_argv(plan, opts)) +
        f' -m "${{marks[$task]}}" --reb-shard "$((task + 1))/{shards}" --reb-outdir "$out"'
        ' --reb-gpus "$gpus" "${resume[@]}"\n'
        "rc=$?\n"
        "# 0: every tier passed, 1: some did not; either way every verdict is in\n"
        'if [ "$rc" -le 1 ]; then echo "$rc" >"$out/done"; exit 0; fi\n'
        'exit "$rc"\n')


def merge_script(out: Path, opts: SlurmOptions) -> str:
    """``merge.sbatch``: join the tasks' runs into one (``reb slurm --merge``)."""
    return ("#!/bin/bash\n"
            "# pytest-reb on Slurm: after every array task, the tasks' runs as one run.\n"
            + _directives([f"--job-name={opts.name}-merge", f"--output={out}/logs/merge-%j.out",
                           "--time=0-00:30:00", f"--chdir={opts.workdir}", *opts.passthrough()])
            + shlex.join([opts.python, "-m", "pytest_reb.loop.cli", "slurm", "--merge", str(out)])
            + "\n")


def submit_script(out: Path, tasks: Sequence[Mapping[str, Any]], why: str) -> str:
    """The sbatch lines of ``tasks``: one array per group, then the merge job after all.

    It prints ``array <id> <indices>`` per group and ``merge <id>``; the merge
    depends with ``afterany`` so it also runs when some task failed.
    """
    lines = ["#!/bin/bash", f"# Made by `reb slurm`: {why}", "set -euo pipefail",
             f"cd {shlex.quote(str(out))}", "ids="]
    for n, (request, ids) in enumerate(groups(tasks)):
        array = ",".join(map(str, ids))
        lines += [f"j{n}=$(sbatch --parsable --array={array} {shlex.join(request)} array.sbatch)",
                  f'j{n}=${{j{n}%%;*}}; ids="$ids:$j{n}"; echo "array $j{n} {array}"']
    lines += ['m=$(sbatch --parsable --dependency="afterany$ids" merge.sbatch)',
              'echo "merge ${m%%;*}"']
    return "\n".join(lines) + "\n"


def plan_json(plan: Plan, opts: SlurmOptions) -> dict[str, Any]:
    """What ``plan.json`` keeps: enough to resubmit without the matrix or modules."""
    return {"matrix": str(plan.matrix), "modules": [str(m) for m in plan.modules],
            "tiers": list(plan.tiers), "timeout_scale": plan.timeout_scale,
            "skipped": list(plan.skipped), "options": asdict(opts),
            "tasks": [{"index": t.index, "shard": t.shard, "gpus": t.gpus, "seconds": t.seconds,
                       "tiers": list(t.tiers), "pairs": [p.key for p in t.pairs]}
                      for t in plan.tasks]}


def write(plan: Plan, out: Path, opts: SlurmOptions) -> Path:
    """Write the scripts and plan of a new submission into ``out``; returns submit.sh."""
    if (out / "plan.json").exists():
        raise SlurmError(f"{out} already holds a submission; resubmit it with "
                         f"`reb slurm --resubmit {out}` or give a new --out")
    for sub in ("tasks", "logs", "merged"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(json.dumps(plan_json(plan, opts), indent=2))
    (out / "array.sbatch").write_text(array_script(plan, out, opts))
    (out / "merge.sbatch").write_text(merge_script(out, opts))
    path = out / "submit.sh"
    path.write_text(submit_script(out, plan_json(plan, opts)["tasks"],
                                  "every task, in groups of equal resources."))
    return path


def read_plan(out: Path) -> dict[str, Any]:
    """``plan.json`` of a submission folder."""
    try:
        return json.loads((out / "plan.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (OSError, ValueError) as exc:
        raise SlurmError(f"{out}: not a `reb slurm` folder (plan.json: {exc})") from None


def unfinished(out: Path) -> list[int]:
    """Indices of the tasks whose pytest has not ended (no ``done``)."""
    return [t["index"] for t in read_plan(out)["tasks"]
            if not (out / "tasks" / str(t["index"]) / "done").is_file()]


def resubmit_script(out: Path) -> Path:
    """A ``resubmit-N.sh`` for the unfinished tasks, with their original requests."""
    todo = set(unfinished(out))
    if not todo:
        raise SlurmError(f"{out}: every task is done; nothing to resubmit")
    tasks = [t for t in read_plan(out)["tasks"] if t["index"] in todo]
    path = out / f"resubmit-{len(list(out.glob('resubmit-*.sh'))) + 1}.sh"
    path.write_text(submit_script(out, tasks, f"tasks {sorted(todo)} again; each continues "
                                              "its run (--reb-resume)."))
    return path


@dataclass(frozen=True)
class Submission:
    """The jobs one submit script made."""

    arrays: tuple[str, ...]
    merge: str


def submit(script: Path) -> Submission:
    """Run a submit script; its job ids are appended to ``submissions.jsonl``."""
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SlurmError(f"{script.name} failed (exit {proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    arrays = tuple(line.split()[1] for line in proc.stdout.splitlines()
                   if line.startswith("array "))
    merge = next((line.split()[1] for line in proc.stdout.splitlines()
                  if line.startswith("merge ")), "")
    if not arrays or not merge:
        raise SlurmError(f"{script.name} printed no job ids: {proc.stdout.strip()[-500:]}")
    record = {"script": script.name, "arrays": list(arrays), "merge": merge,
              "submitted": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    with (script.parent / "submissions.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
    return Submission(arrays, merge)


def _squeue(job_ids: Sequence[str], fmt: str, *, header: bool = False) -> list[str]:
    """``squeue`` lines of the jobs, finished ones too (while ``MinJobAge`` keeps them)."""
    argv = ["squeue", *([] if header else ["-h"]), "-t", "all", "-j", ",".join(job_ids),
            "-o", fmt]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0 and "Invalid job id" not in proc.stderr:
        raise SlurmError(f"squeue failed: {proc.stderr.strip()}")
    return [line for line in proc.stdout.splitlines() if line.strip()]


def status_lines(job_ids: Sequence[str]) -> list[str]:
    """What a person reads about the jobs: ``squeue`` with a header, one line per task."""
    return _squeue(job_ids, SQUEUE_FORMAT, header=True)


def wait(job_id: str, *, poll: float = 2.0, timeout: float | None = None) -> str:
    """Wait until the job is in a final state; returns it (``GONE`` once Slurm forgot it)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        states = {s.strip() for s in _squeue([job_id], "%T")}
        if not states:
            return "GONE"
        if states <= FINAL_STATES:
            return ",".join(sorted(states))
        if deadline is not None and time.monotonic() > deadline:
            raise SlurmError(f"job {job_id} still {','.join(sorted(states))} after {timeout}s")
        time.sleep(poll)


def merge_tasks(out: Path, name: str) -> tuple[Path, list[int], dict[str, Any]]:
    """Join every task's run into ``OUT/merged/<name>``: (folder, tasks not done, summary).

    A task's run is the newest folder with outcomes under ``OUT/tasks/<i>``
    (the one its resumed attempts continued).  Tasks not done still give
    what they recorded, and are named so they can be resubmitted.
    """
    data = read_plan(out)
    missing = unfinished(out)
    runs = []
    for task in data["tasks"]:
        found = sorted((out / "tasks" / str(task["index"])).glob("[0-9]*/outcomes.jsonl"))
        if found:
            runs.append(found[-1].parent)
    if not runs:
        raise SlurmError(f"{out}: no task recorded any outcome")
    target = out / "merged" / name
    try:
        summary = merging.write(runs, target)
    except merging.MergeError as exc:
        raise SlurmError(str(exc)) from None
    latest = out / "merged" / "latest"
    tmp = latest.with_name("latest.tmp")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(name)
    os.replace(tmp, latest)
    return target, missing, summary
