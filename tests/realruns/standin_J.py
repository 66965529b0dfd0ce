"""Stand-ins for the hub and URL assets of C3 (``single_gpu``) stages on the GPU machine.

``gpu_repos.py`` runs C2 and C3 on a GPU machine with no network and no Docker,
so a ``hf`` or ``url`` asset exists there only when a stand-in makes it.  Each
function here makes one repository's C3 assets the way the batch modules do
(``standin_A.py``): the repository's own code, or the class its library
loads, under the image's interpreter (``docker run``; on the GPU machine
``docker_local.py``, the machine's python, the checkout linked at
``/data/project/repo``), random weights at a small size where the code reads
its sizes from a config, and files in the layout the code reads; then
``AssetCache.ingest(..., origin="stand-in: ...")``, so every outcome that uses
one says what it is.  A C3 that passes on a stand-in shows the environment
runs the repository's pipeline on the GPU, not that any number is right.
``table.py`` names each as ``standin_J:function``.  Nothing here is collected
by pytest.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import standin
from standin_A import run_script

from pytest_reb.assets.cache import AssetCache


def _scratch() -> tempfile.TemporaryDirectory[str]:
    """A scratch folder the container's user may write (mounted at /out)."""
    scratch = tempfile.TemporaryDirectory()
    os.chmod(scratch.name, 0o777)
    return scratch


def _repo(name: str) -> Any:
    return standin.load_repo(standin.ROOT / "repos" / f"test_{name}.py")


#: ``standin_D.synthetic_jpeg``'s picture (gradients, a rectangle, an ellipse) at SIDE pixels,
#: drawn with the environment's Pillow (argv: OUT, SIDE): the python that runs gpu_repos.py
#: need not have Pillow, the repository's environment (torchvision's) does.
JPEG = """
import sys
from PIL import Image, ImageDraw
out, side = sys.argv[1], int(sys.argv[2])
image = Image.new("RGB", (side, side))
image.putdata([(x * 2 % 256, y * 2 % 256, (x + y) % 256) for y in range(side) for x in range(side)])
draw = ImageDraw.Draw(image)
draw.rectangle((10, 10, 60, 40), fill=(255, 255, 255))
draw.ellipse((70, 70, 120, 110), fill=(240, 240, 240))
image.save(out, "JPEG", quality=90)
"""


def _jpeg(image: str, scratch: str, name: str, side: int) -> Path:
    """A synthetic JPEG ``name`` in ``scratch``, drawn in the image."""
    run_script(image, JPEG, scratch, f"/out/{name}", str(side))
    return Path(scratch) / name


# --------------------------------------------------------------------------- nano-vllm

#: Qwen/Qwen3-0.6B's config.json in the hub's own form (transformers 4.51's keys), the sizes
#: shrunk: 2 layers of width 128, 4 query heads and 2 key/value heads of 128 dimensions (the
#: real head size, so the flash-attn kernels see the shape they see there; both head counts
#: divide by C4's tensor-parallel 2), and a 512-token vocabulary (the stand-in tokenizer's
#: ids, padded to an even count as VocabParallelEmbedding needs).  nano-vllm reads it with
#: AutoConfig and takes hidden_size, heads, head_dim, intermediate_size, rms_norm_eps,
#: rope_theta, rope_scaling (must be None), attention_bias, tie_word_embeddings,
#: max_position_embeddings and torch_dtype from it.
QWEN3_SIZES = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128,
               "max_window_layers": 2, "vocab_size": 512}

#: Qwen3-0.6B's config.json (the hub's keys and values but the sizes); the token ids are
#: filled in from the stand-in tokenizer (bos <|endoftext|>, eos <|im_end|>).
QWEN3_CONFIG = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False,
                "attention_dropout": 0.0, "hidden_act": "silu", "initializer_range": 0.02,
                "max_position_embeddings": 40960, "model_type": "qwen3", "rms_norm_eps": 1e-06,
                "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None,
                "tie_word_embeddings": True, "torch_dtype": "bfloat16",
                "transformers_version": "4.51.0", "use_cache": True, "use_sliding_window": False,
                **QWEN3_SIZES}

