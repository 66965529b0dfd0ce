"""What every workload of this folder shares: a small regression task and its network."""

import torch
from torch import nn


def net(width: int = 64) -> nn.Module:
    """A small MLP, the size of a smoke-test model."""
    return nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, 1))


def batch(n: int = 64, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of a fixed linear task (seeded, so every run sees the same data)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 16, generator=g)
    y = x @ torch.linspace(-1, 1, 16).unsqueeze(1)
    return x.to(device), y.to(device)


def pick_device(wanted: str = "auto") -> str:
    """``cuda`` when torch sees a GPU, as research scripts decide."""
    if wanted != "auto":
        return wanted
    return "cuda" if torch.cuda.is_available() else "cpu"
