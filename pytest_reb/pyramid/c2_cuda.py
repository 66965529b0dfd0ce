"""C2 CUDA alignment: the framework sees the GPU and a real kernel runs on it.

The official check was ``torch.cuda.is_available()``, which a ``sitecustomize``
can make return True on a machine with no GPU.  Strict C2 also needs: a
matmul on the GPU equal to the CPU's, a build that supports the card's compute
capability, and the host's own observation that the probe process opened a
GPU device.  The probe's output is evidence; the host's observation is proof.
"""

from __future__ import annotations

from typing import Any

from pytest_reb.evidence import diagnose
from pytest_reb.outcome import Outcome
from pytest_reb.pyramid import ext_sweep
from pytest_reb.pyramid.context import Context
from pytest_reb.pyramid.entrypoint import evidence_of
from pytest_reb.pyramid.ext_sweep import arch_supported
from pytest_reb.rules.c2_compat import official_c2, situation, unanswered
from pytest_reb.rules.gpu_rules import held_any_gpu
from pytest_reb.rules.stage_messages import categorise
from pytest_reb.targets import PROBES_MOUNT, marked_json

PROBE = f"{PROBES_MOUNT}/cuda_probe.py"
MARKER = "REB_CUDA_PROBE"
#: The probe's line of compiled modules it loaded, which the extension sweep need not load again.
LOADED_MARKER = "REB_CUDA_PROBE_LOADED"
TIMEOUT = 120.0


def parse(stdout: str) -> dict[str, Any] | None:
    """The probe's JSON line (the last one wins)."""
    return marked_json(stdout, MARKER)


def judge(obs: dict[str, Any] | None, holder_problem: str | None) -> tuple[bool, str | None, str]:
    """The strict verdict, its category and a message a person can act on."""
    if obs is None:
        return False, "runtime", "the probe printed no result"
    if obs.get("framework") == "none":
        return False, "deps", "no framework is importable: " + "; ".join(
            f"{k}={v}" for k, v in obs.items() if k.endswith("_error"))
    if not obs.get("cuda_available"):
        errors = "; ".join(f"{k}={v}" for k, v in obs.items() if k.endswith("_error"))
        return False, "cuda_unavailable", (
            f"{obs.get('framework')} reports no CUDA device" + (f" ({errors})" if errors else ""))
    kernel = obs.get("kernel") or {}
    if obs.get("spoof"):
        outcome = ("failed: " + str(kernel.get("error")) if not kernel.get("ok")
                   else "ran, but on the CPU: the host saw no GPU used" if holder_problem
                   else "matched")
        return False, "cuda_spoofed", (
            f"torch.cuda.is_available() returned True, but {'; '.join(obs['spoof'])}: "
            f"is_available() was patched (a sitecustomize, .pth or usercustomize hook?). "
            f"The GPU kernel ({kernel.get('op', 'matmul')}) {outcome}. The official probe "
            "trusts is_available(), so compat passes it where this repository's check does")
    if not kernel.get("ok"):
        return False, "kernel_mismatch", (
            f"CUDA is reported, but the GPU kernel failed or disagreed with the CPU: "
            f"{kernel.get('error') or kernel.get('max_rel_error')}")
    arch_list = obs.get("arch_list")
    for dev in obs.get("devices") or []:
        if arch_list is not None and not arch_supported(str(dev.get("capability")), arch_list):
            return False, "arch_unsupported", (
                f"GPU {dev.get('index')} ({dev.get('name')}, sm {dev.get('capability')}) is "
                f"not in the build's architectures {arch_list}")
    if holder_problem:
        return False, "no_gpu_evidence", (
            "the probe says CUDA works, but the host never saw it open a GPU device: "
            + holder_problem)
    return True, None, "a kernel ran on the GPU and matched the CPU"


def probe(ctx: Context) -> Outcome:
    """Run the probe under the report's interpreter in the GPU profile."""
    if ctx.python is None:
        record = unanswered("no_python", ctx.repo.c2_compat)  # the bundle's own check's
        o = ctx.outcome("c2", category="missing_report", strict=False, compat=record.passed,
                        message=ctx.report.message)
        o.evidence = {"official_cuda": record.evidence()}
        return ctx.verdict(o)
    with ctx.leases.hold(len(ctx.target.gpus)) as gpus:  # it must see every GPU to count them
        res = ctx.target.exec([ctx.python, ctx.target.tool(PROBE)], timeout=TIMEOUT,
                              env=ctx.target.kept_bytecode(), profile="gpu", gpus=gpus)
    obs = parse(res.stdout)
    holder_problem = held_any_gpu(res)
    strict, category, message = judge(obs, holder_problem)
    how = situation(python=True, exit_code=res.exit_code, timed_out=res.timed_out,
                    stdout=res.stdout, stderr=res.stderr)
    if obs is None and how == "not_executable" and ctx.target.exec(
            [*ctx.target.util("sh"), "-c", 'test -d "$1"', "sh", ctx.python],
            timeout=15.0).exit_code == 0:
        how = "directory"  # the exec error does not tell a folder from a file
    official = official_c2(obs, res.exit_code, ctx.repo.c2_compat, how)  # its own check
    o = ctx.outcome("c2", command=res.argv, exit_code=res.exit_code, timed_out=res.timed_out,
                    duration=round(res.duration, 3), stdout_tail=res.stdout[-4000:],
                    stderr_tail=res.stderr[-4000:], strict=strict,
                    compat=official.passed)
    o.evidence = {"observed": obs, "gpus_on_target": len(ctx.target.gpus), **evidence_of(res),
                  "official_cuda": official.evidence()}
    if res.timed_out or (obs is None and res.exit_code != 0):
        category = categorise(res)
        message = f"the probe failed: exit {res.exit_code}, {res.stderr.strip()[-300:]}"
    o.category, o.message = category, message
    o = ctx.verdict(o)
    if o.status == "failed":
        o.diagnosis = diagnose.cuda_probe(obs, o.category, o.message, res.output,
                                          exit_code=res.exit_code, timed_out=res.timed_out,
                                          oom_killed=res.oom_killed,
                                          gpus_on_target=len(ctx.target.gpus))
    if ctx.ext_sweep:
        o.evidence["native_extensions"] = ext_sweep.run(
            ctx, capabilities=[str(d.get("capability")) for d in (obs or {}).get("devices") or []],
            framework_cuda=(obs or {}).get("cuda_build"),
            loaded=marked_json(res.stdout, LOADED_MARKER),
            gpus_seen={k: (obs or {}).get(k) for k in ("framework", "cuda_build",
                                                       "cuda_available", "gpu_count",
                                                       "devices")})
    return o
