"""DistributedDataParallel under torchrun: NCCL, any world size."""

import os

import torch
import torch.distributed as dist
from common import batch, net
from torch import nn
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
torch.manual_seed(0)
model = DistributedDataParallel(net().cuda(), device_ids=[rank])
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = batch(device="cuda")
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    print(f"rank {dist.get_rank()}/{dist.get_world_size()} step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
print("TRAIN_OK")
