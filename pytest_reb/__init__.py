"""pytest-reb: does an environment an AI agent built for a research repository really work?

The public vocabulary of repository modules is re-exported here, so a module
reads ``from pytest_reb import Repo, Run, torchrun``.
"""

from pytest_reb.spec import (
    Asset,
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

__all__ = ["Asset", "CompatVariant", "Helper", "Http", "Repo", "Retry", "Run", "Synthetic",
           "accelerate", "deepspeed", "hf_asset", "pytest_node", "self_launching", "torchrun"]
