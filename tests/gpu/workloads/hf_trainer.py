"""Hugging Face Trainer on a tiny BERT made from a config (no hub): two steps of classification."""

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class Rows(torch.utils.data.Dataset):
    """Sixteen random token rows with binary labels."""

    def __init__(self) -> None:
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(5, 100, (16, 12), generator=g)
        self.labels = torch.randint(0, 2, (16,), generator=g)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(12, dtype=torch.long),
                "labels": self.labels[i]}


config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=32, num_labels=2)
model = BertForSequenceClassification(config)
args = TrainingArguments(output_dir="out/hf", max_steps=2, per_device_train_batch_size=8,
                         report_to=[], save_strategy="no", logging_steps=1)
result = Trainer(model=model, args=args, train_dataset=Rows()).train()
print("device", next(model.parameters()).device, "loss", round(result.training_loss, 4))
print("TRAIN_OK")
