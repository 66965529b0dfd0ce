"""Experiment configuration, read from YAML."""

from pathlib import Path
from typing import Any

import yaml


def load_config(path: str | Path) -> dict[str, Any]:
    """Read an experiment config; every section the trainer uses must be present."""
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    for section in ("data", "model", "train"):
        if section not in config:
            raise KeyError(f"{path}: missing section {section!r}")
    return config
