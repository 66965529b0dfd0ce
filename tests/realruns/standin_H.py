"""Stand-ins for the batch-H rows of ``table.py``: what their C1 stages read from the network.

As in ``standin_A.py``: the hub and the other servers are not reachable here,
so a C1 stage's model or data set gets a stand-in, the repository's own
model class (or the class its library loads) with random weights, or a
small synthetic file in the real format, made in a container of the row's
image with the network off and put in the asset cache with
``AssetCache.ingest(..., origin="stand-in: ...")``, so every outcome that
uses it says what it is.  ``build.py`` calls each function as
``standin_H:function`` with the image's tag and the asset cache.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import standin
from standin_A import run_script as run

# --------------------------------------------------------------------------- LettuceDetect

#: The ettin encoder's class (``ModernBertForMaskedLM``, as the hub's config.json names it)
#: at a tiny size with random weights, and a WordPiece tokenizer trained here on the sample
#: texts with ModernBERT's special tokens and its pair template ([CLS] A [SEP] B [SEP]), a fast
#: tokenizer, since the dataset asks for offset mappings.
LETTUCE_MODEL = """
import sys, torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
from transformers import ModernBertConfig, ModernBertForMaskedLM, PreTrainedTokenizerFast
out, texts = sys.argv[1], sys.argv[2:]
special = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
tok.normalizer = normalizers.Lowercase()
tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=300, special_tokens=special))
cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
tok.post_processor = processors.TemplateProcessing(
    single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]",
                               sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]",
                               model_max_length=8192)
fast.save_pretrained(out)
config = ModernBertConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=96,
                          num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=8192,
                          global_attn_every_n_layers=1, local_attention=128,
                          pad_token_id=fast.pad_token_id, cls_token_id=cls, sep_token_id=sep,
                          bos_token_id=cls, eos_token_id=sep)
torch.manual_seed(0)
model = ModernBertForMaskedLM(config)
model.save_pretrained(out)
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
LETTUCE_MODEL_ORIGIN = (
    "stand-in: random-init ModernBertForMaskedLM (the class of jhu-clsp/ettin-encoder-17m's "
    "config; hidden 64, 2 layers, 4 heads) and a WordPiece tokenizer trained on the stand-in "
    "RAGTruth texts with ModernBERT's special tokens, saved with save_pretrained (the hub is not "
    "reachable here)")

#: Four RAGTruth records (two tasks, three splits) in the fields and types of the real
#: ``response.jsonl`` and ``source_info.jsonl`` of ParticleMedia/RAGTruth's dataset/ folder.
LETTUCE_SOURCES = [
    ("QA", "The committee met in the old town hall on a cold morning in March.",
     "Where did the committee meet?"),
    ("Summary", "The river flooded the lower fields after three days of rain; the farmers "
     "moved their sheep to the hill.", None),
]
LETTUCE_RESPONSES = [
    # source index, split, response, hallucinated span (or None)
    (0, "train", "The committee met in the new library in March.", "new library"),
    (1, "train", "After rain the river flooded the fields and the farmers sold their sheep.",
     "sold their sheep"),
    (0, "train", "It met in the old town hall.", None),
    (1, "test", "The farmers moved their sheep to the hill after the flood.", None),
]
LETTUCE_ORIGIN = (
    "stand-in: four synthetic RAGTruth records (response.jsonl: id, source_id, model, "
    "temperature, labels with start/end/text/meta/label_type/implicit_true/due_to_null, split, "
    "quality, response; source_info.jsonl: source_id, task_type, source, source_info, prompt) "
    "in the real files' fields (raw.githubusercontent.com is not reachable here)")


def ragtruth_records() -> tuple[list[dict], list[dict]]:
    """The stand-in ``source_info.jsonl`` and ``response.jsonl`` rows."""
    sources = []
    for i, (task, text, question) in enumerate(LETTUCE_SOURCES):
        info = {"question": question, "passages": text} if question else text
        prompt = (f"Briefly answer the following question:\n{question}\nBear in mind that your "
                  f"response should be strictly based on the following passage:\n{text}\n"
                  if question else f"Summarize the following news within 30 words:\n{text}\n")
        sources.append({"source_id": str(100 + i), "task_type": task, "source": "MARCO"
                        if question else "CNN/DM", "source_info": info, "prompt": prompt})
    responses = []
    for n, (src, split, text, span) in enumerate(LETTUCE_RESPONSES):
        labels = []
        if span:
            start = text.index(span)
            labels.append({"start": start, "end": start + len(span), "text": span,
                           "meta": "HIGH INTRO OF NEW INFO", "label_type": "Evident Baseless Info",
                           "implicit_true": False, "due_to_null": False})
        responses.append({"id": str(n), "source_id": str(100 + src), "model": "gpt-4-0613",
                          "temperature": 0.7, "labels": labels, "split": split,
                          "quality": "good", "response": text})
    return sources, responses


