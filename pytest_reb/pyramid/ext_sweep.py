"""The native-extension sweep, host side: run the probe, classify what failed, compare archs.

Informational, recorded on the C2 outcome as ``evidence["native_extensions"]``:
the paper found environment failures concentrated in compiled modules
(``mmcv._ext``, ``flash_attn``), and a C2 that only asks torch for CUDA never
loads them.  The probe (``probes/ext_probe.py``) loads every compiled module
the repository's imports reach, each in a process of its own (forked from one
interpreter per package that imported it once: the package's import is most of a
load's time); here each failure
gets a root-cause class from the same table as every tier (``diagnose.py``),
``pip check`` conflicts become ``version_conflict`` lines, and the GPU
architectures cuobjdump found in each module are set against the card's
(``rules/c2.arch_supported``, which C2 uses for the framework's own build too).

It runs only when C2's own item is selected (``Context.ext_sweep``): C5 asks
for C2's observation, never for the sweep, and a sweep nothing records is
minutes of a multi-GB environment spent for nothing.  Under ``--reb-ext-sweep=auto``
(the default) C2 runs it only where nothing else explains or exercises the compiled
modules (``rules/c2.sweep_wanted``): a C2 failure its probe cannot name, or a passing C2
with no C3 or C4 in the run to load the repository's code on the GPU.  What it loads is the
image's environment on the GPUs the probe saw, so a complete sweep is kept on
the host by the image's id, the interpreter, the checkout and those GPUs
(``imagecache``, like the environment's size), and a later C2 of the same image
on the same cards reads it (``cached: true``); one cut short by its deadline is
never kept.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_reb.evidence.diagnose import diagnose
from pytest_reb.pyramid.context import Context
from pytest_reb.rules.c2 import arch_supported
from pytest_reb.targets import (
    PROBES_DIR,
    PROBES_MOUNT,
    ExecResult,
    bytecode,
    imagecache,
    marked_json,
)

PROBE = f"{PROBES_MOUNT}/ext_probe.py"
MARKER = "REB_EXT_SWEEP"
#: The probe's own deadline, and the host's (which also covers pip check and cuobjdump).
DEADLINE = 240.0
TIMEOUT = 300.0
PER_MODULE = 60.0
JOBS = 4
#: The probe's code is part of the key: a changed sweep is a new reading.
_PROBE_DIGEST = imagecache.code_digest(PROBES_DIR / "ext_probe.py")
#: Load errors of modules only GUI code uses, for a part of the OS's Python a headless image may
#: rightly lack (Tk: ``PIL._imagingtk``): recorded as optional, not as failures.
OPTIONAL = re.compile(r"No module named '_?tkinter'|lib(?:tk|tcl)[\d.]*\.so")


def parse(stdout: str) -> dict[str, Any] | None:
    """The probe's JSON line (the last one wins)."""
    return marked_json(stdout, MARKER)


def classify(error: str) -> tuple[str, str]:
    """Root-cause class and hint of one module's load error."""
    found = diagnose(error, exit_code=1)
    return (found[0].cls, found[0].hint) if found else ("unclassified", "")


def compare_archs(modules: Sequence[Mapping[str, Any]],
                  capabilities: Sequence[str]) -> list[dict[str, Any]]:
    """Per module with device code: its archs, the cards', and whether every card is covered."""
    rows = []
    for m in modules:
        archs = m.get("archs")
        row: dict[str, Any] = {"module": m.get("module"), "archs": archs,
                               "cards": list(capabilities)}
        if m.get("archs_error"):
            row["archs_error"] = m["archs_error"]
        if archs and capabilities:
            unsupported = [c for c in capabilities if not arch_supported(c, archs)]
            row["supported"] = not unsupported
            if unsupported:
                row["unsupported_cards"] = unsupported
        rows.append(row)
    return rows


