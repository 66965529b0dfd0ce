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

from reb_shim import after_import, run_shadowed  # pytest-reb's shim library, next on the path


def _alias_torch(module):
    attn_type = module.AttnType
    original = attn_type.from_string.__func__

    def from_string(cls, s):
        if s == "torch":
            return cls.TORCH_EFFICIENT
        return original(cls, s)

    attn_type.from_string = classmethod(from_string)


after_import({"yunchang.kernels": _alias_torch})
run_shadowed(__file__)
