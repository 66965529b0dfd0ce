"""One inference call at batch 1 of a small transformer encoder."""

import torch
from torch import nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=2).cuda().eval()
with torch.inference_mode():
    out = model(torch.randn(1, 16, 64, device="cuda"))
print("output", tuple(out.shape), f"{out.sum().item():.4f}")
print("TRAIN_OK")
