"""Compat C2: the official cuda stage's verdict and ``observed`` block, per repository.

The 44 official ``check_cuda_available.py`` were written one by one: most
trust ``torch.cuda.is_available()`` alone, some also want a device, some run
the framework in a child process and judge its exit status.  ``--reb-compat``
must pass C2 where the repository's own check passes it, and the official
validators (C5) read the block that check writes, so both are derived here
from the same evidence, our probe's output and exit status, by the variant the
repository's ``repos/`` module states (``Repo.c2_compat``, a ``spec.C2Variant``).
``tools/compat_c2_differential.py`` checks every statement against its script.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_reb.spec import C2_MAJORITY, C2Variant


@dataclass(frozen=True)
class OfficialC2:
    """What the repository's official cuda stage would have made of our probe's evidence.

    ``written`` is False where the official check could not have run at all
    (the interpreter printed nothing a Python with our probe prints): the
    official stage then leaves no ``results.json``.
    """

    passed: bool
    observed: dict[str, Any] | None
    written: bool = True


def official_c2(obs: dict[str, Any] | None, exit_code: int | None,
                variant: C2Variant = C2_MAJORITY) -> OfficialC2:
    """The official verdict and block from the probe's JSON line and exit status."""
    if obs is None:  # no Python ran our probe, so none ran the official check either
        return OfficialC2(False, None, written=False)
    block = dict(obs)  # the probe's block, where the official one differs overridden
    if obs.get("framework") == "none":  # the probe's own exit 3 says only this
        if variant.no_framework == "absent":
            block = {k: v for k, v in block.items() if k not in ("cuda_available", "gpu_count")}
        elif variant.no_framework == "null":
            block |= {"cuda_available": None, "gpu_count": None}
        return OfficialC2(False, block)
    passed = obs.get("cuda_available") is True
    if exit_code not in (0, None) and variant.failed_exit != "ignored":
        passed = False
        if variant.failed_exit == "unavailable":
            block |= {"cuda_available": False, "gpu_count": 0}
        elif variant.failed_exit == "nulls":
            block |= {"cuda_available": None, "gpu_count": None}
    count = obs.get("gpu_count")
    if passed and isinstance(count, int) and count < 1 and variant.no_device != "passes":
        passed = False
        if variant.no_device == "unavailable":
            block["cuda_available"] = False
    return OfficialC2(passed, block)
