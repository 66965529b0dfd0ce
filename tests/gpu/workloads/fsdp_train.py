"""FSDP (fully_shard) under torchrun: two steps, whatever the world size."""

import os

import torch
import torch.distributed as dist
from common import batch
from torch import nn
from torch.distributed.fsdp import fully_shard

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(),
                      nn.Linear(128, 1)).cuda()
for layer in model:
    if isinstance(layer, nn.Linear):
        fully_shard(layer)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = batch(device="cuda")
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(f"rank {dist.get_rank()} step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
print("TRAIN_OK")