def lettuce_assets(image: str, cache: Path) -> None:
    """LettuceDetect's raw RAGTruth files (synthetic) and the ettin encoder's stand-in."""
    from pytest_reb.assets.cache import AssetCache

    repo = standin.load_repo(standin.ROOT / "repos" / "test_KRLabsOrg__LettuceDetect.py")
    sources, responses = ragtruth_records()
    with tempfile.TemporaryDirectory() as scratch:
        raw = Path(scratch) / "ragtruth"
        raw.mkdir()
        (raw / "source_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sources))
        (raw / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
        texts = [s["prompt"] for s in sources] + [r["response"] for r in responses]
        run(image, LETTUCE_MODEL, scratch, "/out/model", *texts)
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "ragtruth_mini", raw, origin=LETTUCE_ORIGIN)
        cache_.ingest(repo, "ettin-encoder-17m", Path(scratch) / "model",
                      origin=LETTUCE_MODEL_ORIGIN)


# --------------------------------------------------------------------------- kvpress

#: WordNet 3.0's lexicographer file names, as its ``lexnames`` file lists them (number, name,
#: syntactic category).
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl"
]
#: The category number of each lexicographer file's prefix.
LEX_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
#: The stand-in's synsets, per part of speech: (lexicographer file, lemmas, gloss).
WORDNET_SYNSETS = {
    "noun": [("noun.artifact", ["hall", "town_hall"], "a large building used by a town"),
             ("noun.group", ["committee", "commission"], "a body of people chosen for a task"),
             ("noun.time", ["morning", "forenoon"], "the time between sunrise and noon")],
    "verb": [("verb.social", ["meet", "gather", "assemble"], "come together")],
    "adj": [("adj.all", ["cold"], "having a low temperature")],
    "adv": [("adv.all", ["quickly", "rapidly"], "with speed")],
}
#: The part-of-speech letter of each file suffix.
WORDNET_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
#: The license header every data and index file begins with (lines starting with two spaces);
#: nltk's reader reads the version from the data.adj one.
WORDNET_HEADER = (
    "  1 This file is a stand-in made by pytest-reb in the layout of WordNet 3.0.\n"
    "  2 WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.\n")
WORDNET_ORIGIN = (
    "stand-in: a WordNet corpus folder in the real layout of nltk_data's corpora/wordnet "
    "(lexnames, data.*, index.*, *.exc, index.sense, cntlist.rev in the WordNet 3.0 formats, "
    "byte offsets as the data files' keys), six synsets only (raw.githubusercontent.com is not "
    "reachable here)")


def wordnet_files() -> dict[str, str]:
    """The stand-in WordNet's files: name -> text, in the WordNet 3.0 database formats
    (wndb(5WN): data lines keyed by their byte offset, index lines by lemma)."""
    files = {"lexnames": "".join(f"{i:02d}\t{name}\t{LEX_CATEGORY[name.split('.')[0]]}\n"
                                 for i, name in enumerate(LEXNAMES))}
    senses = []
    for suffix, synsets in WORDNET_SYNSETS.items():
        pos = WORDNET_POS[suffix]
        data, offset, index = WORDNET_HEADER, len(WORDNET_HEADER), {}
        for lexname, lemmas, gloss in synsets:
            words = " ".join(f"{lemma} 0" for lemma in lemmas)
            frames = " 01 + 02 00" if suffix == "verb" else ""
            line = (f"{offset:08d} {LEXNAMES.index(lexname):02d} {pos} {len(lemmas):02x} "
                    f"{words} 000{frames} | {gloss}  \n")
            for lemma in lemmas:
                index.setdefault(lemma, []).append(offset)
                senses.append(f"{lemma}%{LEX_CATEGORY[suffix]}:{LEXNAMES.index(lexname):02d}:00::"
                              f" {offset:08d} 1 0\n")
            data += line
            offset += len(line.encode())
        files[f"data.{suffix}"] = data
        files[f"index.{suffix}"] = WORDNET_HEADER + "".join(
            f"{lemma} {pos} {len(offs)} 0 {len(offs)} 0 {' '.join(f'{o:08d}' for o in offs)}  \n"
            for lemma, offs in sorted(index.items()))
        first = synsets[0][1][0]
        files[f"{suffix}.exc"] = f"{first}s {first}\n"
    files["index.sense"] = "".join(sorted(senses))
    files["cntlist.rev"] = "".join(f"{s.split()[0]} 1 0\n" for s in sorted(senses))
    return files


