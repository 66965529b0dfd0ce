"""How C2 is decided: the CUDA probe's observation and the host's, in one pure function.

The stage (``pyramid/c2_cuda.py``) runs the probe under the report's
interpreter and gathers a ``CudaEvidence`` record.  Compat is the repository's
own official check (``c2_compat.official_c2``, computed from the same
observation).  Strict needs, in this order of blame: a framework that imports
(``deps``), CUDA reported (``cuda_unavailable``), ``is_available()`` not patched
(``cuda_spoofed``), a GPU matmul equal to the CPU's (``kernel_mismatch``), a
build that covers every card's compute capability (``arch_unsupported``), and
the host's own sight of the probe holding a GPU (``no_gpu_evidence``).  A probe
that printed nothing and failed, or ran out of time, is named like a stage's
failure (``stage_messages.categorise``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_reb.evidence import diagnose
from pytest_reb.rules.c2_compat import official_c2
from pytest_reb.rules.decision import Decision, Mode, decided
from pytest_reb.rules.entrypoint_stage import held_any_gpu
from pytest_reb.rules.stage_messages import categorise
from pytest_reb.variants import C2_MAJORITY, C2Variant, Situation

if TYPE_CHECKING:  # the host's record of the probe's command
    from pytest_reb.targets.result import ExecResult


@dataclass(frozen=True)
class CudaEvidence:
    """What C2's stage saw: the probe's JSON line (None: it printed none), the host's record
    of its command, the target's GPU count; how the repository's official check reads
    such a line (``Repo.c2_compat``); and how a probe that printed no line ended
    (``c2_compat.situation``, which the official record of such a run depends on)."""

    observed: dict[str, Any] | None
    res: ExecResult
    gpus_on_target: int
    variant: C2Variant = C2_MAJORITY
    situation: Situation = "silent"


def decide(ev: CudaEvidence, mode: Mode) -> Decision:
    """Strict (``judge``) and compat (the official check) of C2, named, with a diagnosis."""
    obs, res = ev.observed, ev.res
    strict, category, message = judge(obs, held_any_gpu(res))
    official = official_c2(obs, res.exit_code, ev.variant, ev.situation).passed
    if res.timed_out or (obs is None and res.exit_code != 0):
        category = categorise(res)
        message = f"the probe failed: exit {res.exit_code}, {res.stderr.strip()[-300:]}"
    if (official if mode == "compat" else strict):
        return decided(strict, official, mode, category, message)
    return decided(strict, official, mode, category, message, diagnose.cuda_probe(
        obs, category, message, res.output, exit_code=res.exit_code, timed_out=res.timed_out,
        oom_killed=res.oom_killed, gpus_on_target=ev.gpus_on_target))


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


#: C2 failures its probe names exactly: loading every compiled module would add nothing to them.
NAMED_BY_PROBE = frozenset({"cuda_spoofed", "kernel_mismatch", "arch_unsupported",
                            "no_gpu_evidence"})


def sweep_wanted(ev: CudaEvidence, setting: str, gpu_stages_after: bool) -> tuple[bool, str]:
    """Whether C2 sweeps the compiled modules (``pyramid/ext_sweep.py``), and why: the sweep
    decides nothing, it explains, so under ``auto`` it runs where nothing else would.

    ``setting`` is ``--reb-ext-sweep`` (``auto``, ``always``, ``never``);
    ``gpu_stages_after``: this run has a C3 or C4 of the pair to run, which loads the
    repository's own code on the GPU and names whatever of it fails to load.  Under ``auto``
    the sweep runs when the strict C2 failed for a cause its probe cannot name (the framework
    did not import, the probe crashed, hung or printed nothing, a CUDA build found no CUDA on
    a target with GPUs), and when C2 passed and no later tier of the run will load the
    repository's code on the GPU.  It does not run for a CPU-only build or a target without
    GPUs (C1 runs the code on the CPU; nothing of the environment is on trial on a GPU), nor
    for a cause the probe names (a patched check, a wrong result, an architecture missing
    from the build, no CUDA context seen by the host)."""
    if setting == "never":
        return False, "--reb-ext-sweep=never"
    if setting == "always":
        return True, "--reb-ext-sweep=always"
    obs, res = ev.observed, ev.res
    passed, category, _ = judge(obs, held_any_gpu(res))
    if res.timed_out or obs is None or obs.get("framework") == "none":
        return True, "the probe did not reach CUDA: which compiled module fails to load?"
    if passed:
        if gpu_stages_after:
            return False, ("C2 passed, and C3 or C4 of this run loads the repository's own "
                           "code on the GPU")
        return True, "C2 passed, and no later tier of this run loads the repository's code " \
                     "on the GPU"
    if category == "cuda_unavailable":
        if obs.get("framework") == "pytorch" and not obs.get("cuda_build"):
            return False, "a CPU-only build: C2's probe names the cause"
        if ev.gpus_on_target == 0:
            return False, "no GPU on the target: C1 runs the code on the CPU"
        return True, "a CUDA build found no CUDA on a target with GPUs"
    if category in NAMED_BY_PROBE:
        return False, f"C2's probe names the cause ({category})"
    return True, f"C2 failed ({category})"


def arch_supported(capability: str, arch_list: list[str]) -> bool:
    """Whether a build with ``arch_list`` can run on a card of ``capability`` ("9.0").

    A cubin runs on its own major version at an equal or higher minor; PTX
    (``compute_XY``) is compiled by the driver for any card at or above it.
    """
    major, minor = (int(x) for x in capability.split(".")[:2])
    for arch in arch_list:
        kind, _, num = arch.partition("_")
        num = num.rstrip("af")
        if not num.isdigit() or len(num) < 2:
            continue
        a_major, a_minor = int(num[:-1]), int(num[-1])
        if kind == "sm" and a_major == major and a_minor <= minor:
            return True
        if kind == "compute" and (a_major, a_minor) <= (major, minor):
            return True
    return False
