"""How a repository's official checks depart from the majority: the compat vocabulary.

The official release judged each repository with its own copy of the cuda
check and of the report validator, and the copies differ.  A ``repos/``
module states its repository's departures with these two records, and the
compat rules (``rules/c2_compat.py``, ``rules/c5_compat.py``) read them; they
are plain frozen data, with no logic beyond checking their own spelling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: How an official validator reads a version claim (see ``CompatVariant``).
ClaimText = Literal["nonempty", "string", "truthy", "text", "text_any", "text_null"]


@dataclass(frozen=True)
class CompatVariant:
    """How a repository's official C5 validator departs from the majority algorithm.

    The 44 official validators were written one by one (reference §8.2), so
    ``--reb-compat`` must judge each report by its own repository's rules;
    they are stated here, in the module, not in a table in the package.  The
    defaults are the majority.  ``tools/compat_differential.py`` checks every
    bundle's statement against its official script.

    A claim is read as: ``nonempty`` (a non-empty string), ``string`` (any
    string, ``""`` too), ``truthy`` (``str()`` of a value that is not falsy,
    so ``3`` is ``"3"`` and ``0`` no claim), ``text`` (``str()`` of any
    non-null value that is not blank), ``text_any`` (``str()`` of any non-null
    value, ``""`` too) or ``text_null`` (``str()`` of anything, so ``null`` is
    the text ``"None"``).  ``torch_import``: when a failed ``import torch``
    counts: ``if_claimed`` (the claim as read), ``always`` (even for
    ``torch_version: null``), ``if_nonblank`` (a string that is not blank),
    ``if_not_null`` (any value but ``null``, ``""`` too), ``never``.
    ``cuda_from``: what says CUDA is unavailable: ``status`` (the cuda stage
    failed or its observed block says false), ``observed`` (only the observed
    block), ``observed_bool`` (``bool()`` of the block's value: null is false),
    ``observed_if_success`` (only a stage that succeeded).
    ``probe_garbage``: what a JSON torch probe that exits 0 without printing a
    JSON object means: ``failed`` (a failed import), ``item`` (an item of its
    own, and the torch version is ``""``), ``ignored`` (torch imported, its
    version unknown).  ``runs_missing``: what the validator still runs when
    its file check found no ``python_path``: ``no``thing, the ``version``
    probe, or ``both`` probes; a bare name (``python3``) then runs through
    ``PATH``, and a path that is nowhere fails to run (one more item).
    ``ddp_excused``: the ``failure_category`` values of a failed multi_gpu
    stage after which this validator leaves a ``ddp_expected_ok`` claim unjudged.
    """

    # the report file
    missing_report_path: int = 0  # path hallucinations counted for no report file
    invalid_report_path: int = 0  # ... for a report that is not a JSON object
    non_object_crash: bool = False  # a JSON array, string or number stops the validator
    non_object_empty: bool = False  # ... or it is read as ``{}`` (so python_path is missing)
    non_object_dict: bool = False  # ``dict(report)``: ``[]`` and ``""`` are ``{}`` (others stop it)
    empty_report_missing: bool = False  # ``{}`` is taken for no report (``if not report``)
    empty_report_unchecked: bool = False  # ``{}`` is judged on nothing: no item, it passes
    # the interpreter
    strip_path: bool = False
    path_text: bool = False  # ``str()`` of any python_path value: ``3`` is the path "3"
    directory_crash: bool = False  # a directory as python_path stops the validator
    missing_path_weight: int = 1  # how many items a python_path that does not exist adds
    noexec_path_weight: int = 1  # ... one that is not executable
    missing_path_stops: bool = False  # no python_path: that item alone, nothing else judged
    runs_missing: Literal["no", "version", "both"] = "no"
    silent_python_ok: bool = True  # exit 0 with nothing printed is a usable interpreter
    silent_python_crash: bool = False  # ... or it stops the validator (an IndexError)
    torch_needs_version: bool = True  # torch is probed only after the version probe worked
    torch_needs_file: bool = False  # ... or, where it need not, only for a file (no directory)
    torch_path_as_written: bool = False  # the torch probe runs python_path unstripped
    # versions
    version_claim: ClaimText = "nonempty"
    compare_empty_observed: bool = False  # a probe that printed nothing is a version, ""
    version_strip: bool = False
    torch_claim: ClaimText = "nonempty"
    torch_strip: bool = False
    torch_import: Literal["if_claimed", "if_nonblank", "if_not_null", "always", "never"] = \
        "if_claimed"
    torch_import_weight: int = 1  # how many items a failed import adds
    torch_failed_claim_item: bool = False  # ... and one more when torch_version is claimed
    torch_compare_empty: bool = False  # a torch version probed as "" is compared too
    # a torch claim with no interpreter to probe is a failure: never, always, or with_path
    # (only when python_path was a non-empty string: the probe ran and failed)
    torch_unprobed: Literal["never", "always", "with_path"] = "never"
    silent_torch_ok: bool = True  # a torch probe that exits 0 printing nothing imported torch
    torch_probe: Literal["plain", "json"] = "plain"
    probe_garbage: Literal["failed", "item", "ignored"] = "failed"  # exit 0, no JSON printed
    # capabilities
    capabilities_need_python: bool = False  # judged only when the interpreter was usable
    cuda_from: Literal["status", "observed", "observed_bool", "observed_if_success"] = "status"
    cuda_claim: Literal["true", "text", "truthy"] = "true"  # also ``"true"``; or anything truthy
    gpu_count_coerce: bool = False  # ``int()`` of the claim (``"2"``, ``1.0``)
    gpu_coerce_crash: bool = False  # a claim ``int()`` refuses, beside a count, stops it
    gpu_from: Literal["stage", "stage_or_probe", "probe_or_stage", "probe"] = "stage"
    # the cuda stage's count: as is (an int), ``int()`` of it (True), of a float only
    # ("numbers"), of a string of digits only ("digits")
    gpu_observed_coerce: Literal[False, True, "numbers", "digits"] = False
    gpu_null_zero: bool = False  # ``int(count or 0)``: a null count the stage wrote is 0
    gpu_absent_zero: bool = False  # ``.get("gpu_count", 0)``: a stage's block without it is 0
    c2_meta_unobserved: bool = False  # a cuda stage failed on its report observed nothing
    gpu_default: int | None = None  # the count taken when none was observed (a dict default)
    gpu_needs_cuda_ok: bool = False  # the count is judged only when the cuda stage succeeded
    # a gpu_count claim is judged only beside a cuda stage: its file (whatever count was
    # then taken), or a block that gave the count itself; the count still serves ddp
    gpu_needs_stage: Literal[False, "file", "block"] = False
    # with no cuda stage (file, or one skipped), cuda_available from the validator's own
    # torch probe ("probe"); or, where the stage gave no cuda_available or no count, both
    # from that probe ("probe_pair")
    cuda_fallback: Literal["none", "probe", "probe_pair"] = "none"
    # a cuda stage written without an ``observed`` block: no observation ("unobserved"), or
    # CUDA as the stage's exit status and the count 0 ("status_zero")
    no_block: Literal["unobserved", "status_zero"] = "unobserved"
    # ... or failed of one of these (also for ``cuda_from="observed_if_success"``)
    cuda_valid_failures: frozenset[str] = frozenset()
    ddp_claim: Literal["true", "truthy"] = "true"  # ``is True``, or ``bool()`` of a present key
    ddp_without_count: bool = False  # ddp is judged with no GPU count observed
    ddp_excused: frozenset[str] = frozenset()
    ddp_needs_command: bool = False  # a multi_gpu stage that ran no command is no verdict
    ddp_underclaim: bool = False

    @property
    def torch_questions(self) -> frozenset[str]:
        """The official torch questions this validator reads (``plain``, ``json``): the others
        are not asked, since each costs an ``import torch`` in the target."""
        asked = {self.torch_probe}
        if self.gpu_from != "stage" or self.cuda_fallback != "none":
            asked.add("json")  # the device count (or CUDA) read from the JSON probe
        return frozenset(asked)


#: The majority of the official validators; a repository that states no variant is judged so.
MAJORITY = CompatVariant()


#: How a C2 probe ended without printing its answer, as the tier saw it.
Situation = Literal["no_python", "missing", "not_executable", "directory", "timeout", "crashed",
                    "failed", "silent", "garbage"]
SITUATIONS: tuple[Situation, ...] = ("no_python", "missing", "not_executable", "directory",
                                     "timeout", "crashed", "failed", "silent", "garbage")
#: The ``observed`` block of an unanswered stage, by its spelling in a record.
BLOCKS: dict[str, dict[str, Any] | None] = {
    "false": {"cuda_available": False, "gpu_count": 0},  # the checks' default
    "null": {"cuda_available": None, "gpu_count": None},
    "empty": {},  # ``json.loads(stdout or "{}")``: a block without the two keys
    "none": None,  # no ``observed`` at all
}
#: A record: ``"<failure_category>"`` (the block ``false``) or ``"<category>:<block>"``,
#: the category ``success`` for a stage that passed; None where the official stage leaves
#: no ``results.json``; ``"hang"`` where it never ends (the check imports torch in its own
#: process, with no timeout), so the official run stops at its global timeout before any
#: later stage, its validator included.
Record = str | None
HANG = "hang"


@dataclass(frozen=True)
class C2Variant:
    """How a repository's official cuda check departs from the majority; defaults are it.

    ``no_device``: what ``is_available()`` true with ``device_count()`` 0
    (a patched answer on a CPU build) means: ``passes`` (the majority trusts
    it), ``fails`` (the check also wants a device: the block as printed, the
    stage failed), ``unavailable`` (the check writes ``cuda_available:
    false``).  ``failed_exit``: a probe that printed its answer and then
    exited non-zero: ``ignored`` (the check ran in-process and had written
    its results first), ``fails`` (it judges a child's exit status: the block
    as printed, the stage failed), ``unavailable`` (it discards the child's
    output: ``false`` and 0), ``nulls`` (it writes both as ``null``), ``empty``
    (it raises on the exit status and writes the empty block it started with).
    ``no_framework``: the block when no framework imports: ``false`` (false
    and 0), ``absent`` (neither key), ``null`` (both ``null``).

    The remaining fields are the record (``Record``) of each ``Situation``:
    ``no_python`` (the report names no usable ``python_path``), ``missing``
    (no such file), ``not_executable`` (a file without the execute bit),
    ``directory``,
    ``timeout``, ``crashed`` (killed, nothing printed on either stream),
    ``failed`` (a non-zero exit that said something on stderr), ``silent``
    (exit 0, nothing printed), ``garbage`` (exit 0, no JSON answer).
    """

    no_device: Literal["passes", "fails", "unavailable"] = "passes"
    failed_exit: Literal["ignored", "fails", "unavailable", "nulls", "empty"] = "ignored"
    no_framework: Literal["false", "absent", "null"] = "false"
    no_python: Record = "runtime"
    missing: Record = None
    not_executable: Record = None
    directory: Record = None
    timeout: Record = "hang"
    crashed: Record = None
    failed: Record = None
    silent: Record = None
    garbage: Record = None

    def __post_init__(self) -> None:
        for name in SITUATIONS:
            record = getattr(self, name)
            if record not in (None, HANG) and record.partition(":")[2] not in ("", *BLOCKS):
                raise ValueError(f"C2Variant.{name}: unknown block in {record!r}")


#: The majority of the official cuda checks; a repository that states no variant is judged so.
C2_MAJORITY = C2Variant()
