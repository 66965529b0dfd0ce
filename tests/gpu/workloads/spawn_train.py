"""torch.multiprocessing.spawn with one process, which trains on its GPU."""

import torch
import torch.multiprocessing as mp
from common import batch, net
from torch import nn


def worker(rank: int) -> None:
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    model = net().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = batch(device="cuda")
    for step in range(2):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        print(f"rank {rank} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    mp.spawn(worker, nprocs=1, join=True)
    print("TRAIN_OK")
