"""Why a tier failed: root-cause classes recognised from evidence, each with a hint.

The failure *category* of an outcome is the official coarse vocabulary
(``deps``, ``runtime``, ``oom``...).  A *diagnosis* says what broke underneath,
in the classes the ResearchEnvBench analysis found failures concentrated in:
compiled extensions, version coupling, auxiliary toolchains.  Every failed
tier C0-C4 carries a list of them on ``Outcome.diagnosis``; a run's summary
counts them per class, per tier and per agent.

The classifier is the ordered table ``RULES`` below, read with these rules:

1. What the host observed comes first and needs no text: a run killed at its
   timeout is ``timeout``; a run the kernel's OOM killer ended is
   ``out_of_memory``.
2. The output is read line by line.  A line is claimed by the *first* rule of
   the table whose pattern it matches, so the more specific rules stand
   earlier (``undefined symbol`` inside an ``ImportError`` is an ABI mismatch,
   not a missing package; a CUDA runtime library that cannot be opened is a
   wrong build, any other library a missing system library).
3. A rule with ``context`` applies only when that pattern also occurs
   somewhere in the output: a bare name "not found" is a *program* only when
   ``subprocess`` (or the target's exec) was the one looking for it.
4. Each class matched gives one ``Diagnosis``: the last ``MAX_EVIDENCE``
   distinct lines it was recognised from (each cut to ``MAX_LINE``
   characters) and the hint of the rule that matched the last of them, with
   the names the pattern captured filled in.
5. Order: host observations, then classes by their last evidence line, the
   latest first (the fatal error of a traceback is its last line); classes
   seen only in warning lines come after those seen in errors.
6. A failed run that no rule explains gets one ``unclassified`` diagnosis
   with its last lines, so the counts say how much the table does not cover.
   Exit 137 (SIGKILL) with nothing else to explain it is ``out_of_memory``,
   marked as inferred: it is the OOM killer's signal.

Outcomes whose failure is not the environment's (no report, too few GPUs,
an integrity finding, a run that never proved GPU use) are not diagnosed:
see ``NOT_DIAGNOSED``.

One module, a little over this project's usual size: the ordered table and the
reader that applies it are one thing, and the order of the table is its meaning.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_reb.evidence.diagnose_names import (
    DEBIAN_PACKAGE_OF,
    DISTRIBUTION_OF,
    PACKAGE_OF_TOOL,
    distribution_of,
)
from pytest_reb.evidence.tracebacks import launcher_summary, rank_exception, said_lines
from pytest_reb.outcome import one_line

MAX_EVIDENCE = 3
MAX_LINE = 300
#: How much of a run's output is read (the end of it: that is where the error is).
MAX_TEXT = 64 * 1024

#: Every root-cause class, with what it means (the terminal and the docs print these).
CLASSES: dict[str, str] = {
    "missing_package": "a Python package the code imports is not installed",
    "native_extension": "a package's compiled module is missing or was never built",
    "abi_mismatch": "a compiled module was built against another library, torch, CUDA or Python",
    "gpu_arch": "the build has no kernels for this GPU's architecture",
    "cuda_build": "the framework cannot use CUDA: a CPU-only build or a driver too old for it",
    "version_conflict": "installed versions do not fit together (pins, removed APIs)",
    "system_dependency": "a program or system library outside Python is missing",
    "missing_asset": "a checkpoint, dataset or other file is not where the code looks",
    "out_of_memory": "the run ran out of host or GPU memory",
    "timeout": "the run did not finish within its timeout",
    "distributed": "distributed setup failed: NCCL, rendezvous, ports, process groups",
    "unclassified": "no rule of the table explains the failure",
}

#: Categories whose failure is not the environment's doing: no diagnosis.
NOT_DIAGNOSED = frozenset({
    "missing_report", "invalid_report", "insufficient_hardware", "not_applicable", "infra",
    "integrity", "no_gpu_evidence", "no_gpu_compute", "gpu_work_not_entrypoint",
    "entrypoint_not_run",
    "pyright_wrong_interpreter", "path_hallucination",
    "version_hallucination", "capability_hallucination",
})

_CUDA_LIBS = (r"lib(?:cudart|cublas\w*|cudnn\w*|cufft\w*|curand|cusparse\w*|cusolver\w*|nvrtc\w*"
              r"|nccl|nvToolsExt|nvJitLink|c10\w*|torch\w*|caffe2\w*|shm)")
_TOOLS = r"ffmpeg|ffprobe|sox|espeak(?:-ng)?|nvcc|ninja|gcc|g\+\+|cc|c\+\+|make|cmake|git|java"
_WARNING = re.compile(r"\b\w*Warning\b|^\s*warn(?:ing)?[:\s]", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    """One row of the table: lines matching ``pattern`` (in ``context``) are ``cls``.

    ``hint`` is one line a person can act on; ``{name}`` placeholders are
    filled from the pattern's named groups (and the derived ``{dist}``,
    ``{deb}``, ``{pkg}``), or from ``fallback`` when a group did not match.
    """

    cls: str
    pattern: str
    hint: str
    context: str | None = None
    fallback: Mapping[str, str] = field(default_factory=dict)


RULES: tuple[Rule, ...] = (
    # -- distributed setup (before memory and CUDA rules: NCCL messages mention both)
    Rule("distributed", r"\bNCCL (?:error|WARN|INFO.*(?:failed|error))|nccl\w*Error|"
         r"ProcessGroupNCCL.*(?:error|timed? ?out|abort)|Watchdog caught collective operation",
         "NCCL failed between the ranks: run with NCCL_DEBUG=INFO; check that each rank has its "
         "own GPU, shm is large enough, and NCCL matches the torch build"),
    Rule("distributed", r"Rendezvous\w*(?:Error|Timeout|Closed)|DistNetworkError|"
         r"TCPStore.*(?:failed|timed? ?out|refused)|Gloo connectFullMesh failed|"
         r"Connection refused.*(?:MASTER|store)|Default process group has not been initialized|"
         r"environment variable (?:MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE) expected",
         "the ranks never formed a group: launch with torchrun (or set MASTER_ADDR, MASTER_PORT, "
         "RANK, WORLD_SIZE) and make sure every rank reaches the same rendezvous"),
    Rule("distributed", r"Address already in use|EADDRINUSE",
         "a port the run binds is taken: pick a free MASTER_PORT (or --master_port)"),
    # -- out of memory
    Rule("out_of_memory", r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|"
         r"cudaErrorMemoryAllocation|CUDA error: out of memory",
         "the GPU ran out of memory: lower the batch size or resolution, or use a larger GPU"),
    Rule("out_of_memory", r"\bMemoryError\b|std::bad_alloc|Cannot allocate memory|"
         r"(?:^|\s)Killed\s*$|Out of memory: Killed process",
         "the host ran out of memory: lower the batch size or workers, or raise the memory "
         "limit (--reb-memory)"),
    # -- GPU architecture not in the build
    Rule("gpu_arch", r"no kernel image is available for execution on the device|"
         r"cudaErrorNoKernelImageForDevice|invalid device function|"
         r"(?P<arch>sm_\d+a?) is not compatible with the current PyTorch installation|"
         r"CUDA capability (?P<cap>sm_\d+a?) is not compatible|"
         r"Unsupported gpu architecture '(?P<gencode>compute_\d+a?)'",
         "the compiled kernels do not include this GPU's architecture: install a build whose "
         "arch list has the card ({arch}), or rebuild with TORCH_CUDA_ARCH_LIST set to it",
         fallback={"arch": "see C2's arch_list and native_extensions"}),
    # -- framework without CUDA
    Rule("cuda_build", r"Torch not compiled with CUDA enabled|"
         r"(?:NVIDIA driver on your system is too old|CUDA driver version is insufficient)|"
         r"is not compiled with GPU support|compiled without CUDA support",
         "the framework cannot use CUDA: install its CUDA build (torch +cuXXX matching the "
         "driver), not the CPU-only wheel"),
    # -- ABI: built against something else than what is installed
    Rule("abi_mismatch", r"undefined symbol: (?P<symbol>\S+)",
         "a compiled module calls {symbol}, which the installed library does not export: "
         "rebuild or reinstall it against the installed torch/CUDA/library versions"),
    Rule("abi_mismatch", rf"(?P<lib>{_CUDA_LIBS}\.so[\w.]*): cannot open shared object file",
         "a compiled module was built for another torch/CUDA build ({lib} is not there): "
         "install the extension's build that matches the installed torch and CUDA"),
    Rule("abi_mismatch", r"version `(?P<lib>(?:GLIBC|GLIBCXX|CXXABI)\w*_[\d.]+)' not found",
         "a compiled module needs {lib}, newer than the image's C/C++ runtime: use a wheel "
         "built for this distribution or a newer base image"),
    Rule("abi_mismatch", r"compiled using NumPy 1\.x cannot be run in|_ARRAY_API not found|"
         r"numpy\.core\.multiarray failed to import|module compiled against (?:ABI|API) version|"
         r"numpy\.dtype size changed, may indicate binary incompatibility",
         "a compiled module was built against another NumPy major: pin numpy<2 or install "
         "builds made against NumPy 2"),
    Rule("abi_mismatch", r"operator (?P<op>(?P<pkg>torchvision|torchaudio|torchtext)::\w+) "
         r"does not exist",
         "{pkg} was built for another torch ({op} is not registered: its compiled ops did not "
         "load): install the {pkg} release made for the installed torch (the pairs are listed "
         "in {pkg}'s README), from the same index and CUDA build"),
    Rule("abi_mismatch", r"detected CUDA version \([\d.]+\) mismatches the version that was "
         r"used to compile|compiled with different CUDA (?:major )?versions|"
         r"Couldn't load custom C\+\+ ops|dynamic module does not define module export function|"
         r"wrong ELF class|invalid ELF header|the import crashed with signal",
         "a compiled module does not fit this interpreter or torch/CUDA build: reinstall the "
         "build made for them"),
    # -- compiled module missing or never built
    Rule("native_extension",
         r"No module named '(?P<module>[\w.]+\._\w*|\w+_(?:cuda|C|ext|ops|cpp|kernels?))'",
         "{module} is a compiled module that is not there: reinstall its package (a build "
         "matching the installed torch/CUDA if it has GPU code), or build it in place "
         "(setup.py build_ext --inplace)"),
    Rule("native_extension",
         r"cannot import name '(?P<module>_\w*)' from|C-extensions? failed|"
         r"(?:build|compile) the (?:C\+\+ |CUDA )?extensions?|Error building extension '\w+'|"
         r"Failed to load (?:the )?(?:CUDA|C\+\+|custom) (?:extension|ops?)|MMCV_WITH_OPS|"
         r"listed in the distribution's RECORD but absent",
         "a compiled part of a package is missing or failed to build: reinstall the package from "
         "a build matching torch/CUDA, or build its extensions"),
    # -- version coupling
    Rule("version_conflict",
         r"has requirement (?P<req>.+?), but you have (?P<have>.+?)\.?$|"
         r"requires (?P<req2>.+?), but you have (?P<have2>.+?) which is incompatible",
         "installed versions contradict a declared pin: install versions that satisfy every "
         "requirement (pip check lists them) instead of forcing one with --no-deps"),
    Rule("version_conflict", r"\b(?:Contextual)?VersionConflict\b|ResolutionImpossible|"
         r"is required for a normal functioning of this module, but found",
         "installed versions contradict a declared requirement: install the versions the "
         "package asks for"),
    Rule("version_conflict",
         r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'|"
         r"(?<!initialized )module '(?P<module2>[\w.]+)' has no attribute '(?P<name2>\w+)'",
         "{module} is a version without {name} (an API that moved or was removed): install the "
         "version the code was written for",
         fallback={"module": "a module", "name": "the name"}),
    # -- programs and system libraries
    Rule("system_dependency",
         r"exec: \"(?P<tool>[^\"]+)\": executable file not found|"
         r"cannot start: .*No such file or directory: '(?P<tool2>[^']+)'|"
         rf"No such file or directory: '(?P<tool3>{_TOOLS})'|"
         r"^(?:/bin/)?(?:ba|da)?sh: (?:\d+: )?(?:line \d+: )?(?P<tool4>[\w.+/-]+): "
         r"(?:command )?not found",
         "the program {tool} is not installed in the environment: install it (Debian: {pkg})"),
    Rule("system_dependency", r"No such file or directory: '(?P<tool>[^'/]+)'",
         "the program {tool} is not installed in the environment: install it (Debian: {pkg})",
         context=r"_execute_child|subprocess\.|os\.exec|spawn"),
    Rule("system_dependency", r"(?P<lib>[\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object "
         r"file|cannot load library '?(?P<lib2>[\w.+-]+)|"
         r"Could not (?:find|load) (?:the )?(?:shared )?library '?(?P<lib3>[\w.+-]+)|"
         r"(?P<lib4>sndfile) library not found",
         "the system library {lib} is missing: install the package that ships it "
         "(Debian: {deb})"),
    Rule("system_dependency", r"error: command '(?P<tool>[^']+)' failed|"
         r"unable to execute '(?P<tool2>[^']+)'|(?P<tool3>espeak) not installed|"
         r"(?:Couldn't|Cannot|could not) find (?P<tool4>ffmpeg|espeak(?:-ng)?|sox)|"
         r"(?P<cuda>CUDA_HOME) environment variable is not set|(?P<tool5>Ninja) is required",
         "a build or media tool is missing ({tool}): install it (Debian: {pkg})",
         fallback={"tool": "nvcc: set CUDA_HOME to a CUDA toolkit"}),
    # -- assets
    Rule("missing_asset", r"LocalEntryNotFoundError|RepositoryNotFoundError|GatedRepoError|"
         r"offline mode is enabled|Cannot find the requested files in the (?:disk )?cache|"
         r"We couldn't connect to|does not appear to have a file named|is not a local folder and "
         r"is not a valid model identifier|Temporary failure in name resolution|"
         r"Name or service not known|Network is unreachable|Failed to establish a new connection|"
         r"MaxRetryError|urlopen error",
         "the run wanted to download a model or dataset, and the target has no network: stage "
         "it beforehand under {{assets}} (or the cache the code reads) and point the code at it"),
    Rule("missing_asset", r"No such file or directory: '(?P<path>[^']+)'|"
         r"(?:checkpoint|weights?|dataset|data file|model file)s? (?:not found|does not exist)",
         "{path} is not there: download or generate the asset first (see the repository's "
         "README) and put it where the code reads it",
         fallback={"path": "a file the run needs"}),
    # -- a stdlib module the OS's Python ships separately (not a pip package)
    Rule("system_dependency", r"No module named '(?P<tool>_?tkinter|_gdbm|_dbm|distutils)'",
         "{tool} is part of the OS's Python, shipped separately: install it with the system's "
         "package manager (Debian: {pkg}), not pip"),
    # -- package missing (last of the import rules: the specific ones above win)
    Rule("missing_package", r"No module named '(?P<module>[\w.]+)'",
         "install the distribution that provides '{module}' ({dist}) into the report's "
         "interpreter"),
    Rule("missing_package", r"No package metadata was found for (?P<module>[\w.-]+)|"
         r"The '(?P<module2>[^']+)' distribution was not found|"
         r"requires the (?P<module3>[\w-]+) library but it was not found in your environment|"
         r"requires (?P<module4>[\w.-]+), which is not installed",
         "install the distribution {module} into the report's interpreter"),
)

@functools.cache
def _compiled() -> tuple[tuple[Rule, re.Pattern[str], re.Pattern[str] | None], ...]:
    """The rules' patterns, compiled at the first diagnosis rather than at import: a run
    imports this module before its first command, and most tiers never fail."""
    return tuple((r, re.compile(r.pattern), re.compile(r.context) if r.context else None)
                 for r in RULES)


@dataclass
class Diagnosis:
    """One root-cause class of a failure, what it was recognised from, and what to do."""

    cls: str
    evidence: list[str]
    hint: str

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "evidence": list(self.evidence), "hint": self.hint}


@dataclass
class _Seen:
    rule: Rule
    match: re.Match[str]
    lines: list[str] = field(default_factory=list)
    last: int = -1
    in_error: bool = False


def _cut(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..."


def _hint(rule: Rule, match: re.Match[str]) -> str:
    """The rule's hint with the captured names (``name2`` fills ``name``) filled in."""
    values: dict[str, str] = dict(rule.fallback)
    for key, value in match.groupdict().items():
        if value:
            values[key.rstrip("0123456789")] = value
    module = values.get("module", "")
    values.setdefault("dist", DISTRIBUTION_OF.get(module) or DISTRIBUTION_OF.get(
        module.split(".")[0]) or "usually of the same name")
    tool = values.get("tool", "")
    values.setdefault("pkg", PACKAGE_OF_TOOL.get(tool.rsplit("/", 1)[-1], tool or "?"))
    lib = values.get("lib", "")
    stem = re.sub(r"(\.so)[\d.]*$", r"\1", lib)
    values.setdefault("deb", DEBIAN_PACKAGE_OF.get(stem) or "apt-file search " + (lib or "it"))
    for key in re.findall(r"(?<!\{)\{(\w+)\}(?!\})", rule.hint):
        values.setdefault(key, "?")
    return rule.hint.format(**values)


