"""Batch B's stand-ins: hub and share assets that cannot be fetched here, made for C1.

Each is made the way ``standin.py`` made Depth-Anything-V2's: by the
repository's own model class (or its own data format), with random weights,
under the image's interpreter in a container with no network, and put in the
asset cache with ``AssetCache.ingest(..., origin="stand-in: ...")`` so the
tier's evidence says what it ran on.  The stages then prove that the
environment runs the repository's real code end to end; what the weights
predict is meaningless, and nothing claims otherwise.

``build.py`` calls them by the row's ``standin = "standin_B:<function>"`` with the
image tag and the asset cache.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from standin import ROOT, load_repo

#: The venv every image of ``build.py`` has.
PYTHON = "/opt/envs/research/bin/python"
CHECKOUT = "/data/project/repo"

#: deep-tempest's C1 fine-tunes DRUNet from the checkpoint of an owncloud share (not reachable
#: here).  This is the network the probe's options build (``select_network.define_G`` for
#: net_type drunet: ``UNetRes`` with in_nc 2, out_nc 1, nc [64,128,256,512], nb 4, act_mode R,
#: strideconv / convtranspose, no bias), its state dict saved as the raw download; with
#: G_param_strict true, a key or shape that differs from the repository's class fails the load.
DEEP_TEMPEST = """
import sys, torch
sys.path.insert(0, sys.argv[1] + "/end-to-end")
from models.network_unet import UNetRes
torch.manual_seed(0)
net = UNetRes(in_nc=2, out_nc=1, nc=[64, 128, 256, 512], nb=4, act_mode="R",
              downsample_mode="strideconv", upsample_mode="convtranspose", bias=False)
torch.save(net.state_dict(), sys.argv[2] + "/download")
print("stand-in", sys.argv[2] + "/download", sum(p.numel() for p in net.parameters()), "parameters")
"""
DEEP_TEMPEST_ORIGIN = ("stand-in: random-init DRUNet (UNetRes in_nc 2, out_nc 1, nc "
                       "[64,128,256,512], nb 4) state dict made by the repository's own "
                       "network class (the owncloud share is not reachable here)")


def in_image(image: str, code: str, scratch: Path) -> None:
    """Run ``code`` with the image's venv python, network off, ``scratch`` writable at /out."""
    scratch.chmod(0o777)
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                    "-v", f"{scratch}:/out", "--entrypoint", PYTHON, image, "-c", code,
                    CHECKOUT, "/out"], check=True)


def deep_tempest_drunet(image: str, cache: Path) -> None:
    """deep-tempest's DRUNet checkpoint, as the share's raw download (``model/download``)."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_emidan19__deep_tempest.py")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        in_image(image, DEEP_TEMPEST, out)
        AssetCache(cache).ingest(repo, "drunet_pretrained", out / "download",
                                 origin=DEEP_TEMPEST_ORIGIN)


#: SocialED's SBERT detector loads ``sentence-transformers/paraphrase-MiniLM-L6-v2`` (hub).  The
#: stand-in is that architecture (BERT, 6 layers, hidden 384, 12 heads, mean pooling) with random
#: weights, saved by sentence-transformers in the folder layout ``SentenceTransformer(path)``
#: reads, with a WordPiece vocabulary made here (letters, digits and the words of the data below).
SOCIALED_SBERT = """
import os, sys, string
from transformers import BertConfig, BertModel, BertTokenizerFast
from sentence_transformers import SentenceTransformer, models
words = sys.argv[3].split()
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *string.ascii_lowercase, *string.digits,
         *("##" + c for c in string.ascii_lowercase + string.digits), *sorted(set(words))]
raw = os.path.join(sys.argv[2], "raw")
os.makedirs(raw)
with open(os.path.join(raw, "vocab.txt"), "w") as fh:
    fh.write("\\n".join(vocab) + "\\n")
BertTokenizerFast(os.path.join(raw, "vocab.txt"), do_lower_case=True).save_pretrained(raw)
import torch
torch.manual_seed(0)
config = BertConfig(vocab_size=len(vocab), hidden_size=384, num_hidden_layers=6,
                    num_attention_heads=12, intermediate_size=1536, max_position_embeddings=512)
