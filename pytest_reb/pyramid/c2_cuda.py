"""C2 CUDA alignment: the framework sees the GPU and a real kernel runs on it.

The official check was ``torch.cuda.is_available()``, which a ``sitecustomize``
can make return True on a machine with no GPU.  Strict C2 also needs: a
matmul on the GPU equal to the CPU's, a build that supports the card's compute
capability, and the host's own observation that the probe process opened a
GPU device.  The probe's output is evidence; the host's observation is proof.
This module runs the probe and gathers a ``CudaEvidence`` record; C2 is decided
in ``rules/c2.py``.
"""

from __future__ import annotations

from typing import Any

from pytest_reb.outcome import Outcome
from pytest_reb.pyramid import ext_sweep
from pytest_reb.pyramid.answers import PYTHON_MARKER, Answered
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.entrypoint import evidence_of
from pytest_reb.rules.c2 import CudaEvidence, decide, sweep_wanted
from pytest_reb.rules.c2_compat import official_c2, situation, unanswered
from pytest_reb.rules.decision import mode_of
from pytest_reb.targets import PROBES_MOUNT, marked_json

PROBE = f"{PROBES_MOUNT}/cuda_probe.py"
MARKER = "REB_CUDA_PROBE"
#: The probe's line of compiled modules it loaded, which the extension sweep need not load again.
LOADED_MARKER = "REB_CUDA_PROBE_LOADED"
TIMEOUT = 120.0


def parse(stdout: str) -> dict[str, Any] | None:
    """The probe's JSON line (the last one wins)."""
    return marked_json(stdout, MARKER)


def probe(ctx: Context) -> Outcome:
    """Run the probe under the report's interpreter in the GPU profile."""
    if ctx.python is None:
        record = unanswered("no_python", ctx.repo.c2_compat)  # the bundle's own check's
        o = ctx.outcome("c2", category="missing_report", strict=False, compat=record.passed,
                        message=ctx.report.message)
        o.evidence = {"official_cuda": record.evidence()}
        return ctx.verdict(o)
    # Strict asks in a fresh container of the image (the twin, where C5's strict question is
    # asked too), so the probe also answers C5's challenge (``answers.py``); compat keeps the
    # official order, in the target after C1.
    where = ctx.target if ctx.compat else ctx.target.twin() or ctx.target
    nonce = None if ctx.compat else ctx.answers.challenge()
    with ctx.leases.hold(len(ctx.target.gpus)) as gpus:  # it must see every GPU to count them
        answered: Answered | None = None
        try:
            res = where.exec([ctx.python, where.tool(PROBE), *([nonce] if nonce else [])],
                             timeout=TIMEOUT, env=ctx.target.kept_bytecode(), profile="gpu",
                             gpus=gpus)
            if nonce:
                answered = Answered(ctx.python, nonce, res.stdout, res.stderr, res.exit_code,
                                    res.timed_out)
        finally:
            if nonce:  # given (or settled) before the lease goes: C5 waits outside its own
                ctx.answers.give(answered)
    obs = parse(res.stdout)
    said = "".join(line for line in res.stdout.splitlines(keepends=True)
                   if not line.startswith(PYTHON_MARKER + " "))  # C5's lines are not C2's
    how = situation(python=True, exit_code=res.exit_code, timed_out=res.timed_out,
                    stdout=said, stderr=res.stderr)
    if obs is None and how == "not_executable" and where.exec(
            [*where.util("sh"), "-c", 'test -d "$1"', "sh", ctx.python],
            timeout=15.0).exit_code == 0:
        how = "directory"  # the exec error does not tell a folder from a file
    official = official_c2(obs, res.exit_code, ctx.repo.c2_compat, how)  # its own check
    o = ctx.outcome("c2", command=res.argv, exit_code=res.exit_code, timed_out=res.timed_out,
                    duration=round(res.duration, 3), stdout_tail=res.stdout[-4000:],
                    stderr_tail=res.stderr[-4000:])
    o.evidence = {"observed": obs, "gpus_on_target": len(ctx.target.gpus), **evidence_of(res),
                  "official_cuda": official.evidence()}
    seen = CudaEvidence(obs, res, len(ctx.target.gpus), ctx.repo.c2_compat, how)
    o = decide(seen, mode_of(ctx.compat)).onto(o)
    if ctx.ext_sweep == "never":
        return o
    sweep, why = sweep_wanted(seen, ctx.ext_sweep, ctx.gpu_stages_after)
    if not sweep:
        o.evidence["native_extensions"] = {"ran": False, "skipped": why}
    else:
        o.evidence["native_extensions"] = ext_sweep.run(
            ctx, capabilities=[str(d.get("capability")) for d in (obs or {}).get("devices") or []],
            framework_cuda=(obs or {}).get("cuda_build"),
            loaded=marked_json(res.stdout, LOADED_MARKER),
            gpus_seen={k: (obs or {}).get(k) for k in ("framework", "cuda_build",
                                                       "cuda_available", "gpu_count",
                                                       "devices")})
        o.evidence["native_extensions"]["why"] = why
    return o
