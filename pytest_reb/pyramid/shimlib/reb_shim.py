"""What every ``sitecustomize.py`` shim of a ``repos/`` module needs: patch after import.

A shim folder is mounted read-only on its own, first on ``PYTHONPATH``; this
folder comes right after it (``/opt/reb/shimlib`` in a container, the
package's own folder on ``local://``), so shims share one tested copy of the
import hook instead of three.  It runs under the agent's interpreter: standard
library only, Python 3.8 syntax.
"""

import importlib.abc
import importlib.util
import json
import os
import sys
import threading


class AfterImport(importlib.abc.MetaPathFinder):
    """Runs each module's patch right after the module's own code, when it is imported.

    To find the module it asks the other finders; one of them may be a finder
    like this one that asks the others in turn, so a question this finder is
    already answering (same thread, same name) gets no answer from it, instead
    of the two asking each other until the recursion limit.
    """

    def __init__(self, patches):
        self.patches = dict(patches)
        self.busy = set()

    def find_spec(self, fullname, path, target=None):
        patch = self.patches.get(fullname)
        key = (threading.get_ident(), fullname)
        if patch is None or key in self.busy:
            return None
        self.busy.add(key)
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None and spec.loader is not None:
                    break
            else:
                return None
        finally:
            self.busy.discard(key)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


def after_import(patches):
    """Install ``{module name: patch(module)}`` ahead of every other finder."""
    sys.meta_path.insert(0, AfterImport(patches))


def run_shadowed(shim_file):
    """Run the next ``sitecustomize.py`` on sys.path: the environment's own, which the shim
    at ``shim_file`` hides by coming first."""
    here = os.path.dirname(os.path.abspath(shim_file))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder != here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_reb_shadowed_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


#: How much of a large JSON file is read at a time.
CHUNK = 1 << 20


def json_items(path):
    """The elements of the JSON array in ``path``, parsed one at a time as they are read."""
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8") as fh:
        buf, eof, expect = "", False, "["
        while True:
            buf = buf.lstrip()
            if not buf or expect == "value":
                if not buf and eof:
                    raise ValueError(f"{path} ends inside its JSON list")
                try:
                    item, end = decoder.raw_decode(buf) if buf else (None, 0)
                    complete = buf and (end < len(buf) or eof)
                except ValueError:
                    if eof:
                        raise
                    complete = False
                if not complete:
                    chunk = fh.read(CHUNK)
                    eof = not chunk
                    buf += chunk
                    continue
                yield item
                buf, expect = buf[end:], ","
            elif expect == "[":
                if buf[0] != "[":
                    raise ValueError(f"{path} is not a JSON list")
                buf, expect = buf[1:], "first"
            elif buf[0] == "]":
                return
            elif expect == ",":
                if buf[0] != ",":
                    raise ValueError(f"{path}: expected ',' between list items")
                buf, expect = buf[1:], "value"
            else:  # the first item
                expect = "value"
