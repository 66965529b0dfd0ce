"""bf16 autocast, batches from pinned host memory copied without blocking."""

import torch
from common import batch, net
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = net(256).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(*batch(512)), batch_size=128, pin_memory=True)
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
print("TRAIN_OK")