#: bert_score's roberta-large: RobertaForMaskedLM (the hub checkpoint's class) at a tiny width
#: with roberta-large's 24 layers (bert_score takes layer 17 and asserts the model has it) and
#: random weights, and a byte-level BPE tokenizer trained here, saved as roberta's
#: vocab.json and merges.txt (bert_score asks for the slow tokenizer), in a Hugging Face hub
#: cache layout under its hub id, which the hub client falls back to without the network.
ROBERTA_MODEL = """
import os, sys, tempfile, torch
from tokenizers import ByteLevelBPETokenizer
from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast
out, texts = sys.argv[1], sys.argv[2:]
root = os.path.join(out, "models--roberta-large")
rev = "0" * 40
snap = os.path.join(root, "snapshots", rev)
os.makedirs(snap)
bpe = ByteLevelBPETokenizer()
bpe.train_from_iterator(texts, vocab_size=400,
                        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
with tempfile.TemporaryDirectory() as raw:
    bpe.save_model(raw)
    tok = RobertaTokenizerFast(os.path.join(raw, "vocab.json"), os.path.join(raw, "merges.txt"),
                               model_max_length=512)
tok.save_pretrained(snap)
config = RobertaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                       num_hidden_layers=24, num_attention_heads=2, max_position_embeddings=514,
                       pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                       eos_token_id=tok.eos_token_id, type_vocab_size=1)
torch.manual_seed(0)
model = RobertaForMaskedLM(config)
model.save_pretrained(snap)
os.makedirs(os.path.join(root, "refs"))
open(os.path.join(root, "refs", "main"), "w").write(rev)
print("stand-in", root, sum(p.numel() for p in model.parameters()), "parameters")
"""
ROBERTA_ORIGIN = (
    "stand-in: random-init RobertaForMaskedLM (roberta-large's class; hidden 32, 24 layers) and "
    "a byte-level BPE tokenizer trained here (vocab.json, merges.txt), saved with "
    "save_pretrained into a Hugging Face hub cache layout as models--roberta-large (the hub is "
    "not reachable here)")
#: Text the stand-in tokenizer is trained on: the LooGLE stand-in rows' words.
ROBERTA_TEXTS = ("The committee met in the old town hall on a cold morning.",
                 "The morning was cold and grey.", "in the old town hall", "cold and grey",
                 "Hi there", "hi there")


def kvpress_assets(image: str, cache: Path) -> None:
    """kvpress's assets: batch A's tiny Llama and LooGLE rows (``standin_A.kvpress_assets``),
    and pytest-reb's two additions, roberta-large and WordNet."""
    import standin_A

    from pytest_reb.assets.cache import AssetCache

    standin_A.kvpress_assets(image, cache)
    repo = standin.load_repo(standin.ROOT / "repos" / "test_NVIDIA__kvpress.py")
    with tempfile.TemporaryDirectory() as scratch:
        run(image, ROBERTA_MODEL, scratch, "/out/hub", *ROBERTA_TEXTS)
        corpora = Path(scratch) / "corpora"
        (corpora / "wordnet").mkdir(parents=True)  # as wordnet.zip unpacks under corpora/
        for name, text in wordnet_files().items():
            (corpora / "wordnet" / name).write_text(text)
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "roberta-large", Path(scratch) / "hub", origin=ROBERTA_ORIGIN)
        cache_.ingest(repo, "wordnet", corpora, origin=WORDNET_ORIGIN)


# --------------------------------------------------------------------------- Texo

#: Where the session's ``fetch`` tool puts GitHub repositories.
#: The fetch mirror (``REB_MIRROR`` on the GPU machine: the packs ``gpu_repos.py`` unpacks).
MIRROR = Path(os.environ.get("REB_MIRROR", "/work/.mirror"))
#: The real files of pytest-reb's two additions to Texo (not stand-ins): the evaluate
#: repository's metrics/bleu, which the hub's evaluate-metric/bleu space holds, and
#: tensorflow/nmt's nmt/scripts/bleu.py, which bleu.py imports as nmt_bleu; (mirror, commit,
#: path in the repository, name in the modules cache) per file.
TEXO_BLEU = {
    "bleu": [("huggingface+evaluate", "143a05c9844fa000fdcb324d30a750f139217fdd",
              "metrics/bleu/bleu.py", "bleu.py"),
             ("huggingface+evaluate", "143a05c9844fa000fdcb324d30a750f139217fdd",
              "metrics/bleu/tokenizer_13a.py", "tokenizer_13a.py")],
    "nmt_bleu": [("tensorflow+nmt", "0be864257a76c151eef20ea689755f08bc1faf4e",
                  "nmt/scripts/bleu.py", "nmt_bleu.py")],
}
TEXO_BLEU_ORIGIN = (
    "copy: the real files from GitHub, not stand-ins: {what} at commit {commit} (the last to "
    "change them in the session's fetched mirror; the hub is not reachable here, and the "
    "evaluate-metric/bleu space mirrors the evaluate repository's metrics/bleu)")