BertModel(config).save_pretrained(raw)
word = models.Transformer(raw, max_seq_length=128)
pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
out = os.path.join(sys.argv[2], "paraphrase-MiniLM-L6-v2")
SentenceTransformer(modules=[word, pool], device="cpu").save(out)
print("stand-in", out, sum(p.numel() for p in word.parameters()), "parameters")
"""
SOCIALED_SBERT_ORIGIN = ("stand-in: random-init paraphrase-MiniLM-L6-v2 architecture (BERT 6x384, "
                         "mean pooling) saved by sentence-transformers with a WordPiece "
                         "vocabulary made here (the hub is not reachable here)")
#: Event2012.npy is rows of Event2012's 11 columns (object array, pickled); the SBERT detector
#: reads ``filtered_words`` (a list of words) and ``event_id``.  Twelve tweets of three events.
SOCIALED_EVENTS = (
    ("earthquake", "shaking", "buildings", "city"), ("election", "votes", "count", "night"),
    ("storm", "flood", "rain", "warning"),
)
SOCIALED_DATA_ORIGIN = ("stand-in: a synthetic Event2012.npy of 12 rows in Event2012's 11 "
                        "columns, three events (the dataset repository is not reachable here)")


def socialed_rows() -> list[list[object]]:
    """Twelve synthetic tweets in Event2012's column order (see the SocialED shim's COLUMNS)."""
    rows = []
    for i in range(12):
        event = i % len(SOCIALED_EVENTS)
        words = list(SOCIALED_EVENTS[event][: 2 + i % 3])
        rows.append([str(1000 + i), " ".join(words), event, words, words, [], f"user{i}",
                     f"2012-10-{10 + i:02d} 12:00:00", [], [], []])
    return rows


def socialed_sbert(image: str, cache: Path) -> None:
    """SocialED's two assets: the SBERT model folder and Event2012.npy, both stand-ins."""
    import numpy as np

    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_RingBDStack__SocialED.py")
    words = " ".join(w for event in SOCIALED_EVENTS for w in event)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        out.chmod(0o777)
        subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                        "-e", "HF_HUB_OFFLINE=1", "-e", "HOME=/out", "-v", f"{out}:/out",
                        "--entrypoint", PYTHON, image, "-c", SOCIALED_SBERT, CHECKOUT, "/out",
                        words], check=True)
        AssetCache(cache).ingest(repo, "paraphrase-MiniLM-L6-v2",
                                 out / "paraphrase-MiniLM-L6-v2", origin=SOCIALED_SBERT_ORIGIN)
        data = out / "Event2012.npy"
        rows = socialed_rows()
        table = np.empty((len(rows), len(rows[0])), dtype=object)  # never a deeper array
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                table[i, j] = value
        np.save(data, table, allow_pickle=True)
        AssetCache(cache).ingest(repo, "Event2012", data, origin=SOCIALED_DATA_ORIGIN)


