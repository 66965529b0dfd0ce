"""Stand-ins for the batch-G rows of ``table.py``: hub assets their C1 stages read.

The hub is not reachable here, so a C1 stage that loads a model or data set
by hub id gets a stand-in instead: the repository's own model class with
random weights (or a tiny synthetic file in the format the code reads), made
in a container of the row's image with the network off, and put in the asset
cache with ``AssetCache.ingest(..., origin="stand-in: ...")`` so every outcome
that uses it says what it is.  ``build.py`` calls each function as
``standin_G:function`` with the image's tag and the asset cache.  Nothing
here is collected by pytest.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import standin
from standin_A import run_in_image

from pytest_reb.assets.cache import AssetCache

#: RenderFormer at a small size (the base model is 200M parameters): one radiosity layer and
#: the four view-transformer layers the DPT decoder reads, heads of 128 dimensions as in the
#: released configs (the triangle RoPE's frequencies fit them), the texture patch size the
#: scene converter writes; saved by the class's own ``PyTorchModelHubMixin.save_pretrained``
#: (config.json and model.safetensors), which ``RenderFormer.from_pretrained`` reads.
RENDERFORMER_MODEL = """
import sys, torch
sys.path.insert(0, "/data/project/repo")
from renderformer.models.config import RenderFormerConfig
from renderformer.models.renderformer import RenderFormer
config = RenderFormerConfig(latent_dim=128, num_layers=1, num_heads=1, dim_feedforward=256,
                            num_register_tokens=4, view_transformer_latent_dim=128,
                            view_transformer_ffn_hidden_dim=256, view_transformer_n_heads=1,
                            view_transformer_n_layers=4, dpt_features=16,
                            dpt_out_channels=[16, 32, 64, 128])
torch.manual_seed(0)
model = RenderFormer(config)
model.save_pretrained(sys.argv[1])
print("stand-in", sys.argv[1], sum(p.numel() for p in model.parameters()), "parameters")
"""
RENDERFORMER_ORIGIN = (
    "stand-in: random-init RenderFormer (the repository's own class; latent 128, 1 radiosity "
    "layer, 4 view layers, 1 head of 128, DPT features 16) saved with its "
    "PyTorchModelHubMixin.save_pretrained (the hub's microsoft/renderformer-v1-base is not "
    "reachable here)")


def renderformer_model(image: str, cache: Path) -> None:
    """RenderFormer's model folder (``renderformer-v1-base``), random weights, into the cache."""
    repo = standin.load_repo(standin.ROOT / "repos" / "test_microsoft__renderformer.py")
    with tempfile.TemporaryDirectory() as scratch:
        run_in_image(image, RENDERFORMER_MODEL, scratch, "model")
        AssetCache(cache).ingest(repo, "renderformer-v1-base", Path(scratch) / "model",
                                 origin=RENDERFORMER_ORIGIN)


#: sshleifer/tiny-gpt2's sizes (its config.json: 2 layers, 2 heads, embeddings of 2, GPT-2's
#: 50257-token vocabulary and 1024 positions).
TINY_GPT2 = {"n_embd": 2, "n_layer": 2, "n_head": 2, "n_positions": 1024, "vocab_size": 50257}

