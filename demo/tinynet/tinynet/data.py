"""Synthetic data: Gaussian blobs around fixed class centres, made from a seed."""

import torch


def make_blobs(
    samples: int, features: int, classes: int, noise: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return inputs (samples x features) and integer labels; same seed, same data."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, features, generator=generator) * 2.0
    labels = torch.randint(0, classes, (samples,), generator=generator)
    inputs = centres[labels] + noise * torch.randn(samples, features, generator=generator)
    return inputs, labels


def batches(samples: int, batch_size: int, seed: int, rank: int = 0, world_size: int = 1):
    """Yield index batches forever; each rank takes its own share of every batch."""
    generator = torch.Generator().manual_seed(seed + 1)
    while True:
        indices = torch.randint(0, samples, (batch_size,), generator=generator)
        yield indices[rank::world_size]
