"""Environment size: how big the report interpreter's prefix is (an efficiency figure, not a tier).

The official ``env_size`` stage ran the reported interpreter for ``sys.prefix``
and summed ``st_size`` under it; 22 of its bundles wrote ``0`` when that failed
and the aggregate averaged the zero as a real sample.  Here a measurement that
did not happen is ``unknown`` with its reason, never a number, and a file with
several hard links counts once.  The figure is the interpreter's own account
of its prefix (like the official one); no verdict depends on it.

An image's prefix is the same in every container made from it, so the walk
runs once per image and interpreter: the figure is cached on the host by the
image's id (``imagecache``: ``$XDG_CACHE_HOME/pytest-reb/env-size``), and a later C5 of that
image reads it (``cached: true``).  Targets without an image (``local://``,
``ssh://``) are walked every time.
"""

from __future__ import annotations

from typing import Any

from pytest_reb.targets import PROBES_DIR, PROBES_MOUNT, Target, imagecache, marked_json

PROBE = f"{PROBES_MOUNT}/env_size_probe.py"
MARKER = "REB_ENV_SIZE"
#: The official env_size stage's timeout.
TIMEOUT = 120.0
MIB = 1 << 20
_COUNTS = ("bytes", "disk_bytes", "files", "hardlinks_skipped", "unreadable", "other_filesystems")


def unknown(python: str | None, reason: str) -> dict[str, Any]:
    """The evidence of a size that could not be measured."""
    return {"status": "unknown", "python": python, "bytes": None, "reason": reason}


def parse(stdout: str) -> dict[str, Any] | None:
    """The probe's line (the last one wins), with only well-typed fields kept."""
    found = marked_json(stdout, MARKER)
    if found is None:
        return None
    out: dict[str, Any] = {k: found[k] for k in _COUNTS
                           if type(found.get(k)) is int and found[k] >= 0}
    for key in ("prefix", "executable", "version", "error"):
        if isinstance(found.get(key), str):
            out[key] = found[key][:4096]
    if isinstance(found.get("site_packages"), list):
        out["site_packages"] = [p[:4096] for p in found["site_packages"][:32]
                                if isinstance(p, str)]
    return out


#: The probe's code is part of the key: a changed walk is a new figure.
_PROBE_DIGEST = imagecache.code_digest(PROBES_DIR / "env_size_probe.py")


def measure(target: Target, python: str) -> dict[str, Any]:
    """The size of ``python``'s prefix in ``target``: cached per image, else walked by the
    probe; ``unknown`` on any failure (never cached)."""
    image, parts = imagecache.image_id(target), (python, _PROBE_DIGEST)
    kept = imagecache.load("env-size", image, parts)
    if isinstance(kept, dict) and kept.get("status") == "measured":
        return {**kept, "cached": True}
    found = _walk(target, python)
    if found["status"] == "measured":
        imagecache.store("env-size", image, parts, found)
    return found


def _walk(target: Target, python: str) -> dict[str, Any]:
    res = target.exec([python, "-I", target.tool(PROBE)], timeout=TIMEOUT, cwd="/")
    if res.timed_out:
        return unknown(python, f"the walk of its prefix ran past {target.scaled(TIMEOUT):g}s")
    data = parse(res.stdout)
    if res.exit_code != 0 or data is None:
        tail = (res.stderr or res.stdout).strip()[-300:]
        return unknown(python, f"the size probe failed (exit {res.exit_code}): {tail}".rstrip())
    if "bytes" not in data:
        return {**unknown(python, data.get("error", "the probe printed no size")), **data,
                "bytes": None}
    return {"status": "measured", "python": python, **data, "mib": round(data["bytes"] / MIB),
            "duration": round(res.duration, 3)}