def classify_line(line: str, text: str = "") -> tuple[Rule, re.Match[str]] | None:
    """The first rule that claims ``line`` (``text`` is the whole output, for contexts)."""
    for rule, pattern, context in _compiled():
        m = pattern.search(line)
        if m and (context is None or context.search(text)):
            return rule, m
    return None


def diagnose(output: str, *, exit_code: int | None, timed_out: bool = False,
             oom_killed: bool = False, oom_at_limit: bool | None = None,
             tier: str = "") -> list[Diagnosis]:
    """The root causes of a failed run, most likely first (see the module's rules).

    ``oom_at_limit`` False: the OOM kill came before the target's own memory limit was
    reached, so the machine's memory ran out, and raising the limit would not help."""
    del tier  # the same table serves every tier; kept in the signature for callers' clarity
    host: list[Diagnosis] = []
    if timed_out:
        host.append(Diagnosis("timeout", [f"host: the run was killed at its timeout "
                                          f"(exit {exit_code})"],
                              "the run needs longer than its timeout: check for a hang (a "
                              "download without network, a rank waiting for others), or raise "
                              "--reb-timeout-scale"))
    if oom_killed and oom_at_limit is False:
        host.append(Diagnosis("out_of_memory", ["host: the kernel's OOM killer ended a process "
                                                f"of the run (exit {exit_code}) before the "
                                                "target's own memory limit was reached"],
                              "the machine ran out of memory, not the target's limit: run "
                              "fewer targets at once (-n) or on a machine with more memory"))
    elif oom_killed:
        host.append(Diagnosis("out_of_memory", ["host: the kernel's OOM killer ended a process "
                                                f"of the run (exit {exit_code})"],
                              "the run needs more memory than the target's limit: lower the "
                              "batch size or workers, or raise --reb-memory"))
    text = output[-MAX_TEXT:]
    seen: dict[str, _Seen] = {}
    for index, raw in enumerate(text.splitlines()):
        line = raw.strip()
        if not line or line.startswith("[... "):
            continue
        found = classify_line(line, text)
        if found is None:
            continue
        rule, match = found
        entry = seen.get(rule.cls)
        if entry is None:
            entry = seen[rule.cls] = _Seen(rule, match)
        cut = _cut(line)
        if cut in entry.lines:
            entry.lines.remove(cut)
        entry.lines.append(cut)
        entry.rule, entry.match, entry.last = rule, match, index
        entry.in_error = entry.in_error or not _WARNING.search(line)
    host_classes = {d.cls for d in host}
    ordered = sorted((e for c, e in seen.items() if c not in host_classes),
                     key=lambda e: (e.in_error, e.last), reverse=True)
    found_list = host + [Diagnosis(e.rule.cls, e.lines[-MAX_EVIDENCE:], _hint(e.rule, e.match))
                         for e in ordered]
    for d in found_list:
        if d.cls == "missing_package":
            importer = _importer(text)
            if importer:
                d.evidence.append(importer)
    for d in host:  # text lines that agree with the host's observation are its evidence too
        if d.cls in seen:
            d.evidence.extend(seen[d.cls].lines[-(MAX_EVIDENCE - 1):])
    if not found_list and exit_code in (137, -9):
        found_list.append(Diagnosis("out_of_memory", [f"host: exit {exit_code} (SIGKILL) and "
                                                      "nothing else explains it (inferred)"],
                                    "a SIGKILL is what the OOM killer sends: raise "
                                    "--reb-memory or lower the run's memory use"))
    if not found_list and exit_code not in (0, None):
        launcher = launcher_summary(text)  # a launch's last lines are its launcher's fields
        last = [_cut(ln) for ln in ([rank_exception(text), launcher] if launcher
                                    else said_lines(text)[-2:]) if ln]
        found_list.append(Diagnosis("unclassified", last or [f"exit {exit_code}, no output"],
                                    "no rule of the table explains this failure: read the "
                                    "log tail"))
    return found_list


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
#: Frames that are never the importer to blame: our shims, the import system, installed code.
_NOT_THE_IMPORTER = re.compile(r"^<|/benchmark_scripts/|/shimlib/|/site-packages/|"
                               r"/dist-packages/|/lib/python3\.\d+/")