def texo_assets(image: str, cache: Path) -> None:
    """Texo's stand-ins of batch B (``standin_B.texo_formulanet``) and the real BLEU metric
    files of pytest-reb's two additions, from the GitHub mirrors."""
    import subprocess

    import standin_B

    from pytest_reb.assets.cache import AssetCache

    standin_B.texo_formulanet(image, cache)
    repo = standin.load_repo(standin.ROOT / "repos" / "test_alephpi__Texo.py")
    for name, files in TEXO_BLEU.items():
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / name
            folder.mkdir()
            for mirror, commit, path, as_name in files:
                text = subprocess.run(
                    ["git", "-C", str(MIRROR / mirror / "repo"), "show", f"{commit}:{path}"],
                    check=True, capture_output=True, text=True).stdout
                (folder / as_name).write_text(text)
            what = ", ".join(f"{m.replace('+', '/')}:{p}" for m, _, p, _ in files)
            AssetCache(cache).ingest(repo, name, folder, origin=TEXO_BLEU_ORIGIN.format(
                what=what, commit=files[0][1]))


# --------------------------------------------------------------------------- Kokoro-FastAPI

#: Kokoro-82M's config.json sizes (hidden 512, style 128 as the repository's voice packs are
#: [510, 1, 256], istftnet's upsampling 10 x 6 with a 20-point iSTFT, ALBERT 768 x 12), a
#: vocabulary of punctuation and IPA symbols (the real file's 178 token ids; its exact table is
#: not reachable here), and KModel, kokoro's own class, with random weights: built with
#: ``torch.load`` answering ``{}`` for the checkpoint it would load, then saved as kokoro-v1_0.pth
#: holds it (one state dict per part: bert, bert_encoder, predictor, text_encoder, decoder).
KOKORO_MODEL = """
import json, os, sys, torch
import kokoro.model as km
out = sys.argv[1]
os.makedirs(out)
symbols = list(';:,.!?\\u2014\\u2026"()\\u201c\\u201d ') + list("abcdefhijklmnopqrstuvwxyz")
symbols += list("\\u0251\\u0250\\u0252\\u00e6\\u03b2\\u0254\\u0255\\u00e7\\u0256\\u00f0\\u02a4"
                "\\u0259\\u025a\\u025b\\u025c\\u025f\\u0261\\u0265\\u0268\\u026a\\u029d\\u026f"
                "\\u0270\\u014b\\u0273\\u0272\\u0274\\u00f8\\u0278\\u03b8\\u0153\\u0279\\u027e"
                "\\u027b\\u0281\\u027d\\u0282\\u0283\\u0288\\u02a7\\u028a\\u028b\\u028c\\u0263"
                "\\u0264\\u03c7\\u028e\\u0292\\u0294\\u02c8\\u02cc\\u02d0\\u02b0\\u02b2\\u2193"
                "\\u2192\\u2197\\u2198\\u1d7b")
vocab = {s: i + 1 for i, s in enumerate(dict.fromkeys(symbols))}
config = {"istftnet": {"upsample_kernel_sizes": [20, 12], "upsample_rates": [10, 6],
                       "gen_istft_hop_size": 5, "gen_istft_n_fft": 20,
                       "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
                       "resblock_kernel_sizes": [3, 7, 11], "upsample_initial_channel": 512},
          "dim_in": 64, "dropout": 0.2, "hidden_dim": 512, "max_conv_dim": 512, "max_dur": 50,
          "multispeaker": True, "n_layer": 3, "n_mels": 80, "n_token": 178, "style_dim": 128,
          "text_encoder_kernel_size": 5,
          "plbert": {"hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 2048,
                     "max_position_embeddings": 512, "num_hidden_layers": 12, "dropout": 0.1},
          "vocab": vocab}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, ensure_ascii=False, indent=1)
torch.manual_seed(0)
load = km.torch.load
km.torch.load = lambda *a, **k: {}
try:
    model = km.KModel(repo_id="hexgrad/Kokoro-82M", config=os.path.join(out, "config.json"),
                      model="none")
finally:
    km.torch.load = load
parts = ("bert", "bert_encoder", "predictor", "text_encoder", "decoder")
torch.save({p: getattr(model, p).state_dict() for p in parts},
           os.path.join(out, "kokoro-v1_0.pth"))
km.KModel(repo_id="hexgrad/Kokoro-82M", config=os.path.join(out, "config.json"),
          model=os.path.join(out, "kokoro-v1_0.pth"))  # loads back as the server will
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
KOKORO_ORIGIN = (
    "stand-in: random-init KModel (kokoro 0.9.4's own class) with Kokoro-82M's config sizes and "
    "a punctuation + IPA vocabulary of our own, saved as kokoro-v1_0.pth holds it (one state "
    "dict per part) with its config.json (the GitHub release asset is not reachable here)")


def kokoro_model(image: str, cache: Path) -> None:
    """Kokoro-FastAPI's ``kokoro-v1_0`` (config.json and kokoro-v1_0.pth), a stand-in."""
    from pytest_reb.assets.cache import AssetCache

    repo = standin.load_repo(standin.ROOT / "repos" / "test_remsky__Kokoro_FastAPI.py")
    with tempfile.TemporaryDirectory() as scratch:
        run(image, KOKORO_MODEL, scratch, "/out/v1_0")
        AssetCache(cache).ingest(repo, "kokoro-v1_0", Path(scratch) / "v1_0",
                                 origin=KOKORO_ORIGIN)


