"""Train TinyNet for a few steps on synthetic data and save a checkpoint.

Single process:  python train.py --device cpu --steps 5 --out runs/tiny
Distributed:     torchrun --nproc_per_node=2 train.py --device cuda --steps 5 --out runs/ddp
"""

import argparse
import os
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from tinynet.config import load_config
from tinynet.data import batches, make_blobs
from tinynet.model import TinyNet
from torch import nn
from torch.nn.parallel import DistributedDataParallel

REPO = Path(__file__).resolve().parent


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--steps", type=int, help="training steps (default: from the config)")
    parser.add_argument("--out", default="runs/tiny", help="checkpoint directory")
    parser.add_argument("--config", default=str(REPO / "configs" / "tiny.yaml"))
    return parser.parse_args()


def setup_device(kind: str) -> tuple[torch.device, int, int]:
    """Pick the device and, under torchrun, join the process group."""
    if kind == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda but torch.cuda.is_available() is False")
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return torch.device("cuda:0" if kind == "cuda" else "cpu"), 0, 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if kind == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device(f"cuda:{local_rank}")
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if kind == "cuda" else "gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    # Sanity check: every rank contributes rank+1; the sum is known in advance.
    probe = torch.tensor([rank + 1.0], device=device)
    dist.all_reduce(probe)
    expected = world_size * (world_size + 1) / 2
    if probe.item() != expected:
        sys.exit(f"error: all_reduce gave {probe.item()}, expected {expected}")
    print(f"rank {rank}/{world_size} device={device}", flush=True)
    return device, rank, world_size


def main() -> None:
    args = parse_args()
    config = load_config(args.config)
    steps = args.steps if args.steps is not None else config["train"]["steps"]
    device, rank, world_size = setup_device(args.device)

    torch.manual_seed(config["seed"])
    data = config["data"]
    inputs, labels = make_blobs(
        data["samples"], data["features"], data["classes"], data["noise"], config["seed"]
    )
    inputs, labels = inputs.to(device), labels.to(device)
    model = TinyNet(data["features"], config["model"]["hidden"], data["classes"]).to(device)
    if dist.is_initialized():
        model = DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )
    optimizer = torch.optim.SGD(model.parameters(), lr=config["train"]["lr"])
    loss_fn = nn.CrossEntropyLoss()

    batch_indices = batches(
        data["samples"], config["train"]["batch_size"], config["seed"], rank, world_size
    )
    loss = torch.tensor(float("nan"))
    for step in range(1, steps + 1):
        index = next(batch_indices).to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs[index]), labels[index])
        loss.backward()
        optimizer.step()
        if rank == 0:
            print(f"step {step}/{steps} loss={loss.item():.4f}", flush=True)

    if rank == 0:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        plain = model.module if isinstance(model, DistributedDataParallel) else model
        torch.save(
            {"model": plain.state_dict(), "config": config, "steps": steps}, out / "model.pt"
        )
        print(f"saved {out / 'model.pt'}", flush=True)
        print(f"TRAIN_OK steps={steps} loss={loss.item():.4f}", flush=True)
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