#: A Qwen model folder (argv: OUT, the config.json without token ids, the transformers model
#: and config classes).  The tokenizer: byte-level BPE as Qwen2's tokenizer.json has it (NFC,
#: the Qwen2 split regex, byte-level bytes with no prefix space), trained here with
#: ``tokenizers`` on a few sentences from the 256 byte symbols (at most 512 ids), then Qwen's
#: three special tokens; the weights: the transformers class at the config's sizes (its
#: parameter names are the hub file's), random, bfloat16, the tied lm_head left out as in the
#: hub's model.safetensors.
QWEN_MODEL = """
import json, os, sys, torch
from safetensors.torch import save_file
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, trainers)
import transformers
out, config = sys.argv[1], json.loads(sys.argv[2])
model_class, config_class = getattr(transformers, sys.argv[3]), getattr(transformers, sys.argv[4])
os.makedirs(out)
split = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?"
         "[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+")
level = dict(add_prefix_space=False, trim_offsets=False, use_regex=False)
tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
tok.normalizer = normalizers.NFC()
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(split), behavior="isolated", invert=False),
    pre_tokenizers.ByteLevel(**level)])
tok.decoder = decoders.ByteLevel(**level)
special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
texts = ["introduce yourself", "Hello, my name is Qwen. I am a large language model.",
         "List all prime numbers within 100.", "The quick brown fox jumps over the lazy dog."]
tok.train_from_iterator(texts * 4, trainers.BpeTrainer(
    vocab_size=min(config["vocab_size"], 512) - len(special), show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in special])
tok.save(os.path.join(out, "tokenizer.json"))
ids = {s: tok.token_to_id(s) for s in special}
assert max(ids.values()) < config["vocab_size"], ids
config.update(bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"])
config = dict(sorted(config.items()))
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
torch.manual_seed(0)
hf = {k: v for k, v in config.items()
      if k not in ("architectures", "model_type", "transformers_version", "torch_dtype")}
model = model_class(config_class(**hf))
state = {k: v.detach().to(torch.bfloat16).contiguous() for k, v in model.state_dict().items()
         if k != "lm_head.weight"}
save_file(state, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
print("stand-in", sys.argv[3], sum(v.numel() for v in state.values()), "parameters", ids)
"""

#: Qwen3's chat template, shortened to its message turns (the stage encodes its prompt
#: without it; example.py applies it).
QWEN_CHAT_TEMPLATE = (
    "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content"
    " + '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}{%- endif %}")
NANO_VLLM_ORIGIN = (
    "stand-in: a tiny random Qwen3 (transformers' Qwen3ForCausalLM, 2 layers of width 128, "
    "4 query and 2 key/value heads of 128, a 512-token vocabulary; bfloat16 model.safetensors, "
    "tied lm_head left out) with Qwen/Qwen3-0.6B's config.json keys, and a byte-level BPE "
    "tokenizer in Qwen2's form trained from scratch with tokenizers (<|endoftext|>, "
    "<|im_start|>, <|im_end|> the eos); the hub is not reachable there")


def qwen_tokenizer_files(folder: Path) -> None:
    """tokenizer_config.json, special_tokens_map.json and generation_config.json of Qwen3,
    the ids those of ``folder/tokenizer.json`` (made in the image)."""
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    ids = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    eot, eos = "<|endoftext|>", "<|im_end|>"
    decoder = {str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                        "single_word": False, "special": True} for s, i in ids.items()}
    files = {
        "tokenizer_config.json": {
            "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": decoder,
            "additional_special_tokens": ["<|im_start|>", "<|im_end|>"], "bos_token": None,
            "chat_template": QWEN_CHAT_TEMPLATE, "clean_up_tokenization_spaces": False,
            "eos_token": eos, "errors": "replace", "model_max_length": 131072,
            "pad_token": eot, "split_special_tokens": False,
            "tokenizer_class": "Qwen2Tokenizer", "unk_token": None},
        "special_tokens_map.json": {"additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
                                    "eos_token": eos, "pad_token": eot},
        "generation_config.json": {"bos_token_id": ids[eot], "do_sample": True,
                                   "eos_token_id": [ids[eos], ids[eot]],
                                   "pad_token_id": ids[eot], "temperature": 0.6, "top_k": 20,
                                   "top_p": 0.95}}
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n")