#: GPT2LMHeadModel's state dict at those sizes, random (Conv1D weights are in x out, as
#: transformers stores them), saved with torch.save as pytorch_model.bin.
GPT2_WEIGHTS = """
import sys, torch
size = SIZES
e, v, p = size["n_embd"], size["vocab_size"], size["n_positions"]
torch.manual_seed(0)
r = lambda *shape: torch.randn(*shape) * 0.02
state = {"transformer.wte.weight": r(v, e), "transformer.wpe.weight": r(p, e),
         "transformer.ln_f.weight": torch.ones(e), "transformer.ln_f.bias": torch.zeros(e)}
for i in range(size["n_layer"]):
    h = f"transformer.h.{i}."
    state.update({h + "ln_1.weight": torch.ones(e), h + "ln_1.bias": torch.zeros(e),
                  h + "attn.c_attn.weight": r(e, 3 * e), h + "attn.c_attn.bias": r(3 * e),
                  h + "attn.c_proj.weight": r(e, e), h + "attn.c_proj.bias": r(e),
                  h + "ln_2.weight": torch.ones(e), h + "ln_2.bias": torch.zeros(e),
                  h + "mlp.c_fc.weight": r(e, 4 * e), h + "mlp.c_fc.bias": r(4 * e),
                  h + "mlp.c_proj.weight": r(4 * e, e), h + "mlp.c_proj.bias": r(e)})
state["lm_head.weight"] = state["transformer.wte.weight"]
torch.save(state, sys.argv[1])
print("stand-in", sys.argv[1], sum(t.numel() for t in state.values()), "values")
"""
GPT2_ORIGIN = (
    "stand-in: sshleifer/tiny-gpt2's files with random weights (GPT2LMHeadModel's state dict at "
    "its sizes, torch.save) and a byte-level BPE tokenizer of GPT-2's 256 byte symbols and "
    "<|endoftext|>, no merges (the hub is not reachable here)")


def byte_symbols() -> list[str]:
    """GPT-2's byte-to-unicode table (``bytes_to_unicode``), in byte order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    extra = iter(range(256, 512))
    return [chr(b) if b in keep else chr(next(extra)) for b in range(256)]


def gpt2_files(folder: Path) -> None:
    """config.json, the tokenizer files and generation_config.json of a tiny GPT-2."""
    import json

    eos = "<|endoftext|>"
    vocab = {s: i for i, s in enumerate(byte_symbols())}
    vocab[eos] = TINY_GPT2["vocab_size"] - 1
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_ctx": 1024,
              "activation_function": "gelu_new", "bos_token_id": vocab[eos],
              "eos_token_id": vocab[eos], "layer_norm_epsilon": 1e-5, **TINY_GPT2}
    level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tokenizer = {"version": "1.0", "truncation": None, "padding": None,
                 "added_tokens": [{"id": vocab[eos], "content": eos, "single_word": False,
                                   "lstrip": False, "rstrip": False, "normalized": True,
                                   "special": True}],
                 "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", **level},
                 "post_processor": {"type": "ByteLevel", **level},
                 "decoder": {"type": "ByteLevel", **level},
                 "model": {"type": "BPE", "dropout": None, "unk_token": None,
                           "continuing_subword_prefix": "", "end_of_word_suffix": "",
                           "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                           "merges": []}}
    files = {"config.json": config, "tokenizer.json": tokenizer, "vocab.json": vocab,
             "tokenizer_config.json": {"model_max_length": 1024, "bos_token": eos,
                                       "eos_token": eos, "unk_token": eos,
                                       "tokenizer_class": "GPT2Tokenizer"},
             "special_tokens_map.json": {"bos_token": eos, "eos_token": eos,
                                         "unk_token": eos},
             "generation_config.json": {"bos_token_id": vocab[eos],
                                        "eos_token_id": vocab[eos]}}
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, ensure_ascii=False))
    (folder / "merges.txt").write_text("#version: 0.2\n")


def lmcache_tiny_gpt2(image: str, cache: Path) -> None:
    """LMCache's ``sshleifer/tiny-gpt2`` folder: the weights made with the image's torch."""
    import json
    import os

    repo = standin.load_repo(standin.ROOT / "repos" / "test_LMCache__LMCache.py")
    with tempfile.TemporaryDirectory() as scratch:
        model = Path(scratch) / "model"
        model.mkdir()
        os.chmod(model, 0o777)
        script = GPT2_WEIGHTS.replace("SIZES", json.dumps(TINY_GPT2))
        run_in_image(image, script, scratch, "model/pytorch_model.bin")
        gpt2_files(model)
        AssetCache(cache).ingest(repo, "tiny-gpt2", model, origin=GPT2_ORIGIN)
