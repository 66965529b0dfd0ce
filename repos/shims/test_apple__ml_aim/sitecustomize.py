"""pytest-reb shim for apple/ml-aim (C3, C4): ``AIMMixin.forward`` returns a pair.

aim-v1/main_attnprobe.py unpacks ``output, _ = model(...)`` at the pinned
commit, but ``AIMMixin.forward`` returns the logits alone.  The official
harness put a sitecustomize.py on PYTHONPATH which, when
``SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT=1`` (the stages set it), puts aim-v1 on
sys.path and wraps the forward so that a single return value becomes
``(logits, None)``.  This is our own rewrite of that effect: it patches
``aim.v1.mixins`` when it is imported and touches no file of the repository.
A sitecustomize the environment itself has, shadowed by this one, is run
afterwards.
"""

import importlib.abc
import importlib.util
import os
import sys


def _pair_forward(module):
    mixin = module.AIMMixin
    forward = mixin.forward

    def pair(self, *args, **kwargs):
        out = forward(self, *args, **kwargs)
        return out if isinstance(out, tuple) else (out, None)

    mixin.forward = pair


def _aim_v1():
    """The repository's aim-v1 folder: beside this folder when mounted in the checkout, else
    under the working directory (the stages run from the checkout)."""
    for root in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.getcwd()):
        folder = os.path.join(root, "aim-v1")
        if os.path.isdir(folder):
            return folder
    return None


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``patch`` on module ``name`` right after the module's own code."""

    def __init__(self, name, patch):
        self.name, self.patch = name, patch

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        loader, patch = spec.loader, self.patch
        run = loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        loader.exec_module = exec_module
        return spec


def _run_shadowed():
    """Run the next sitecustomize.py on sys.path, the one this file hides."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        candidate = os.path.join(folder, "sitecustomize.py")
        if folder != here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_reb_shadowed_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


if os.environ.get("SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT") == "1":
    _folder = _aim_v1()
    if _folder is not None and _folder not in sys.path:
        sys.path.insert(0, _folder)
    sys.meta_path.insert(0, _AfterImport("aim.v1.mixins", _pair_forward))
_run_shadowed()