def nano_vllm_qwen3(image: str, cache: Path) -> None:
    """nano-vllm's ``Qwen3-0.6B`` folder (config.json, model.safetensors, the tokenizer files),
    a tiny random Qwen3 instead of the 1.2 GB hub model, which the GPU machine cannot fetch."""
    with _scratch() as scratch:
        run_script(image, QWEN_MODEL, scratch, "/out/model", json.dumps(QWEN3_CONFIG),
                   "Qwen3ForCausalLM", "Qwen3Config")
        model = Path(scratch) / "model"
        qwen_tokenizer_files(model)
        AssetCache(cache).ingest(_repo("GeeeekExplorer__nano_vllm"), "Qwen3-0.6B", model,
                                 origin=NANO_VLLM_ORIGIN)


# --------------------------------------------------------------------------- FlagGems

#: examples/model_bert_test.py builds ``BertModel(BertConfig())`` (random weights, BERT-base's
#: default sizes: nothing is downloaded for it) and tokenizes its prompt with
#: ``AutoTokenizer.from_pretrained("google-bert/bert-base-uncased")`` by hub id, offline, from
#: the stage's ``HF_HOME``.  The stand-in vocabulary keeps bert-base-uncased's special ids
#: ([PAD] 0, [unused0-98], [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103), then the printable
#: ASCII characters, their ``##`` continuations and the words of the test's prompts; every id is
#: below BertConfig's 30522, as the model's embedding needs.
BERT_PROMPTS = ("How are you today?", "What is your name?", "Who are you?",
                "Where are you from?")
#: tokenizer.json from vocab.txt with the ``tokenizers`` library (BERT's normalizer, pre-
#: tokenizer, [CLS] $A [SEP] template and WordPiece decoder), as the hub's file is.
BERT_TOKENIZER_JSON = """
import sys
from tokenizers import BertWordPieceTokenizer
tok = BertWordPieceTokenizer(sys.argv[1], lowercase=True, clean_text=True,
                             handle_chinese_chars=True, strip_accents=None)
tok.save(sys.argv[2])
print("stand-in bert-base-uncased tokenizer", tok.get_vocab_size(), "tokens")
"""
BERT_ORIGIN = (
    "stand-in: a bert-base-uncased WordPiece tokenizer (vocab.txt with the real special tokens "
    "at their ids 0 and 100-103, ASCII characters, ## continuations and the test prompts' "
    "words; tokenizer.json made from it with tokenizers' BertWordPieceTokenizer; "
    "tokenizer_config.json and config.json as the hub's), the hub is not reachable there")
#: The revision the stand-in's hub-cache snapshot is filed under (``refs/main`` names it).
STANDIN_REVISION = "0" * 40


def bert_vocab() -> list[str]:
    """bert-base-uncased's special tokens at their ids, then characters and prompt words."""
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    words = sorted({w.strip("?").lower() for p in BERT_PROMPTS for w in p.split()})
    return ["[PAD]", *(f"[unused{i}]" for i in range(99)), "[UNK]", "[CLS]", "[SEP]", "[MASK]",
            *chars, *(f"##{c}" for c in chars if c.isalnum()), *words]


