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

import os
import sys

from reb_shim import after_import, run_shadowed  # pytest-reb's shim library, next on the path


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


if os.environ.get("SCIMLOPSBENCH_AIM_ATTNPROBE_COMPAT") == "1":
    _folder = _aim_v1()
    if _folder is not None and _folder not in sys.path:
        sys.path.insert(0, _folder)
    after_import({"aim.v1.mixins": _pair_forward})
run_shadowed(__file__)
