"""Two optimiser steps of a small MLP: the plain training script."""

import argparse

import torch
from common import batch, net, pick_device
from torch import nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=2)
p.add_argument("--device", default="auto")
a = p.parse_args()
device = pick_device(a.device)
torch.manual_seed(0)
model = net().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = batch(device=device)
for step in range(a.steps):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} device {device}")
print("TRAIN_OK")
