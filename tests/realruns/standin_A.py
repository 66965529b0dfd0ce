"""Stand-ins for the batch-A rows of ``table.py``: hub assets their C1 stages read.

The hub is not reachable here, so a C1 stage that loads a model or data set
by hub id gets a stand-in instead: the repository's own model class with
random weights (or a tiny synthetic file in the format the code reads),
made in a container of the row's image with the network off, and put in the
asset cache with ``AssetCache.ingest(..., origin="stand-in: ...")`` so every
outcome that uses it says what it is.  ``build.py`` calls each function as
``standin_A:function`` with the image's tag and the asset cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import standin

#: The venv every ``build.py`` image has (``build.VENV``; not imported: build imports us).
PYTHON = "/opt/envs/research/bin/python"
REPO_DIR = "/data/project/repo"


def in_image(image: str) -> list[str]:
    """A ``docker run`` prefix for the image's venv python, network off, ``{scratch}`` at /out."""
    return ["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
            "-v", "{scratch}:/out", "--entrypoint", PYTHON, image]


def dav2_model(image: str, cache: Path) -> None:
    """Depth-Anything-V2's metric checkpoint (``DepthAnythingV2(vits, max_depth=20)``), made
    by the repository's class under the image's venv (``standin.dav2_model``)."""
    standin.dav2_model(in_image(image), REPO_DIR, cache)


#: How many samples each synthetic MNIST split holds (the C1 stage trains one step of batch 1).
MNIST_SAMPLES = {"train": 16, "t10k": 8}
MNIST_ORIGIN = ("stand-in: synthetic MNIST idx files (random 28x28 uint8 images, labels 0-9; "
                "16 train, 8 test) in the format torchvision.datasets.MNIST reads (the CVDF "
                "mirror is not reachable here)")


def idx_file(data: bytes, dims: tuple[int, ...]) -> bytes:
    """An idx (SN3 PascalVincent) file of unsigned bytes: magic 0x08 with the rank, then dims."""
    header = bytes([0, 0, 0x08, len(dims)]) + b"".join(d.to_bytes(4, "big") for d in dims)
    return header + data


def auto1111_mnist(image: str, cache: Path) -> None:
    """Auto1111SDK's MNIST, as the cache stores it (unpacked idx files), synthetic; ``image``
    is not needed: the files are data, written here."""
    import random
    import tempfile

    from pytest_reb.assets.cache import AssetCache

    rng = random.Random(0)
    repo = standin.load_repo(standin.ROOT / "repos" / "test_Auto1111SDK__Auto1111SDK.py")
    with tempfile.TemporaryDirectory() as scratch:
        raw = Path(scratch) / "raw"
        raw.mkdir()
        for split, n in MNIST_SAMPLES.items():
            pixels = bytes(rng.randrange(256) for _ in range(n * 28 * 28))
            labels = bytes(i % 10 for i in range(n))
            (raw / f"{split}-images-idx3-ubyte").write_bytes(idx_file(pixels, (n, 28, 28)))
            (raw / f"{split}-labels-idx1-ubyte").write_bytes(idx_file(labels, (n,)))
        AssetCache(cache).ingest(repo, "mnist", raw, origin=MNIST_ORIGIN)


#: kvpress's tiny Llama: the hub's ``hf-internal-testing/tiny-random-LlamaForCausalLM`` sizes
#: (hidden 16, 2 layers, 4 heads), random weights, and a byte-level BPE tokenizer trained here
#: on a few sentences (the hub's is a 32k sentencepiece model; the pipeline only encodes,
#: truncates to 128 tokens and decodes).
KVPRESS_MODEL = """
import sys, torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
out = sys.argv[1]
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<unk>", "<s>", "</s>"],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(["Please answer the question based on the long texts below.",
                         "The committee met in the old town hall on a cold morning."], trainer)
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                               unk_token="<unk>", model_max_length=2048)
fast.save_pretrained(out)
config = LlamaConfig(vocab_size=len(fast), hidden_size=16, intermediate_size=64,
                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                     max_position_embeddings=2048, bos_token_id=1, eos_token_id=2)
torch.manual_seed(0)
model = LlamaForCausalLM(config)
model.save_pretrained(out)
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
KVPRESS_MODEL_ORIGIN = ("stand-in: random-init LlamaForCausalLM with the sizes of "
                        "hf-internal-testing/tiny-random-LlamaForCausalLM and a byte-level BPE "
                        "tokenizer trained on two sentences, saved with save_pretrained (the hub "
                        "is not reachable here)")

#: Two rows of LooGLE shortdep_qa's test split, in the columns the repository's
#: evaluation/benchmarks/loogle/create_huggingface_dataset.py pushed to the hub, as one parquet
#: file under the data_dir.
KVPRESS_DATA = """
import os, sys
import pandas as pd
folder = os.path.join(sys.argv[1], "shortdep_qa")
os.makedirs(folder)
rows = [{"context": "Please answer the question based on the long texts below. " + text,
         "question": "Question: " + q + "\\n", "answer": a, "answer_prefix": "Answer: ",
         "task": "shortdep_qa", "max_new_tokens": 300}
        for text, q, a in [("The committee met in the old town hall.", "Where did it meet?",
                            "in the old town hall"),
                           ("The morning was cold and grey.", "How was the morning?",
                            "cold and grey")]]
pd.DataFrame(rows).to_parquet(os.path.join(folder, "test-00000-of-00001.parquet"))
print("stand-in", folder, len(rows), "rows")
"""
KVPRESS_DATA_ORIGIN = ("stand-in: two synthetic rows in LooGLE shortdep_qa's columns (context, "
                       "question, answer, answer_prefix, task, max_new_tokens), one parquet file "
                       "of the test split (the hub is not reachable here)")


def run_script(image: str, script: str, scratch: str, *args: str) -> None:
    """``script`` under the image's venv, network off, ``scratch`` at /out; ``args`` verbatim
    (``/out/...`` for the files it writes)."""
    import subprocess

    argv = [a.replace("{scratch}", scratch) for a in in_image(image)]
    subprocess.run([*argv, "-c", script, *args], check=True)


def run_in_image(image: str, script: str, scratch: str, *args: str) -> None:
    """``run_script`` whose arguments are all outputs: /out/<args>."""
    run_script(image, script, scratch, *(f"/out/{a}" for a in args))


def kvpress_assets(image: str, cache: Path) -> None:
    """kvpress's tiny Llama and one LooGLE split, made with the image's transformers,
    tokenizers and pandas, into the cache."""
    import tempfile

    from pytest_reb.assets.cache import AssetCache

    repo = standin.load_repo(standin.ROOT / "repos" / "test_NVIDIA__kvpress.py")
    with tempfile.TemporaryDirectory() as scratch:
        run_in_image(image, KVPRESS_MODEL, scratch, "model")
        run_in_image(image, KVPRESS_DATA, scratch, "loogle")
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "tiny-random-llama", Path(scratch) / "model",
                      origin=KVPRESS_MODEL_ORIGIN)
        cache_.ingest(repo, "loogle_shortdep_qa", Path(scratch) / "loogle",
                      origin=KVPRESS_DATA_ORIGIN)
