"""The known-fakes scan: what an agent may plant to make an environment look ready.

The paper's "capability hallucination" has cheap recipes: a ``sitecustomize``
or ``.pth`` hook that makes ``torch.cuda.is_available()`` true, an importable
``flash_attn`` with no kernels in it, a ``python`` or ``nvidia-smi`` that is a
shell script printing what a checker wants to read.  None of them can pass a
strict tier (the host watches the GPU, the nonce probe asks the interpreter),
but a person reading a failed C2 wants to know they are there, so they are
looked for and recorded on the C2 outcome as ``findings``: informational, but for
one: a startup hook that no installed distribution owns (``findings``).

The rules live in the probe (``probes/fakes_probe.py``) and run twice:

* inside the target, under the report's interpreter: it alone knows its
  ``sys.path``, the import hooks installed at startup, and whether
  ``torch.cuda``'s queries were replaced before any code ran;
* on the host, over the target's files seen from outside (``hostview.py``):
  what a lying interpreter cannot hide.  The directories it looks at are the
  report interpreter's own (found from its path, outside) plus those the
  inside run named.

A finding seen from the host wins over the same one seen from inside.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import posixpath
import re
from functools import cache
from types import ModuleType
from typing import Any

from pytest_reb.evidence.findings import HOOK_KINDS
from pytest_reb.targets import PROBES_DIR, PROBES_MOUNT, Target, hostview, marked_json

PROBE = f"{PROBES_MOUNT}/fakes_probe.py"
TIMEOUT = 60.0
#: Directories from the inside run that the host also looks at (the rest is ignored).
MAX_INSIDE_DIRS = 200
DEFAULT_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


@cache
def rules() -> ModuleType:
    """The probe's rules, loaded as a module on the host (it is not a package)."""
    spec = importlib.util.spec_from_file_location("reb_fakes_probe", PROBES_DIR / "fakes_probe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse(stdout: str) -> dict[str, Any] | None:
    """The probe's JSON line (the last one wins; it is evidence from inside, not proof)."""
    return marked_json(stdout, rules().MARKER)


def scan(target: Target, python: str, checkout: str | None = None,
         trusted: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Findings about ``python``'s environment on ``target``: host-seen first, then inside-only.

    A startup hook's owner and digest are the host's reading; a digest in ``trusted``
    (``--reb-trust-hook``) is owned by the machine's operator.
    """
    inside = _inside(target, python, checkout)
    view = hostview.view(target, target.gpus)
    found: list[dict[str, Any]] = []
    if view is not None:
        dirs = _site_dirs(view, python) + _strings(inside.get("site_dirs"))
        dirs += _strings(inside.get("sys_path")) + ([checkout] if checkout else [])
        path_dirs = _path_dirs(target, inside, python)
        try:
            for f in rules().scan(view, [python], dirs[:MAX_INSIDE_DIRS], path_dirs,
                                  bool(view.has_gpu_devices)):
                found.append({**f, "seen_from": "host"})
        except (OSError, ValueError) as exc:  # the container went away under the scan
            found.append({"kind": "scan_incomplete", "path": python, "seen_from": "host",
                          "detail": f"the host's scan stopped: {type(exc).__name__}: {exc}"})
    known = {(f["kind"], f["path"]) for f in found}
    for f in inside.get("findings") or []:
        if not isinstance(f, dict) or not all(isinstance(f.get(k), str)
                                               for k in ("kind", "path", "detail")):
            continue
        if (f["kind"], f["path"]) in known:
            continue
        known.add((f["kind"], f["path"]))
        found.append({"kind": f["kind"][:60], "path": f["path"][:500],
                      "detail": f["detail"][:500], "seen_from": "target"})
    for item in found:  # who owns a hook is the host's reading, never the target's
        if item["kind"] in HOOK_KINDS:
            # the host's own scan read the owner already (``hook_findings`` over the view)
            known_owner = item.get("owner") if item["seen_from"] == "host" else None
            item["owner"], item["sha256"] = _owner(view, item["path"], trusted,
                                                   known_owner, item["seen_from"] == "host")
    if inside.get("error"):
        found.append({"kind": "scan_incomplete", "path": python, "detail": inside["error"],
                      "seen_from": "host"})
    return found


def _owner(view: hostview.HostView | None, path: str, trusted: frozenset[str],
           known: str | None = None, read: bool = False) -> tuple[str | None, str | None]:
    """(who owns ``path``, the sha256 of its bytes), read from the host: a distribution that
    lists it with its hash, the operator when its digest is trusted, else nobody; (None,
    None) when the host cannot read the target's files. ``read``: the host's scan already
    looked the owner up (``known``), so the RECORD and dpkg lists are not read twice."""
    if view is None or not path.startswith("/"):
        return None, None
    try:
        data = view.read(path, rules().MAX_HOOK_BYTES)
        if data is None:
            return None, None
        digest = hashlib.sha256(data).hexdigest()
        if digest in trusted:
            return "the operator (--reb-trust-hook)", digest
        return (known if read else rules().owner(view, path)), digest
    except (OSError, ValueError):
        return None, None


def _inside(target: Target, python: str, checkout: str | None) -> dict[str, Any]:
    spec = json.dumps({"python": python, "checkout": checkout})
    res = target.exec([python, target.tool(PROBE), spec], timeout=TIMEOUT, profile="gpu")
    data = parse(res.stdout)
    if data is None:
        said = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["nothing"]
        how = "timed out" if res.timed_out else f"exit {res.exit_code}"
        return {"error": f"the scan could not run under {python} ({how}: {said[0][:200]}); "
                         "only the host's view was scanned"}
    return data


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v.startswith("/") and len(v) < 4096]


def _site_dirs(view: hostview.HostView, python: str) -> list[str]:
    """The interpreter's library directories, found from its path alone (venv, conda, system)."""
    prefixes = [posixpath.dirname(posixpath.dirname(python))]
    real = view.resolve(python)
    if real is not None:
        prefixes.append(posixpath.dirname(posixpath.dirname(real)))
    out: list[str] = []
    for prefix in dict.fromkeys(prefixes):
        for sub in ("lib", "lib64", "local/lib"):
            base = f"{prefix.rstrip('/')}/{sub}"
            for name in view.listdir(base):
                if re.fullmatch(r"python3(\.\d+)?", name):
                    lib = f"{base}/{name}"
                    out += [lib, f"{lib}/site-packages", f"{lib}/dist-packages"]
    return out


def _path_dirs(target: Target, inside: dict[str, Any], python: str) -> list[str]:
    """PATH as the target's commands get it (the image's), the inside run's, the defaults."""
    dirs = list(_image_path(target)) + _strings(inside.get("path")) + list(DEFAULT_PATH)
    dirs.append(posixpath.dirname(python))
    return list(dict.fromkeys(dirs))


def _image_path(target: Target) -> list[str]:
    """The image's own ``ENV PATH`` (none where the target is no image)."""
    return [d for d in (target.image_env("PATH") or "").split(":") if d.startswith("/")]