def summarise(obs: dict[str, Any] | None, *, capabilities: Sequence[str] = (),
              framework_cuda: str | None = None) -> dict[str, Any]:
    """What goes on the C2 outcome: failures with classes, conflicts, archs, counts per class."""
    if obs is None:
        return {"ran": False, "error": "the sweep printed no result"}
    if "error" in obs and "loaded" not in obs:
        return {"ran": False, "error": obs["error"]}
    failed, optional = [], []
    for row in obs.get("failed") or []:
        if not isinstance(row, dict):
            continue
        cls, hint = classify(str(row.get("error", "")))
        entry = {k: row.get(k) for k in ("module", "dist", "error", "kind")
                 if row.get(k) is not None}
        entry.update({"class": cls, "hint": hint})
        if row.get("needed"):
            entry["needed"] = row["needed"]
        (optional if OPTIONAL.search(str(row.get("error", ""))) else failed).append(entry)
    pip = obs.get("pip_check") or {}
    conflicts = [line for line in pip.get("lines") or [] if isinstance(line, str)]
    arch_rows = compare_archs(obs.get("with_device_code") or [], capabilities)
    for row in arch_rows:
        if row.get("supported") is False:
            failed.append({"module": row["module"], "class": "gpu_arch",
                           "error": f"compiled for {', '.join(row['archs'])}; the card is sm "
                                    f"{', '.join(row['unsupported_cards'])}",
                           "hint": "install a build of this package compiled for the card's "
                                   "architecture (or with PTX for an older one)"})
    cuda_mismatch = []
    if framework_cuda:
        major = framework_cuda.split(".")[0]
        for module, runtime in (obs.get("cuda_runtimes") or {}).items():
            if str(runtime) != major:
                cuda_mismatch.append(f"{module} links libcudart.so.{runtime}; the framework "
                                     f"is built for CUDA {framework_cuda}")
    for line in cuda_mismatch:
        failed.append({"module": line.split(" ", 1)[0], "class": "abi_mismatch", "error": line,
                       "hint": "install the extension's build for the framework's CUDA"})
    classes = Counter(f["class"] for f in failed)  # the optional ones are no failure
    classes.update(classify(line)[0] for line in conflicts)
    return {
        "ran": True,
        "checked": len(obs.get("loaded") or []) + len(obs.get("failed") or []),
        "loaded": len(obs.get("loaded") or []),
        "failed": failed,
        "optional_missing": optional,
        "not_tried": obs.get("not_tried") or [],
        "pip_check": ("ran" if pip.get("ran") else pip.get("why") or "not run"),
        "conflicts": conflicts,
        "device_code": arch_rows,
        "cuobjdump": obs.get("cuobjdump"),
        "classes": dict(sorted(classes.items())),
        "distributions": len(obs.get("distributions") or []),
        "imports_without_distribution": obs.get("imports_without_distribution") or [],
        "loaded_by_c2_probe": len(obs.get("loaded_by_c2_probe") or []),
        "seconds": obs.get("seconds"),
    }


#: The most characters of the C2 probe's module list passed on (the spec is one argv string,
#: which Linux caps at 128 KiB): what the probe printed is the image's, so it is bounded here.
LOADED_CHARS = 32000


def _bounded(loaded: Mapping[str, Any]) -> dict[str, str]:
    kept: dict[str, str] = {}
    size = 0
    for module, path in loaded.items():
        if not (isinstance(module, str) and isinstance(path, str)):
            continue
        size += len(module) + len(path) + 6
        if size > LOADED_CHARS:
            break
        kept[module] = path
    return kept


def complete(obs: dict[str, Any] | None) -> bool:
    """Whether a sweep's reading may be kept: it ran to its end, every module tried."""
    return (isinstance(obs, dict) and "error" not in obs and isinstance(obs.get("loaded"), list)
            and not obs.get("not_tried"))


def run(ctx: Context, *, capabilities: Sequence[str] = (), framework_cuda: str | None = None,
        loaded: Mapping[str, str] | None = None, gpus_seen: Any = None) -> dict[str, Any]:
    """Run the sweep under the report's interpreter (GPU profile, where C2 runs).

    ``loaded`` are the compiled modules the C2 probe's interpreter loaded (module -> real
    path): the sweep counts those as loaded instead of importing torch once more for each in
    a process of its own.  ``gpus_seen`` is what the probe saw of the cards (part of the
    key of the kept reading: an extension's load depends on the card and its driver)."""
    if ctx.python is None:
        return {"ran": False, "error": "no interpreter to sweep"}
    image = imagecache.image_id(ctx.target)
    parts = (ctx.checkout, ctx.python, str(len(ctx.target.gpus)),
             json.dumps(gpus_seen, sort_keys=True, default=str), _PROBE_DIGEST)
    kept = imagecache.load("ext-sweep", image, parts)
    if complete(kept):
        return {**summarise(kept, capabilities=capabilities, framework_cuda=framework_cuda),
                "cached": True}
    spec = {"checkout": ctx.checkout, "per_module": ctx.target.scaled(PER_MODULE),
            "deadline": ctx.target.scaled(DEADLINE), "jobs": JOBS,
            "loaded": _bounded(loaded or {})}
    res = _swept(ctx, spec)
    obs = parse(res.stdout)
    out = summarise(obs, capabilities=capabilities, framework_cuda=framework_cuda)
    if not out["ran"]:
        out["exit_code"] = res.exit_code
        out["timed_out"] = res.timed_out
        out["stderr_tail"] = res.stderr[-1000:]
    elif res.exit_code == 0 and not res.timed_out and complete(obs):
        imagecache.store("ext-sweep", image, parts, obs)
    return out


def _swept(ctx: Context, spec: Mapping[str, Any]) -> ExecResult:
    """The probe's run, reading the bytecode the host keeps for the image and writing what
    it compiles into a folder of its own (``Target.stage_bytecode``): its servers import
    much of the same (every ``scipy`` subpackage imports ``scipy.linalg``), so each source
    is compiled once, not once per server, where the image carries no bytecode.  The folder
    goes afterwards; what is in it is never kept (the stages keep what they compile)."""
    env = ctx.target.stage_bytecode("gpu", ctx.target.gpus)
    try:
        return ctx.target.exec([ctx.python, ctx.target.tool(PROBE), json.dumps(spec)],
                               timeout=TIMEOUT, env=env, profile="gpu")
    finally:
        folder = bytecode.stage_folder(env)
        if folder is not None:
            ctx.target.remove_paths([folder], profile="gpu")
