"""A vLLM-style engine: a worker process owns the model; requests and replies go over queues."""

import torch
import torch.multiprocessing as mp
from torch import nn


def worker(requests: mp.Queue, replies: mp.Queue) -> None:
    """Loads the model on the GPU once, then serves greedy decoding until told to stop."""
    torch.manual_seed(0)
    vocab = 100
    model = nn.Sequential(nn.Embedding(vocab, 64), nn.Linear(64, 64), nn.GELU(),
                          nn.Linear(64, vocab)).cuda().eval()
    while (prompt := requests.get()) is not None:
        tokens = torch.tensor(prompt, device="cuda")
        with torch.inference_mode():
            for _ in range(8):
                nxt = model(tokens)[-1].argmax()
                tokens = torch.cat([tokens, nxt.view(1)])
        replies.put(tokens.tolist())


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    requests, replies = ctx.Queue(), ctx.Queue()
    engine = ctx.Process(target=worker, args=(requests, replies))
    engine.start()
    for prompt in ([1, 2, 3], [7, 8]):
        requests.put(prompt)
        print("generated", replies.get(timeout=300))
    requests.put(None)
    engine.join()
    print("TRAIN_OK" if engine.exitcode == 0 else f"engine exit {engine.exitcode}")