# --------------------------------------------------------------------------- torchft

#: CIFAR-10's python batches as ``cifar-10-python.tar.gz`` unpacks them: five training batches,
#: one test batch and ``batches.meta``, each a pickle of a dict (``data`` N x 3072 uint8 rows of
#: R, G, B planes, ``labels``, ``filenames``, ``batch_label``; ``label_names`` in the meta),
#: read with ``encoding="latin1"`` as torchvision's CIFAR10 does.  Random pixels, 8 images a
#: batch.  torchvision also checks each file's md5 against the real release's, which no
#: synthetic file can match: this stand-in lets the run reach that check, no further.
CIFAR_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
                 "truck"]
CIFAR_ORIGIN = (
    "stand-in: synthetic CIFAR-10 python batches (data_batch_1..5, test_batch, batches.meta; "
    "8 random 32x32 images each, the real pickles' keys and dtypes) under cifar-10-batches-py "
    "(www.cs.toronto.edu is not reachable here; torchvision's md5 check of each batch cannot "
    "pass on them)")
SQUEEZENET_MODEL = """
import sys, torch, torchvision
torch.manual_seed(0)
model = torchvision.models.squeezenet1_0()
torch.save(model.state_dict(), sys.argv[1])
print("stand-in", sys.argv[1], sum(p.numel() for p in model.parameters()), "parameters")
"""
SQUEEZENET_ORIGIN = ("stand-in: random-init torchvision.models.squeezenet1_0() state dict "
                     "(torchvision's own class; download.pytorch.org is not reachable here)")


def cifar_batches(folder: Path, per_batch: int = 8) -> None:
    """Write the stand-in batches into ``folder`` (``cifar-10-batches-py``)."""
    import pickle

    import numpy as np

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for n, name in enumerate(names):
        labels = [int(x) for x in rng.integers(0, 10, per_batch)]
        entry = {"batch_label": f"{'testing' if n == 5 else 'training'} batch {n % 5 + 1} of 5",
                 "labels": labels,
                 "data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
                 "filenames": [f"standin_{n}_{i}.png" for i in range(per_batch)]}
        (folder / name).write_bytes(pickle.dumps(entry, protocol=2))
    meta = {"num_cases_per_batch": per_batch, "label_names": CIFAR_CLASSES, "num_vis": 3072}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))


def torchft_assets(image: str, cache: Path) -> None:
    """torchft's CIFAR-10 (synthetic, real layout) and squeezenet1_0 (random weights)."""
    from pytest_reb.assets.cache import AssetCache

    repo = standin.load_repo(standin.ROOT / "repos" / "test_meta_pytorch__torchft.py")
    with tempfile.TemporaryDirectory() as scratch:
        cifar = Path(scratch) / "cifar10"
        cifar_batches(cifar / "cifar-10-batches-py")
        run(image, SQUEEZENET_MODEL, scratch, "/out/squeezenet1_0-b66bff10.pth")
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "cifar10", cifar, origin=CIFAR_ORIGIN)
        cache_.ingest(repo, "squeezenet1_0", Path(scratch) / "squeezenet1_0-b66bff10.pth",
                      origin=SQUEEZENET_ORIGIN)