#: Texo's stages train from ``model.pretrained`` = the first ``*.pt`` of the alephpi/FormulaNet
#: snapshot (hub).  The stand-in is the default model config's network (``FormulaNet`` of the
#: repository, config/model/formulanet-S.yaml with no checkpoint: HGNetV2 encoder, MBart decoder)
#: with random weights, its state dict at ``checkpoints/formulanet.pt`` (strict load at train
#: time).  ``texo.utils.config`` registers the custom encoder type, as train.py's import does.
TEXO_MODEL = """
import os, sys, torch
sys.path.insert(0, sys.argv[1] + "/src")
from omegaconf import OmegaConf
import texo.utils.config  # registers my_hgnetv2 with transformers' Auto classes
from texo.model.formulanet import FormulaNet
cfg = OmegaConf.to_container(OmegaConf.load(sys.argv[1] + "/config/model/formulanet-S.yaml"))
cfg["pretrained"] = ""
torch.manual_seed(0)
model = FormulaNet(cfg)
out = os.path.join(sys.argv[2], "FormulaNet", "checkpoints")
os.makedirs(out)
torch.save(model.state_dict(), os.path.join(out, "formulanet.pt"))
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
TEXO_MODEL_ORIGIN = ("stand-in: random-init FormulaNet (config/model/formulanet-S.yaml) state "
                     "dict made by the repository's own model class (the hub is not reachable "
                     "here)")
#: UniMER-Train as its hub repository holds it (parquet shards with an ``image`` and a ``text``
#: column), with one formula: a white PNG made with Pillow and its LaTeX.  ``load_dataset`` of the
#: folder reads it as the raw download.
TEXO_DATA = """
import io, os, sys
from PIL import Image, ImageDraw
import datasets
img = Image.new("RGB", (192, 48), "white")
ImageDraw.Draw(img).text((8, 16), "x^2 + y^2 = z^2", fill="black")
buf = io.BytesIO()
img.save(buf, format="PNG")
rows = [{"image": {"bytes": buf.getvalue(), "path": None},
         "text": "x ^ { 2 } + y ^ { 2 } = z ^ { 2 }"}]
features = datasets.Features({"image": datasets.Image(), "text": datasets.Value("string")})
out = os.path.join(sys.argv[2], "UniMER-Train", "data")
os.makedirs(out)
shard = os.path.join(out, "train-00000-of-00001.parquet")
datasets.Dataset.from_list(rows, features=features).to_parquet(shard)
print("stand-in", out)
"""
TEXO_DATA_ORIGIN = ("stand-in: one synthetic formula (a Pillow-drawn PNG and its LaTeX) as a "
                    "parquet shard in UniMER-Train's columns (the hub is not reachable here)")


def texo_formulanet(image: str, cache: Path) -> None:
    """Texo's FormulaNet checkpoint and a one-row UniMER-Train, both stand-ins."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_alephpi__Texo.py")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        in_image(image, TEXO_MODEL, out)
        in_image(image, TEXO_DATA, out)
        AssetCache(cache).ingest(repo, "FormulaNet", out / "FormulaNet",
                                 origin=TEXO_MODEL_ORIGIN)
        AssetCache(cache).ingest(repo, "UniMER-Train", out / "UniMER-Train",
                                 origin=TEXO_DATA_ORIGIN)


#: ml-mdm's stages encode captions with ``--text-model={assets}/model/google__flan-t5-small``
#: (hub), loaded by ``T5Encoder.from_pretrained`` of the repository (a subclass of transformers'
#: T5ForConditionalGeneration); the tokenizer is the checkout's own data/t5.vocab.  The stand-in is
#: flan-t5-small's architecture (d_model 512, 8 layers each side, 6 heads, gated GELU, 32128
#: tokens) with random weights, saved by that class.
ML_MDM_T5 = """
import os, sys, torch
sys.path.insert(0, sys.argv[1] + "/ml-mdm-matryoshka")
from transformers import T5Config
from ml_mdm.language_models.factory import T5Encoder
config = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=1024, num_layers=8,
                  num_decoder_layers=8, num_heads=6, feed_forward_proj="gated-gelu",
                  tie_word_embeddings=False, decoder_start_token_id=0, pad_token_id=0,
                  eos_token_id=1)
torch.manual_seed(0)
model = T5Encoder(config)
out = os.path.join(sys.argv[2], "google__flan-t5-small")
model.save_pretrained(out)
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
ML_MDM_T5_ORIGIN = ("stand-in: random-init flan-t5-small architecture saved by the repository's "
                    "own T5Encoder class (the hub is not reachable here)")


def ml_mdm_t5(image: str, cache: Path) -> None:
    """ml-mdm's text encoder, a stand-in of google/flan-t5-small."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_apple__ml_mdm.py")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        in_image(image, ML_MDM_T5, out)
        AssetCache(cache).ingest(repo, "flan-t5-small", out / "google__flan-t5-small",
                                 origin=ML_MDM_T5_ORIGIN)
