"""What the claimed interpreter is, read by the host from the target's files (strict C5).

The nonce probe proves that code of the claimed interpreter ran; it cannot
prove that the code told the truth.  A ``.pth`` file runs before the probe and
can make ``platform.python_version()`` and ``torch.__version__`` say anything,
for the probe's ``-c`` commands only.  So strict also reads, from the host and
without running anything in the target (``hostview``, the container frozen),
the files that decide those answers for a real interpreter:

- the Python version: the version in the file name of the resolved
  interpreter (``python3.11``), the standard library folders under its prefix
  (``lib/python3.11/os.py``: what that interpreter imports at start), and a
  venv's ``pyvenv.cfg``;
- the torch version: every torch install the interpreter could import (the
  venv's and the base prefix's site folders, the user site, the folders the
  path lines of their ``.pth`` files add, the image's ``PYTHONPATH``), each as
  its ``torch/version.py`` and its distribution's metadata say.

These files are the image's, so a determined image can forge them too, but
only before the run and all of them consistently; none of them is written by
code answering the probe.  A claim that no host fact supports, or a probe
answer that none supports, is a contradiction, and strict fails it.  A torch
answer where the host found no torch install at all, in every place the
interpreter finds packages, is one too: that torch came from something no file
of an install supports (an import hook, a path added by code), so "no fact"
never confirms a version.  Where the host cannot read the files at all (no
host view: ``ssh://``), the claim is inconclusive, never confirmed.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_reb.targets import hostview

if TYPE_CHECKING:
    from pytest_reb.targets import Target

_MAJOR_MINOR = re.compile(r"python(\d+\.\d+)$")
_CFG_VERSION = re.compile(rb"^\s*(?:version|version_info)\s*=\s*(\d+\.\d+(?:\.\d+)?)",
                          re.MULTILINE)
_TORCH_VERSION = re.compile(rb"^__version__\s*=\s*['\"]([^'\"\n]{1,100})['\"]", re.MULTILINE)
_META_VERSION = re.compile(rb"^Version:\s*(\S{1,100})\s*$", re.MULTILINE)
#: Site folders tried under each prefix, with ``{v}`` the interpreter's major.minor.
_SITE_DIRS = ("lib/python{v}/site-packages", "lib/python{v}/dist-packages",
              "local/lib/python{v}/dist-packages", "local/lib/python{v}/site-packages",
              "lib/python3/dist-packages", "lib64/python{v}/site-packages")
_USER_SITES = ("/root/.local/lib/python{v}/site-packages",)
#: How much of a site folder's ``.pth`` files is read (files per folder, bytes per file).
_PTH_FILES, _PTH_BYTES = 200, 1 << 16


@dataclass
class TorchInstall:
    """One torch the interpreter could import: where, and the version each file gives."""

    folder: str
    versions: dict[str, str] = field(default_factory=dict)  # source file -> version

    def supports(self, version: str) -> bool:
        """This install is ``version``: its ``version.py`` says so and, where it has
        distribution metadata, one of them does too, up to the local part where the metadata
        has none (an edited ``version.py`` beside the wheel's own metadata supports nothing)."""
        code = [v for src, v in self.versions.items() if src.endswith("/version.py")]
        meta = [v for src, v in self.versions.items() if not src.endswith("/version.py")]
        # PyPI takes no local versions: its CUDA wheels say ``2.11.0`` in their metadata and
        # ``2.11.0+cu130`` in version.py, so metadata without a local part names the public one
        public = version.split("+", 1)[0]
        return bool(self.versions) and all(v == version for v in code) and \
            (not meta or any(m == version or ("+" not in m and m == public) for m in meta))


@dataclass
class HostFacts:
    """The host's read of an interpreter; empty fields are facts it could not find."""

    path: str
    resolved: str | None = None
    #: major.minor versions the interpreter's own files allow, and the file saying each
    major_minor: dict[str, str] = field(default_factory=dict)
    #: full versions named by a venv's pyvenv.cfg, and the file
    full: dict[str, str] = field(default_factory=dict)
    torch: list[TorchInstall] = field(default_factory=list)
    #: every folder looked in for torch, in the order the interpreter would
    searched: list[str] = field(default_factory=list)
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def python_contradiction(self, version: str) -> str | None:
        """Why the host's facts rule ``version`` out as this interpreter's, or None."""
        version = version.strip()
        mm = ".".join(version.split(".")[:2])
        if self.major_minor and mm not in self.major_minor:
            said = ", ".join(f"{v} ({src})" for v, src in sorted(self.major_minor.items()))
            return f"the interpreter's own files say Python {said}"
        wrong = {v: src for v, src in self.full.items() if v != version}
        if wrong and len(wrong) == len(self.full):
            said = ", ".join(f"{v} ({src})" for v, src in sorted(wrong.items()))
            return f"the interpreter's venv says Python {said}"
        return None

    def torch_contradiction(self, version: str) -> str | None:
        """Why no torch install the host found is ``version``, or None (none found: no fact)."""
        found = [t for t in self.torch if t.versions]
        if not found:
            return None if self.problem else (
                f"no torch install is on the target's disk in any of the {len(self.searched)} "
                "folders the interpreter finds packages in (site folders, their .pth path "
                "lines, the user site, PYTHONPATH)")
        if any(t.supports(version.strip()) for t in found):
            return None
        said = "; ".join(f"{t.folder}: " + ", ".join(
            f"{v} ({posixpath.basename(src) if 'dist-info' not in src else 'METADATA'})"
            for src, v in sorted(t.versions.items())) for t in found[:4])
        return f"the torch installs on the target's disk say {said}"


def read(target: Target, python_path: str) -> HostFacts:
    """The host's facts about ``python_path`` in ``target``, read with the container frozen."""
    facts = HostFacts(python_path)
    try:
        with hostview.frozen(target) as view:
            if view is None:
                facts.problem = "the host cannot see this target's files"
                return facts
            return from_view(view, python_path, target.own_env("PYTHONPATH") or "")
    except Exception as exc:  # a host-side read never decides a verdict by crashing
        facts.problem = f"the host-side read failed: {type(exc).__name__}: {str(exc)[:200]}"
    return facts


def from_view(view: hostview.HostView, python_path: str, pythonpath: str = "") -> HostFacts:
    """The facts about ``python_path`` in a view of the target's files (``pythonpath``: the
    image's ``PYTHONPATH``, whose folders are searched for torch too)."""
    facts = HostFacts(python_path)
    resolved = view.resolve(facts.path)
    facts.resolved = resolved
    if resolved is None:
        facts.problem = "the interpreter is not on the target's disk"
        return facts
    named = _MAJOR_MINOR.search(posixpath.basename(resolved))
    if named:
        facts.major_minor[named.group(1)] = resolved
    prefixes: list[str] = []
    venv = posixpath.dirname(posixpath.dirname(facts.path))
    cfg = view.read(posixpath.join(venv, "pyvenv.cfg"), 1 << 14)
    if cfg is not None:
        prefixes.append(venv)
        for found in _CFG_VERSION.findall(cfg):
            facts.full[found.decode()] = posixpath.join(venv, "pyvenv.cfg")
    base = posixpath.dirname(posixpath.dirname(resolved))
    prefixes.append(base)
    if not named:  # the stdlib folders under the base prefix name the version instead
        for name in view.listdir(posixpath.join(base, "lib")):
            mm = _MAJOR_MINOR.search(name)
            if mm and view.stat(posixpath.join(base, "lib", name, "os.py")) is not None:
                facts.major_minor[mm.group(1)] = posixpath.join(base, "lib", name)
    versions = sorted(facts.major_minor) or ["3"]
    folders: list[str] = []
    for v in versions:
        for prefix in dict.fromkeys([*prefixes, "/usr", "/usr/local"]):
            folders += [posixpath.join(prefix, d.format(v=v)) for d in _SITE_DIRS]
        folders += [u.format(v=v) for u in _USER_SITES]
    sites: list[str] = []
    for folder in folders:
        where = view.resolve(folder)  # lib64 is often a link to lib: one install, once
        if where is not None and where not in sites:
            sites.append(where)
    added = [p for site in sites for p in pth_paths(view, site)]
    for folder in [*sites, *added, *(p for p in pythonpath.split(":") if p.startswith("/"))]:
        where = view.resolve(folder)
        if where is None or where in facts.searched:
            continue
        facts.searched.append(where)
        install = _torch_in(view, where)
        if install is not None:
            facts.torch.append(install)
    return facts


def pth_paths(view: hostview.HostView, site: str) -> list[str]:
    """The folders the ``.pth`` files of site folder ``site`` add to the path, as ``site``
    reads them: each line not blank, not a comment and not an ``import`` line, joined to
    the site folder (an absolute line stays as it is).  An ``import`` line runs code, whose
    paths no file says; those are the known-fakes scan's, not a place a package is found."""
    found: list[str] = []
    for name in sorted(n for n in view.listdir(site) if n.endswith(".pth"))[:_PTH_FILES]:
        data = view.read(posixpath.join(site, name), _PTH_BYTES)
        if data is None:
            continue
        for raw in data.decode("utf-8", errors="replace").splitlines():
            line = raw.rstrip()
            if not line or line.startswith("#") or re.match(r"import[ \t]", line):
                continue
            path = posixpath.normpath(posixpath.join(site, line))
            if path not in found:
                found.append(path)
    return found


def _torch_in(view: hostview.HostView, folder: str) -> TorchInstall | None:
    """The torch in ``folder`` (its ``version.py`` and distribution metadata), or None."""
    names = view.listdir(folder)
    if "torch" not in names:
        return None
    install = TorchInstall(folder)
    text = view.read(posixpath.join(folder, "torch", "version.py"), 1 << 16)
    if text is not None:
        with contextlib.suppress(UnicodeDecodeError):
            for found in _TORCH_VERSION.findall(text)[-1:]:  # the module ends with the last
                install.versions[posixpath.join(folder, "torch/version.py")] = found.decode()
    for name in names:
        if re.fullmatch(r"torch-[^/]*\.(dist-info|egg-info)", name):
            meta = "METADATA" if name.endswith("dist-info") else "PKG-INFO"
            data = view.read(posixpath.join(folder, name, meta), 1 << 16)
            head = data.split(b"\n\n", 1)[0] if data else b""
            with contextlib.suppress(UnicodeDecodeError):
                for found in _META_VERSION.findall(head)[:1]:
                    install.versions[posixpath.join(folder, name, meta)] = found.decode()
    return install
