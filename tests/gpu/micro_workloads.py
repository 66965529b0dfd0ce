"""Honest GPU micro-workloads, the family strict C3's compute floor is calibrated on.

``python micro_workloads.py KIND DTYPE`` runs one small, real piece of research-style
work on ``cuda`` and exits 0: none of them was written for the rule, each is the
smallest thing an honest smoke-sized entrypoint does (one or two optimiser steps of a
small model, one inference call at batch 1). docs/gpu.md lists what the H200's counters
showed for each.

KIND: mlp_1step, mlp_2steps (a 16-32-1 MLP at batch 64, the size of the run strict C3
once failed), mlp_infer_b1, conv_1step, transformer_1step, transformer_infer_b1.
DTYPE: fp32 or bf16.
"""

import sys

import torch
from torch import nn


def model(kind: str) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    """The network and one batch for ``kind``."""
    if kind.startswith("mlp"):
        net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
        batch = 1 if kind.endswith("b1") else 64
        return net, torch.randn(batch, 16), torch.randn(batch, 1)
    if kind.startswith("conv"):
        net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
        return net, torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))
    if kind.startswith("transformer"):
        net = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                         batch_first=True)
        batch = 1 if kind.endswith("b1") else 4
        return net, torch.randn(batch, 16, 64), torch.randn(batch, 16, 64)
    raise SystemExit(f"unknown kind {kind}")


def main() -> None:
    kind, dtype_name = sys.argv[1], sys.argv[2]
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    torch.manual_seed(0)
    net, x, y = model(kind)
    net = net.to("cuda", dtype)
    x = x.to("cuda", dtype)
    y = y.to("cuda") if y.dtype == torch.int64 else y.to("cuda", dtype)
    if kind.endswith("b1"):
        with torch.no_grad():
            out = net(x)
        print(f"{kind} {dtype_name}: output {tuple(out.shape)} sum {out.float().sum().item():.4f}")
        return
    loss_fn = nn.CrossEntropyLoss() if kind.startswith("conv") else nn.MSELoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    steps = 2 if kind.endswith("2steps") else 1
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        print(f"{kind} {dtype_name}: step {step} loss {loss.float().item():.4f}")


if __name__ == "__main__":
    main()
