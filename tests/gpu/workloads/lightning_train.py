"""Lightning, two steps on one GPU, its DataLoader fed by two worker processes."""

import lightning as L
import torch
from common import batch, net
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = net()

    def training_step(self, b, _):
        x, y = b
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    data = DataLoader(TensorDataset(*batch(256)), batch_size=32, num_workers=2)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(Regressor(), data)
    print("TRAIN_OK")