def bert_tokenizer_folder(image: str, scratch: str) -> Path:
    """The stand-in tokenizer files in ``scratch``/bert (tokenizer.json made in the image)."""
    folder = Path(scratch) / "bert"
    folder.mkdir()
    os.chmod(folder, 0o777)
    (folder / "vocab.txt").write_text("".join(t + "\n" for t in bert_vocab()))
    run_script(image, BERT_TOKENIZER_JSON, scratch, "/out/bert/vocab.txt",
               "/out/bert/tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"do_lower_case": True, "model_max_length": 512}) + "\n")
    (folder / "config.json").write_text(json.dumps(
        {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1,
         "gradient_checkpointing": False, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
         "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
         "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
         "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0,
         "position_embedding_type": "absolute", "transformers_version": "4.6.0.dev0",
         "type_vocab_size": 2, "use_cache": True, "vocab_size": 30522}, indent=2) + "\n")
    return folder


def hub_cache_layout(folder: Path, repo_id: str, root: Path) -> Path:
    """``folder``'s files as a hub cache holds them under ``root``: models--org--name with
    ``refs/main`` naming a snapshot of them (what the hub client reads with the network off)."""
    import shutil

    entry = root / ("models--" + repo_id.replace("/", "--"))
    shutil.copytree(folder, entry / "snapshots" / STANDIN_REVISION)
    (entry / "refs").mkdir(parents=True)
    (entry / "refs" / "main").write_text(STANDIN_REVISION)
    return root


def flaggems_bert_tokenizer(image: str, cache: Path) -> None:
    """FlagGems' ``bert-base-uncased-tokenizer``: a WordPiece tokenizer in bert-base-uncased's
    form instead of the hub's (the GPU machine cannot fetch it).  Laid out as the asset
    declares: a hub cache when it is ``hf_cache`` (the test loads it by hub id), else the
    snapshot's files at its ``dest``."""
    repo = _repo("flagos_ai__FlagGems")
    asset = next(a for a in repo.assets if a.name == "bert-base-uncased-tokenizer")
    with _scratch() as scratch:
        folder = bert_tokenizer_folder(image, scratch)
        if asset.hf_cache:
            folder = hub_cache_layout(folder, str(asset.id), Path(scratch) / "hub")
        AssetCache(cache).ingest(repo, asset.name, folder, origin=BERT_ORIGIN)


# --------------------------------------------------------------------------- ml-aim

#: main_attnprobe.py builds ``aim_600M(probe_layers=6)`` (``--probe-layers last``) and loads
#: ``torch.load(backbone) | torch.load(head)`` strictly.  The stand-in state dicts are the
#: repository's own model's, built on the meta device (no 2.7 GB initialisation): every key
#: and shape of ``aim.v1.torch.models.aim_600M``; the ``head.`` keys go to head.pth, the rest
#: to backbone.pth.  Norm scales and BatchNorm variances are 1, biases and means 0, the other
#: weights normal(0, 0.02) values cut from one 64M-value random pool at random offsets (a
#: memory copy each, not 687M fresh draws), float32 as the released files are.
AIM_MODEL = """
import os, sys, torch
sys.path.insert(0, "/data/project/repo/aim-v1")
from aim.v1.torch.models import aim_600M
out = sys.argv[1]
with torch.device("meta"):
    model = aim_600M(probe_layers=6)
gen = torch.Generator().manual_seed(0)
pool = torch.randn(1 << 26, generator=gen) * 0.02
backbone, head = {}, {}
for name, meta in model.state_dict().items():
    leaf = name.rsplit(".", 1)[-1]
    if meta.dtype == torch.int64:
        value = torch.zeros(meta.shape, dtype=torch.int64)
    elif leaf in ("bias", "running_mean"):
        value = torch.zeros(meta.shape)
    elif leaf == "running_var" or (leaf == "weight" and meta.dim() == 1):
        value = torch.ones(meta.shape)
    else:
        n = meta.numel()
        start = int(torch.randint(0, pool.numel() - n + 1, (1,), generator=gen))
        value = pool[start:start + n].view(meta.shape).clone()
    (head if name.startswith("head.") else backbone)[name] = value
os.makedirs(out)
torch.save(backbone, os.path.join(out, "backbone.pth"))
torch.save(head, os.path.join(out, "head.pth"))
print("stand-in aim-600M", sum(v.numel() for v in backbone.values()), "backbone and",
      sum(v.numel() for v in head.values()), "head values")
"""
AIM_ORIGIN = (
    "stand-in: random backbone.pth and head.pth state dicts of ml-aim's own aim_600M "
    "(probe_layers=6, --probe-layers last), every key and shape of the repository's model "
    "built on the meta device, float32, normal(0, 0.02) weights, unit norms and zero biases; "
    "the hub is not reachable there")
AIM_IMAGE_ORIGIN = ("stand-in: a synthetic 256x256 RGB JPEG (gradients and two shapes) for the "
                    "one-image ImageFolder; the URL is not reachable there")


def ml_aim_assets(image: str, cache: Path) -> None:
    """ml-aim's C3 assets: the aim-600M attentive-probe checkpoints (random, the repository's
    shapes, about 2.7 GB made where the stage runs) and the one-image ImageFolder's JPEG, in
    place of the hub files and the URL image the GPU machine cannot fetch."""
    _image_and_model(image, cache, "apple__ml_aim",
                     ("imagefolder_1img", "dog.jpg", 256, AIM_IMAGE_ORIGIN),
                     ("aim-600M_attnprobe", AIM_MODEL, "aim-600M-last", AIM_ORIGIN))


def _image_and_model(image: str, cache: Path, slug: str, jpeg: tuple[str, str, int, str],
                     model: tuple[str, str, str, str]) -> None:
    """A synthetic JPEG asset (asset, file name, side, origin) and a folder a script of the
    environment makes (asset, script, folder, origin), both ingested for ``slug``'s module."""
    repo = _repo(slug)
    store = AssetCache(cache)
    with _scratch() as scratch:
        asset, name, side, origin = jpeg
        store.ingest(repo, asset, _jpeg(image, scratch, name, side), origin=origin)
        asset, script, folder, origin = model
        run_script(image, script, scratch, f"/out/{folder}")
        store.ingest(repo, asset, Path(scratch) / folder, origin=origin)


# --------------------------------------------------------------------------- MultiModalMamba

#: hf-internal-testing/tiny-random-vit's sizes (ViTModelTester's: width 32, 5 layers, 4 heads,
#: MLP 37, 30x30 images in 2x2 patches) as transformers' ViTModel, random, saved as the hub
#: holds it: config.json and a torch.save'd pytorch_model.bin.
TINY_VIT = """
import os, sys, torch
from transformers import ViTConfig, ViTModel
out = sys.argv[1]
config = ViTConfig(hidden_size=32, num_hidden_layers=5, num_attention_heads=4,
                   intermediate_size=37, hidden_act="gelu", hidden_dropout_prob=0.1,
                   attention_probs_dropout_prob=0.1, image_size=30, patch_size=2,
                   num_channels=3, qkv_bias=True, encoder_stride=2,
                   architectures=["ViTModel"])
torch.manual_seed(0)
model = ViTModel(config)
config.save_pretrained(out)
torch.save(model.state_dict(), os.path.join(out, "pytorch_model.bin"))
print("stand-in tiny-random-vit", sum(p.numel() for p in model.parameters()), "parameters")
"""
TINY_VIT_ORIGIN = (
    "stand-in: transformers' ViTModel at hf-internal-testing/tiny-random-vit's sizes (width 32, "
    "5 layers, 4 heads, 30x30 images, 2x2 patches), random, config.json and pytorch_model.bin; "
    "the hub is not reachable there (example.py does not read it)")
LENA_ORIGIN = ("stand-in: a synthetic 512x512 RGB JPEG (gradients and two shapes); the URL is "
               "not reachable there (example.py does not read it)")


def multimodal_mamba_assets(image: str, cache: Path) -> None:
    """MultiModalMamba's two recorded assets, which example.py never reads: a synthetic JPEG
    for ``lena`` and a random ViT at tiny-random-vit's sizes, in place of the URL image and
    the hub model the GPU machine cannot fetch."""
    _image_and_model(image, cache, "kyegomez__MultiModalMamba",
                     ("lena", "lena.jpg", 512, LENA_ORIGIN),
                     ("tiny-random-vit", TINY_VIT, "tiny-random-vit", TINY_VIT_ORIGIN))

