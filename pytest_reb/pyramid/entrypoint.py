"""Running a repository's own entrypoint: the shared body of C1, C3 and C4.

It turns a ``Run`` into commands (placeholders, the stop signal, HTTP runs),
executes them through the target, applies the run's success rules, and
returns an ``Outcome`` with the official exit-code verdict (compat) beside the
evidence-based one (strict).  Observe, then decide: this module only runs
and gathers what it saw into an ``EntrypointEvidence`` record (the host's view
of the command, the witness's account, the checkout before and after); how
C1, C3 and C4 are decided from it is ``rules/entrypoint_stage.py``, so the
three tiers differ only in the ``GpuNeed`` they pass.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from pytest_reb.assets import view
from pytest_reb.assets.fetchers import checkout_copy
from pytest_reb.evidence import diagnose
from pytest_reb.outcome import Outcome
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.run_integrity import changed_during, loaded_during, watch_loads
from pytest_reb.pyramid.shims import shim_path, with_shim
from pytest_reb.pyramid.witnessing import StageWitness
from pytest_reb.rules import stage_messages
from pytest_reb.rules.decision import mode_of
from pytest_reb.rules.entrypoint_stage import (
    EntrypointEvidence,
    GpuNeed,
    decide,
    figures,
    too_few_gpus,
)
from pytest_reb.spec import Asset, Run
from pytest_reb.targets import (
    PROBES_MOUNT,
    SHIMLIB_MOUNT,
    ExecResult,
    Profile,
    bytecode,
)

#: The client that judges ``server_http`` runs, shipped read-only into the target.
HTTP_PROBE = f"{PROBES_MOUNT}/http_probe.py"
#: The runner of stages with ``helpers`` (torchft's lighthouse), shipped the same way.
HELPERS_PROBE = f"{PROBES_MOUNT}/helpers_probe.py"


#: Run-time values the official probes computed, resolved in the target (see ``Run``).
RESOLVER = re.compile(r"\{(glob|file|module):([^{}]+)\}")
#: What the target runs to resolve each kind; ``$1`` is the value, ``$2`` the interpreter.
_RESOLVE_SCRIPT = {
    "glob": 'IFS="\n"; for p in $1; do [ -e "$p" ] && { printf %s "$p"; exit 0; }; done; exit 1',
    "file": 'cat -- "$1"',
    "module": '"$2" -c \'import importlib.util as u, sys; s = u.find_spec(sys.argv[1]); '
              'print(s.origin) if s and s.origin else sys.exit(1)\' "$1"',
}


class Unrunnable(Exception):
    """A stage that failed before its command ran: a setup step, a value, a helper."""

    def __init__(self, category: str, message: str, res: ExecResult) -> None:
        super().__init__(message)
        self.category, self.message, self.res = category, message, res


@dataclass(frozen=True)
class Places:
    """What the placeholders of one run stand for in the target."""

    python: str
    repo: str
    assets: str
    out: str
    port: int | None = None
    shims: str | None = None
    resolved: Mapping[str, str] = field(default_factory=dict)

    def fill(self, value: str, *, shell: bool = False) -> str:
        """Fill the placeholders and resolved values of ``value``; leave other braces.

        In a shell script (``bash -lc '...'``) each value is quoted: a report's
        ``python_path`` like ``/x; touch /tmp/pwned`` must stay one word.
        """
        table = {"{python}": self.python, "{repo}": self.repo, "{assets}": self.assets,
                 "{out}": self.out}
        if self.port is not None:
            table["{port}"] = str(self.port)
        if self.shims is not None:
            table["{shims}"] = self.shims
        for key, val in table.items():
            value = value.replace(key, shlex.quote(val) if shell else val)
        if self.resolved:
            value = RESOLVER.sub(lambda m: _quoted(self.resolved.get(m.group(0), m.group(0)),
                                                   shell), value)
        return value

    def fill_all(self, value: Any) -> Any:
        """Placeholders filled in every string of a nested JSON-like value."""
        if isinstance(value, str):
            return self.fill(value)
        if isinstance(value, Mapping):
            return {k: self.fill_all(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.fill_all(v) for v in value]
        return value


def _quoted(value: str, shell: bool) -> str:
    return shlex.quote(value) if shell else value


def places(ctx: Context, out: str, port: int | None = None, shims: str | None = None) -> Places:
    """The placeholders of a run of ``ctx``'s repository in ``ctx``'s target."""
    return Places(ctx.python or "python", ctx.checkout, ctx.assets, out, port, shims)


def _is_script(argv: Sequence[str], i: int) -> bool:
    """Whether ``argv[i]`` is the script of ``sh -c`` / ``bash -lc`` (a shell reads it)."""
    return (i >= 2 and argv[i - 1] in ("-c", "-lc", "-ec", "-xc")
            and PurePosixPath(argv[i - 2]).name in ("sh", "bash", "dash"))


def _argv(argv: Sequence[str], at: Places) -> list[str]:
    return [at.fill(a, shell=_is_script(argv, i)) for i, a in enumerate(argv)]


def _command(run: Run, ctx: Context, at: Places) -> list[str]:
    argv = _argv(run.argv, at)
    if run.stop_after is not None and not _stops_itself(argv):
        argv = ctx.target.stopping(argv, run.stop_after, run.stop_signal)
    if run.http is not None:
        fields = {k: getattr(run.http, k) for k in (
            "ready", "ready_within", "request", "json_body", "form_files", "form_fields",
            "expect_json_key", "min_bytes", "request_timeout")}
        spec = {"server": argv, "port": at.port, **at.fill_all(fields)}
        argv = [at.python, ctx.target.tool(HTTP_PROBE), json.dumps(spec)]
    return argv


def _stops_itself(argv: list[str]) -> bool:
    """Whether the command already sends its own stop signal (``timeout --preserve-status``)."""
    return argv[:1] == ["timeout"] or any("timeout --preserve-status" in a for a in argv)


def _needs_port(run: Run) -> bool:
    return run.http is not None or any("{port}" in t for t in run.texts())


def _env(run: Run, at: Places, ctx: Context, pycache: Mapping[str, str]) -> dict[str, str]:
    """The run's env, filled.  A ``PYTHONPATH`` it sets (or its shim folder) goes in front of
    the environment's own (an image's ``ENV``), as the official scripts' ``${PYTHONPATH:+...}``
    did, not instead of it.  ``pycache`` (the stage's bytecode folder) wins over the run's
    own setting: the folder must be one the image does not know."""
    env = {k: at.fill(v) for k, v in run.env.items()}
    own = ctx.target.own_env("PYTHONPATH")
    if own and ("PYTHONPATH" in env or at.shims is not None):
        mine = [p for p in env.get("PYTHONPATH", "").split(":") if p]
        env["PYTHONPATH"] = ":".join([*mine, *(p for p in own.split(":") if p and p not in mine)])
    return {**with_shim(env, at.shims, ctx.target.tool(SHIMLIB_MOUNT)), **pycache}


def _resolve(ctx: Context, at: Places, texts: Sequence[str], env: Mapping[str, str],
             cwd: str, profile: Profile, gpus: list[str]) -> Places:
    """``at`` with every ``{glob:..}``, ``{file:..}`` and ``{module:..}`` of ``texts`` resolved
    in the target; one that cannot be is ``Unrunnable`` (``data``/``model`` when the path is
    an asset's, ``deps`` for a module, else ``runtime``)."""
    resolved = dict(at.resolved)
    for text in texts:
        for match in RESOLVER.finditer(at.fill(text)):
            token, kind, arg = match.group(0), match.group(1), match.group(2)
            if token in resolved:
                continue
            res = ctx.target.exec([*ctx.target.util("sh"), "-c", _RESOLVE_SCRIPT[kind], "sh",
                                   arg, at.python],
                                  timeout=60, env=env, cwd=cwd, profile=profile, gpus=gpus,
                                  scaled=False)
            value = res.stdout.strip()
            if res.exit_code != 0 or not value:
                raise Unrunnable(_resolver_category(ctx, at, kind, arg),
                                 f"{_RESOLVER_WORDS[kind]} {arg}", res)
            resolved[token] = value
    return replace(at, resolved=resolved)


_RESOLVER_WORDS = {"glob": "no file matches", "file": "cannot read the run-time value file",
                   "module": "the report's interpreter cannot find the module"}


def _resolver_category(ctx: Context, at: Places, kind: str, arg: str) -> str:
    if kind == "module":
        return "deps"
    prefix = at.assets.rstrip("/") + "/"
    if arg.startswith(prefix):
        rel = arg[len(prefix):]
        for asset in ctx.repo.assets:
            dest = asset.dest.strip("/")
            if rel == dest or rel.startswith(dest + "/"):
                return view.category(asset)
    return "runtime"


def _setup(run: Run, ctx: Context, tier: str, at: Places, env: dict[str, str], cwd: str,
           timeout: float, profile: Profile, gpus: list[str], record: dict[str, Any]) -> Places:
    """Run ``run.setup`` in order, each step recorded; the first failing step makes the stage
    ``Unrunnable``."""
    for step in run.setup:
        at = _resolve(ctx, at, step, env, cwd, profile, gpus)
        argv = _argv(step, at)
        res = ctx.target.exec(argv, timeout=timeout, env=env, cwd=cwd, profile=profile,
                              gpus=gpus)
        record.setdefault("setup", []).append(
            {"command": argv, "exit_code": res.exit_code, "duration": round(res.duration, 3)})
        if res.exit_code != 0 or res.timed_out:
            category = stage_messages.categorise(res)
            headline = stage_messages.failed(res, category,
                                             stage_messages.diagnosis_of(res, category, tier))
            raise Unrunnable(category, f"setup step `{shlex.join(argv)}` failed: {headline}",
                             res)
    return at


def _exec_run(run: Run, ctx: Context, tier: str, profile: Profile, gpus: list[str],
              record: dict[str, Any], seen: StageWitness, outs: list[str],
              pycache: Mapping[str, str]) -> tuple[list[str], ExecResult]:
    """Execute ``run`` and the runs started ``together`` with it; the first failure wins.

    Setup steps run first and values are resolved next (either can make the
    stage ``Unrunnable``); both go into ``record``, the outcome's account of
    what ran before the command.  With ``helpers`` everything runs under one
    helper runner so the runs share the helpers' values.
    """
    outs.append(f"/tmp/reb-out-{secrets.token_hex(4)}")
    out = f"{outs[-1]}/{tier}"
    timeout = run.timeout
    runs = [run, *run.together]
    at = [places(ctx, out, (r.http.port if r.http and r.http.port else _free_port(i))
                 if _needs_port(r) else None, shim_path(ctx.target, r, ctx.checkout))
          for i, r in enumerate(runs)]
    envs = [_env(r, a, ctx, pycache) for r, a in zip(runs, at, strict=True)]
    cwds = [a.fill(r.cwd) for r, a in zip(runs, at, strict=True)]
    # {out} is new for every run, so a working folder inside it must be made too
    inside = [c for c in cwds if c.startswith(out + "/")]
    ctx.target.exec([*ctx.target.util("mkdir"), "-p", out, *inside],
                    timeout=30, profile=profile, gpus=gpus, scaled=False)
    resolved: Mapping[str, str] = {}
    try:
        at[0] = _setup(run, ctx, tier, at[0], envs[0], cwds[0], timeout, profile, gpus, record)
        resolved = at[0].resolved
        for i, r in enumerate(runs):  # values the runs share are resolved once
            at[i] = _resolve(ctx, replace(at[i], resolved=resolved), r.texts(), envs[i],
                             cwds[i], profile, gpus)
            resolved = at[i].resolved
    finally:
        if resolved:
            record["resolved"] = dict(resolved)
    envs = [_env(r, a, ctx, pycache) for r, a in zip(runs, at, strict=True)]
    cwds = [a.fill(r.cwd) for r, a in zip(runs, at, strict=True)]
    commands = [_command(r, ctx, a) for r, a in zip(runs, at, strict=True)]
    records: list[str | None] = []
    for i, (r, a) in enumerate(zip(runs, at, strict=True)):
        envs[i], rec = seen.env(r, _argv(r.argv, a), a.python, cwds[i], envs[i])
        records.append(rec)
    if run.helpers:
        spec = {"helpers": [{"argv": _argv(h.argv, at[0]), "export": h.export, "ready": h.ready,
                             "ready_within": h.ready_within} for h in run.helpers],
                "runs": [{"argv": c, "env": e, "cwd": d}
                         for c, e, d in zip(commands, envs, cwds, strict=True)]}
        argv = [at[0].python, ctx.target.tool(HELPERS_PROBE), json.dumps(spec)]
        res = ctx.target.exec(argv, timeout=timeout, env=envs[0], cwd=cwds[0], profile=profile,
                              gpus=gpus)
        for rec in records:
            seen.collect(rec, gpus)
        return commands[0], res
    results: list[ExecResult | None] = [None] * len(runs)

    def go(i: int) -> None:
        results[i] = ctx.target.exec(commands[i], timeout=timeout, env=envs[i], cwd=cwds[i],
                                     profile=profile, gpus=gpus)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(1, len(runs))]
    for t in threads:
        t.start()
    go(0)
    for t in threads:
        t.join()
    for rec in records:
        seen.collect(rec, gpus)
    done = [r for r in results if r is not None]
    first_bad = next((r for r in done if r.exit_code != 0), done[0])
    if len(done) > 1:  # evidence from every process group counts
        for r in done:
            if r is not first_bad:
                first_bad.gpu_holders.update(r.gpu_holders)
                first_bad.gpu_memory.update(r.gpu_memory)
                first_bad.device_files.update(r.device_files)
                first_bad.holder_cmdlines.update(r.holder_cmdlines)
                for gpu, seen_gpu in r.gpu_compute.items():
                    first_bad.gpu_compute.setdefault(gpu, seen_gpu)
    return commands[0], first_bad


def _remove_outputs(ctx: Context, outs: list[str], profile: Profile, gpus: list[str],
                    pycache: Mapping[str, str]) -> None:
    """The stage's ``{out}`` folders (checkpoints, logs): on ``local://`` they are this
    machine's ``/tmp``, in a container they count against ``--reb-disk`` for the next tier.
    ``--reb-keep-outputs`` keeps them; a target that is gone has nothing left to remove.
    The stage's own bytecode folder (in a container's memory) goes in any case."""
    gone = [] if ctx.options.keep_outputs else list(outs)
    folder = bytecode.stage_folder(pycache)
    if folder is not None:
        gone.append(folder)
    ctx.target.remove_paths(gone, timeout=120, profile=profile, gpus=gpus)


def _free_port(offset: int) -> int:
    """A port for a server inside the target; network is off, so only loopback matters."""
    return 20000 + secrets.randbelow(20000) + offset


def run_stage(ctx: Context, tier: str, run: Run, profile: Profile,
              gpu: GpuNeed | None = None, gpus_needed: int = 0) -> Outcome:
    """Run one stage under a lease of ``gpus_needed`` GPUs and judge it both ways
    (``entrypoint_stage.decide``); ``gpu`` is what C3/C4 require of the GPUs."""
    if ctx.python is None:
        return ctx.outcome(tier, category="missing_report", strict=False, compat=False,
                           message=f"{ctx.report.message}; pass --reb-python to run the "
                                   "entrypoints without a report")
    gate, used = _asset_gate(ctx, tier, run)
    if gate is not None:
        return gate
    tampered = ctx.checkout_verdict.stage_problem(run)  # checked before anything runs
    early: Unrunnable | None = None
    record: dict[str, Any] = {}  # setup steps run and values resolved
    seen = StageWitness.for_target(ctx.target, ctx.checkout, tier)
    ran = run  # the run judged: the retry, when the first attempt asked for it
    outs: list[str] = []  # the {out} folders made, removed when the stage ends
    with ctx.leases.hold(gpus_needed) as gpus:
        pycache = ctx.target.stage_bytecode(profile, gpus)
        watch = watch_loads(ctx, profile, gpus)  # what the stage opens, told by the kernel
        try:
            command, res = _exec_run(run, ctx, tier, profile, gpus, record, seen, outs, pycache)
            if res.exit_code != 0 and not res.timed_out:
                retry = run.retry_for(res.output)
                if retry is not None:
                    ran, seen = retry, StageWitness.for_target(ctx.target, ctx.checkout, tier)
                    command, res = _exec_run(retry, ctx, tier, profile, gpus, record, seen,
                                             outs, pycache)
        except Unrunnable as exc:
            early, command, res = exc, exc.res.argv, exc.res
        finally:
            if watch is not None:
                watch.close()
            kept = ctx.target.keep_bytecode(pycache, profile, gpus)
            _remove_outputs(ctx, outs, profile, gpus, pycache)
    tampered = tampered or changed_during(ctx, run)  # what the run left, read from outside
    loads, loaded_problem = loaded_during(ctx, watch, pycache, run)
    o = ctx.outcome(tier, command=command, exit_code=res.exit_code, timed_out=res.timed_out,
                    duration=round(res.duration, 3), stdout_tail=_tail(res.stdout),
                    stderr_tail=_tail(res.stderr))
    o.evidence.update(evidence_of(res), **record)
    o.evidence["witness"] = seen.evidence()
    if loads is not None:
        o.evidence["loaded"] = loads
    if kept is not None:
        o.evidence["bytecode"] = kept
    if profile == "gpu":
        o.evidence["gpu_compute"] = figures(res)
    o.findings = list(ctx.integrity)
    if used:
        o.evidence["assets"] = used
    if gpus:
        o.evidence["gpus_leased"] = gpus
    evidence = EntrypointEvidence(
        tier=tier, profile=profile, run=ran, res=res,
        early=(early.category, early.message) if early is not None else None,
        tampered=tampered, loaded=(f"during the run, {loaded_problem}" if loaded_problem
                                   else None), witness=seen.problem(),
        attribution=seen.gpu_problem() if gpu is not None else None, gpu=gpu,
        expect=seen.expect, python=ctx.python or "python", checkout=ctx.checkout,
        timeout=ctx.target.scaled(ran.timeout), setup_steps=len(record.get("setup", [])))
    return decide(evidence, mode_of(ctx.compat)).onto(o)


def hardware_gate(ctx: Context, tier: str, run: Run, minimum: int) -> Outcome | None:
    """``insufficient_hardware`` before running, when the target has too few GPUs."""
    need = max(minimum, run.min_gpus)
    have = len(ctx.target.gpus)
    problem = too_few_gpus(need, have)
    if problem is None:
        return None
    return ctx.verdict(ctx.outcome(tier, category=problem[0], strict=False, compat=False,
                                   message=problem[1],
                                   evidence={"gpus_needed": need, "gpus_available": have}))


def _asset_gate(ctx: Context, tier: str, run: Run) -> tuple[Outcome | None, dict[str, str]]:
    """Fail before running when an asset the stage reads is not there (``data`` / ``model``).

    Offline assets (repository files, our synthetic ones) are made here if
    needed; network ones only ever come from ``--reb-prepare`` or a cache
    filled elsewhere.  Returns the failed outcome, or the assets used and
    where each came from.
    """
    wanted = view.needed(ctx.repo, run)
    if not wanted:
        return None, {}
    cache = ctx.asset_cache
    if cache is not None and view.mount_view(ctx.target, ctx.repo, cache,
                                             ctx.checkout) is not None:
        cache.prepare(ctx.repo, network=False, only=wanted,
                      copy=checkout_copy(ctx.target, ctx.checkout))
        missing = cache.missing(ctx.repo, wanted)
        origins = {a: e.get("origin", "") for a, e in cache.manifest(ctx.repo)["assets"].items()}
    else:
        missing = _missing_in_target(ctx, wanted)
        origins = {a.name: "in the target" for a in wanted}
    if not missing:
        return None, {a.name: origins.get(a.name, "") for a in wanted}
    names = [a.name for a, _ in missing]
    o = ctx.outcome(tier, category=view.category(missing[0][0]), strict=False, compat=False,
                    message=view.missing_message(missing, cache.root if cache else None),
                    evidence={"missing_assets": names})
    o.diagnosis = [diagnose.Diagnosis(
        "missing_asset", names, "prepare the assets with --reb-prepare, or pass --reb-assets "
        "DIR with a cache that holds them").to_json()]
    return ctx.verdict(o), {}


def _missing_in_target(ctx: Context, wanted: list[Asset]) -> list[tuple[Asset, str]]:
    """For targets that cannot see the host's cache: which assets are absent at ``{assets}``."""
    paths = {f"{ctx.assets}/{a.dest.rstrip('/')}": a for a in wanted}
    res = ctx.target.exec([*ctx.target.util("sh"), "-c",
                           'for p do [ -e "$p" ] || echo "$p"; done', "sh", *paths],
                          timeout=30, scaled=False)
    absent = set(res.stdout.splitlines()) if res.exit_code == 0 else set(paths)
    return [(a, f"{p} is not in the target") for p, a in paths.items() if p in absent]


def evidence_of(res: ExecResult) -> dict[str, object]:
    """What the host saw of a run, JSON-ready: output sizes and who held which GPU."""
    ev: dict[str, object] = {"stdout_bytes": res.stdout_bytes, "stderr_bytes": res.stderr_bytes,
                             "gpu_evidence_channel": res.gpu_evidence_channel,
                             "gpu_holders": {str(p): g for p, g in res.gpu_holders.items()},
                             "gpu_memory": {str(p): m for p, m in res.gpu_memory.items()},
                             "device_files": {str(p): g for p, g in res.device_files.items()},
                             "holder_cmdlines": {str(p): c for p, c in res.holder_cmdlines.items()}}
    if res.cpu_seconds is not None:
        ev["cpu_seconds"] = res.cpu_seconds
    if res.cpu_wait_seconds is not None:
        ev["cpu_wait_seconds"] = res.cpu_wait_seconds
        if res.cpu_wait_window is not None:
            ev["cpu_wait_window"] = res.cpu_wait_window
    if res.leftovers_killed:
        ev["leftover_processes_killed"] = res.leftovers_killed
    if res.killed_by_host:
        ev["killed_by_host"] = True
    if res.oom_killed:
        ev["oom_killed"] = True
        if res.memory_limit_hit is not None:  # the container's limit, or the machine's memory
            ev["oom_at_own_limit"] = res.memory_limit_hit
    if res.pids_limited:
        ev["pids_limit_hit"] = True
    if res.disk_limited:
        ev["disk_limit_hit"] = True
        ev["disk_used_bytes"] = res.disk_used  # layer, volumes' growth, unlinked open files
    return ev


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])
