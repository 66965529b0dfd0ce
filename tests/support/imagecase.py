"""What a hostile image is: the demo image plus a list of operations, laid down by its own Python.

A ``Case`` names its operations (``SETUP`` reads them: a file written, prepended or appended,
a link, a folder removed, bytecode planted, a ``RECORD`` line resealed...), the keys of the
demo's report it replaces, and what its Dockerfile adds.  ``images.py`` builds them; what they
hold is in ``payloads.py`` and the modules beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_reb.loop.demo.images import ENV_DIR

SITE = f"{ENV_DIR}/lib/python3.11/site-packages"
SYSTEM_SITECUSTOMIZE = "/etc/python3.11/sitecustomize.py"

Op = tuple[Any, ...]


@dataclass(frozen=True)
class Case:
    """One hostile image: its operations (see ``SETUP``), its report, its Dockerfile extras."""

    name: str
    ops: Sequence[Op] = ()
    report: Mapping[str, Any] = field(default_factory=dict)  # keys replaced in the demo's
    env: Mapping[str, str] = field(default_factory=dict)
    #: Dockerfile instructions added last (``HEALTHCHECK``, ``USER``...)
    directives: Sequence[str] = ()


#: Run by the image's own Python at build time: lays the operations down, no shell anywhere.
SETUP = """\
import json, os, sys
for op in json.load(open(sys.argv[1])):
    kind, path = op[0], op[1]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "file":
        with open(path, "w") as fh:
            fh.write(op[2])
        os.chmod(path, op[3])
    elif kind == "symlink":
        os.symlink(op[2], path)
    elif kind == "prepend":
        with open(path) as fh:
            body = fh.read()
        with open(path, "w") as fh:
            fh.write(op[2] + body)
    elif kind == "remove_head_object":  # the loose object of the commit HEAD names
        ref = open(path + "/.git/HEAD").read().split()[-1]
        sha = open(path + "/.git/" + ref).read().strip() if "/" in ref else ref
        os.remove(path + "/.git/objects/" + sha[:2] + "/" + sha[2:])
    elif kind == "gitdir":  # .git becomes a gitdir: file pointing where nothing is
        import shutil
        shutil.rmtree(path + "/.git")
        with open(path + "/.git", "w") as fh:
            fh.write("gitdir: " + op[2] + "\\n")
    elif kind == "remove":  # a folder the demo holds (an installed package)
        import shutil
        shutil.rmtree(path)
    elif kind == "append":
        with open(path, "a") as fh:
            fh.write(op[2])
    elif kind == "copy":  # another file's bytes over path (an extension swapped)
        import shutil
        shutil.copyfile(op[2], path)
    elif kind == "sourceless":  # bytecode of op[2] at path itself, the source op[3] removed
        import importlib.util, marshal
        with open(path, "wb") as fh:
            code = marshal.dumps(compile(op[2], path, "exec"))
            fh.write(importlib.util.MAGIC_NUMBER + bytes(12) + code)
        if op[3]:
            os.remove(op[3])
    elif kind == "reseal":  # the file's RECORD line rewritten to its new bytes, as a forger would
        import base64, glob, hashlib
        data = open(path, "rb").read()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        site = path[: -len(op[2])]
        for record in glob.glob(site + "*.dist-info/RECORD"):
            lines = open(record).read().splitlines()
            new = [f"{op[2]},sha256={digest},{len(data)}" if l.split(",")[0] == op[2] else l
                   for l in lines]
            if new != lines:
                open(record, "w").write("\\n".join(new) + "\\n")
    elif kind == "b64":  # a binary built on the host (``cc`` operations)
        import base64
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(op[2]))
        os.chmod(path, op[3])
    elif kind == "pyc":  # bytecode of op[2] where Python looks for the module at path's
        import importlib.util, marshal
        code = marshal.dumps(compile(op[2], path, "exec"))
        st = os.stat(path)
        if op[3] == "unchecked":  # PEP 552: hash-based, never checked against the source
            head = (1).to_bytes(4, "little") + importlib.util.source_hash(open(path, "rb").read())
        else:  # the source's own mtime and size: Python takes it for the source's bytecode
            head = (0).to_bytes(4, "little") + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(
                4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        cache = importlib.util.cache_from_source(path)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(cache, "wb") as fh:
            fh.write(importlib.util.MAGIC_NUMBER + head + code)
    else:
        sys.exit("unknown operation " + kind)
"""
