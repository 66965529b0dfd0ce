"""pytest-reb: does an environment an AI agent built for a research repository really work?

The public vocabulary of repository modules is re-exported here, so a module
reads ``from pytest_reb import Repo, Run, torchrun``.  It is loaded on first
use: pytest imports this package for its plugin in every run on the machine,
and a run that uses no repository module should not pay for the vocabulary.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_reb.spec import (
        SHIMS,
        Asset,
        C2Variant,
        CompatVariant,
        Helper,
        Http,
        Repo,
        Retry,
        Run,
        Synthetic,
        accelerate,
        deepspeed,
        hf_asset,
        pytest_node,
        self_launching,
        torchrun,
    )

__all__ = ["SHIMS", "Asset", "C2Variant", "CompatVariant", "Helper", "Http", "Repo", "Retry",
           "Run", "Synthetic", "accelerate", "deepspeed", "hf_asset", "pytest_node",
           "self_launching", "torchrun"]


def __getattr__(name: str) -> Any:
    if name in __all__:  # through sys.modules: pytester's in-process runs may have reset it
        return getattr(importlib.import_module("pytest_reb.spec"), name)
    raise AttributeError(f"module 'pytest_reb' has no attribute {name!r}")