def _importer(text: str) -> str | None:
    """The traceback line of the repository's file that imported the missing module: the
    last traceback's innermost frame that is neither ours nor installed code, verbatim.  A
    shim that imports a dependency before the repository does never takes the blame: with
    only such frames, no file is named."""
    block = text.rsplit("Traceback (most recent call last):", 1)
    if len(block) < 2:
        return None
    frames = [m for m in map(_FRAME.match, block[1].splitlines()) if m]
    own = [m for m in frames if not _NOT_THE_IMPORTER.search(m.group("file"))]
    return _cut(own[-1].string) if own else None


def as_json(diagnoses: Iterable[Diagnosis]) -> list[dict[str, Any]]:
    return [d.to_json() for d in diagnoses]


def for_run(category: str | None, output: str, *, exit_code: int | None, timed_out: bool,
            oom_killed: bool, tier: str, oom_at_limit: bool | None = None
            ) -> list[dict[str, Any]]:
    """``Outcome.diagnosis`` of a failed entrypoint run (none for failures not the env's)."""
    if category in NOT_DIAGNOSED:
        return []
    return as_json(diagnose(output, exit_code=exit_code if exit_code is not None else 1,
                            timed_out=timed_out, oom_killed=oom_killed,
                            oom_at_limit=oom_at_limit, tier=tier))


