"""pytest-reb shim for feifeibear/long-context-attention (C3, C4): ``--attn_type torch``.

benchmark/benchmark_longctx.py offers ``--attn_type torch`` but yunchang's
``AttnType.from_string`` knows no member whose value is ``"torch"``.  The
official harness put a sitecustomize.py first on PYTHONPATH that maps it to
``AttnType.TORCH_EFFICIENT`` (PyTorch's memory-efficient SDPA kernel), so the
benchmark runs without flash-attn; every other value passes through.  This is
our own rewrite of that effect: it patches ``yunchang.kernels`` when it is
imported and touches no file of the repository.  A sitecustomize the
environment itself has, shadowed by this one, is run afterwards.
"""

import importlib.abc
import importlib.util
import os
import sys


def _alias_torch(module):
    attn_type = module.AttnType
    original = attn_type.from_string.__func__

    def from_string(cls, s):
        if s == "torch":
            return cls.TORCH_EFFICIENT
        return original(cls, s)

    attn_type.from_string = classmethod(from_string)


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


sys.meta_path.insert(0, _AfterImport("yunchang.kernels", _alias_torch))
_run_shadowed()
