"""Hugging Face Accelerate, as its README starts a script: the Accelerator prepares the model."""

import torch
from accelerate import Accelerator
from common import batch, net
from torch import nn

accelerator = Accelerator()
torch.manual_seed(0)
model = net()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
model, opt = accelerator.prepare(model, opt)
x, y = batch(device=accelerator.device)
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    opt.step()
    print(f"process {accelerator.process_index} step {step} loss {loss.item():.4f} "
          f"on {accelerator.device}")
print("TRAIN_OK")