# --------------------------------------------------------------------------- structured evidence


def missing_packages(missing: Sequence[str], where: Mapping[str, str] | None = None,
                     python: str | None = None,
                     installed: Mapping[str, Sequence[str]] | None = None
                     ) -> list[dict[str, Any]]:
    """C0: the imports pyright could not resolve are missing packages.

    The hint names distributions, not import names: first what the
    environment's installed metadata says provides the name (``installed``:
    ``packages_distributions()``), then the curated map, then the name itself.
    """
    if not missing:
        return []
    where = where or {}
    lines = [f"import {name} unresolved ({where[name]})" if name in where
             else f"import {name} unresolved" for name in missing[:MAX_EVIDENCE]]
    if len(missing) > MAX_EVIDENCE:
        lines.append(f"... and {len(missing) - MAX_EVIDENCE} more: "
                     + _cut(", ".join(missing[MAX_EVIDENCE:])))
    dists = [distribution_of(n, installed) for n in missing]
    return [Diagnosis("missing_package", lines,
                      f"install {', '.join(dists[:6])}{' ...' if len(dists) > 6 else ''} into "
                      f"{python or 'the report interpreter'}").to_json()]


def cuda_probe(obs: Mapping[str, Any] | None, category: str | None, message: str,
               output: str, *, exit_code: int | None, timed_out: bool, oom_killed: bool,
               gpus_on_target: int) -> list[dict[str, Any]]:
    """C2: what the CUDA probe's observation says about why CUDA does not work here."""
    if category in NOT_DIAGNOSED or category is None:
        return []
    errors = "\n".join(f"{v}" for k, v in (obs or {}).items() if k.endswith("_error"))
    if category == "arch_unsupported":
        return [Diagnosis("gpu_arch", [_cut(message)], "install a build whose arch list has "
                          "this card (or PTX for an older arch), e.g. a newer torch wheel for "
                          "this CUDA").to_json()]
    if obs is not None and category == "cuda_spoofed":
        return [Diagnosis("cuda_build", [*obs.get("spoof", []), _cut(message)],
                          "remove the hook that patches torch.cuda.is_available() and install "
                          "torch's CUDA build (+cuXXX, matching the host driver)").to_json()]
    if obs is not None and category == "cuda_unavailable":
        framework = obs.get("framework")
        if framework == "pytorch" and not obs.get("cuda_build"):
            return [Diagnosis("cuda_build", [f"torch {obs.get('torch_version')}: "
                                             "torch.version.cuda is None (a CPU-only build)"],
                              "install torch's CUDA build (+cuXXX, matching the host driver) "
                              "instead of the CPU-only wheel").to_json()]
        if gpus_on_target == 0:
            return []  # a CUDA build on a target without GPUs: the hardware, not the env
    if obs is not None and category == "kernel_mismatch":
        kernel = obs.get("kernel") or {}
        errors = f"{errors}\n{kernel.get('error') or ''}"
    text = f"{output}\n{errors}\n{message}"
    return as_json(diagnose(text, exit_code=exit_code if exit_code not in (None, 0) else 1,
                            timed_out=timed_out, oom_killed=oom_killed, tier="c2"))


def explain(diagnosis: Iterable[Mapping[str, Any]], *, said: str = "", evidence: int = 1) -> str:
    """Lines for a failure message: each class with its hint and its last evidence line(s).

    Evidence the message already shows (``said``) is not repeated.  Each line is one line
    of data (``one_line``): evidence lines are the target's output and names.
    """
    lines = []
    for d in diagnosis:
        lines.append(one_line(f"  root cause {d.get('class')}: {d.get('hint')}"))
        lines.extend(one_line(f"    seen: {line}") for line in
                     list(d.get("evidence") or [])[-evidence:] if line not in said)
    return "\n".join(lines)


# --------------------------------------------------------------------------- across a run
