"""Stand-ins for the C3 (``single_gpu``) assets of the GPU machine, continued from ``standin_J``.

As there: the GPU machine has no network, so each function makes a repository's data or
model in the layout its code reads, under the image's interpreter (``docker run``;
``docker_local.py`` there), and puts it in the asset cache with ``AssetCache.ingest(...,
origin="stand-in: ...")``.  ``table.py`` names each as ``standin_K:function``.  Nothing here
is collected by pytest.
"""

from __future__ import annotations

import json
from pathlib import Path

from standin_A import run_script
from standin_J import QWEN_MODEL, _repo, _scratch, hub_cache_layout, qwen_tokenizer_files

from pytest_reb.assets.cache import AssetCache

# --------------------------------------------------------------------------- rllm

#: RelBench's rel-f1 as rllm's RelF1Dataset reads it, small and synthetic: db.zip holding
#: db/<table>.parquet for the nine tables and one zip per task holding <task>/{train,val,test}
#: .parquet, each parquet file with RelBench's schema metadata (fkey_col_to_pkey_table,
#: pkey_col, time_col as JSON).  The columns and keys are those RelBench's F1Dataset.make_db
#: keeps of the Ergast files; 3 circuits, 3 constructors, 6 drivers, two races a year from 1996
#: to 2013 (so the 2005 and 2010 cut-offs leave rows in every split), every driver in every
#: race; task rows every 60 days (driver-position, the mean finishing position in the window)
#: or 30 days (driver-dnf, driver-top3), as RelBench's tasks define them, with their targets.
#: Keys are RelBench's re-indexed ones: each primary key 0..n-1 in row order (rllm's
#: validate_dataset requires it), each foreign key a row number of its table.
REL_F1 = """
import io, json, os, random, sys, zipfile
import numpy as np, pandas as pd, pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
os.makedirs(out)
rng = random.Random(0)

def parquet(df, fkeys, pkey, time_col):
    for col in df.select_dtypes("datetime").columns:  # RelBench's files: timestamp[ns]
        df[col] = df[col].astype("datetime64[ns]")
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = {**(table.schema.metadata or {}),
            b"fkey_col_to_pkey_table": json.dumps(fkeys).encode(),
            b"pkey_col": json.dumps(pkey).encode(), b"time_col": json.dumps(time_col).encode()}
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buf)
    return buf.getvalue()

places = [("albert_park", "Albert Park Grand Prix Circuit", "Melbourne", "Australia",
           -37.8497, 144.968, 10),
          ("monza", "Autodromo Nazionale di Monza", "Monza", "Italy", 45.6156, 9.28111, 162),
          ("silverstone", "Silverstone Circuit", "Silverstone", "UK", 52.0786, -1.01694, 153)]
circuits = pd.DataFrame([dict(circuitId=i, circuitRef=r, name=n, location=l, country=c,
                              lat=la, lng=lo, alt=a)
                         for i, (r, n, l, c, la, lo, a) in enumerate(places)])
nations = ["British", "German", "Italian", "French", "Brazilian", "Finnish"]
drivers = pd.DataFrame({"driverId": range(6),
                        "dob": pd.to_datetime([f"19{70 + i}-0{i + 1}-1{i}" for i in range(6)]),
                        "nationality": nations})
constructors = pd.DataFrame({"constructorId": [0, 1, 2],
                             "name": ["McLaren", "Ferrari", "Williams"],
                             "nationality": ["British", "Italian", "British"]})
races, results, standings, cresults, cstandings, quali = [], [], [], [], [], []
points = {d: 0.0 for d in range(6)}
cpoints = {c: 0.0 for c in range(3)}
for year in range(1996, 2014):
    for rnd, month in ((1, 3), (2, 9)):
        race = len(races)
        circuit = race % 3
        date = pd.Timestamp(year=year, month=month, day=10, hour=14)
        races.append(dict(raceId=race, year=year, round=rnd, circuitId=circuit,
                          name=places[circuit][2] + " Grand Prix", date=date,
                          time="14:00:00"))
        order = rng.sample(range(6), 6)
        for pos, driver in enumerate(order, 1):
            team = driver // 2
            dnf = rng.random() < 0.2
            pts = float(max(0, 10 - 2 * pos)) if not dnf else 0.0
            points[driver] += pts
            cpoints[team] += pts
            results.append(dict(resultId=len(results), raceId=race, driverId=driver,
                                constructorId=team, number=float(driver + 1),
                                grid=rng.randint(1, 6),
                                position=np.nan if dnf else float(pos), positionOrder=pos,
                                points=pts, laps=40 if dnf else 58,
                                milliseconds=np.nan if dnf else 5.4e6 + 1e4 * pos,
                                fastestLap=float(rng.randint(30, 58)),
                                rank=float(rng.randint(1, 6)), statusId=11 if dnf else 1,
                                date=date))
            standings.append(dict(driverStandingsId=len(standings), raceId=race,
                                  driverId=driver, points=points[driver], position=pos,
                                  wins=int(pos == 1), date=date))
            quali.append(dict(qualifyId=len(quali), raceId=race, driverId=driver,
                              constructorId=team, number=driver + 1, position=rng.randint(1, 6),
                              date=date - pd.Timedelta(days=1)))
        for team in range(3):
            cresults.append(dict(constructorResultsId=len(cresults), raceId=race,
                                 constructorId=team, points=cpoints[team], date=date))
            cstandings.append(dict(constructorStandingsId=len(cstandings), raceId=race,
                                   constructorId=team, points=cpoints[team], position=team + 1,
                                   wins=0, date=date))
tables = {
    "circuits": (circuits, {}, "circuitId", None),
    "constructor_results": (pd.DataFrame(cresults), {"raceId": "races",
                            "constructorId": "constructors"}, "constructorResultsId", "date"),
    "constructors": (constructors, {}, "constructorId", None),
    "constructor_standings": (pd.DataFrame(cstandings), {"raceId": "races",
                              "constructorId": "constructors"}, "constructorStandingsId", "date"),
    "drivers": (drivers, {}, "driverId", None),
    "qualifying": (pd.DataFrame(quali), {"raceId": "races", "driverId": "drivers",
                   "constructorId": "constructors"}, "qualifyId", "date"),
    "races": (pd.DataFrame(races), {"circuitId": "circuits"}, "raceId", "date"),
    "results": (pd.DataFrame(results), {"raceId": "races", "driverId": "drivers",
                "constructorId": "constructors"}, "resultId", "date"),
    "standings": (pd.DataFrame(standings), {"raceId": "races", "driverId": "drivers"},
                  "driverStandingsId", "date"),
}
with zipfile.ZipFile(os.path.join(out, "db.zip"), "w") as z:
    for name, (df, fkeys, pkey, time_col) in tables.items():
        z.writestr(f"db/{name}.parquet", parquet(df, fkeys, pkey, time_col))
res = pd.DataFrame(results)
qual = pd.DataFrame(quali)
tasks = {"driver-position": (60, lambda w, q: w["position"].mean(), "position"),
         "driver-dnf": (30, lambda w, q: int(w["position"].isna().any()), "did_not_finish"),
         "driver-top3": (30, lambda w, q: int((q["position"] <= 3).any()), "qualifying")}
splits = {"train": (1996, 2005), "val": (2005, 2010), "test": (2010, 2014)}
for task, (days, target, col) in tasks.items():
    with zipfile.ZipFile(os.path.join(out, f"tasks_{task}.zip"), "w") as z:
        for split, (first, last) in splits.items():
            rows = []
            for ts in pd.date_range(f"{first}-01-01", f"{last}-01-01", freq=f"{days}D")[:-1]:
                end = ts + pd.Timedelta(days=days)
                for driver in range(6):
                    w = res[(res.driverId == driver) & (res.date > ts) & (res.date <= end)]
                    q = qual[(qual.driverId == driver) & (qual.date > ts) & (qual.date <= end)]
                    if len(w):
                        value = target(w, q)
                        if value == value:  # a window whose every race was a DNF has no mean
                            rows.append({"date": ts, "driverId": driver, col: value})
            df = pd.DataFrame(rows)
            z.writestr(f"{task}/{split}.parquet",
                       parquet(df, {"driverId": "drivers"}, None, "date"))
            print(task, split, len(df), "rows")
"""
REL_F1_ORIGIN = (
    "stand-in: a synthetic rel-f1 in RelBench's download layout (db.zip: the nine tables as "
    "parquet with RelBench's key and time metadata and the columns F1Dataset.make_db keeps; "
    "one zip per task with train/val/test parquet and their targets), 3 circuits, 3 "
    "constructors, 6 drivers, 36 races 1996-2013; the RelBench server is not reachable there")

#: sentence-transformers' average_word_embeddings_glove.6B.300d in its hub repository's
#: layout (modules.json, 0_WordEmbeddings with the whitespace tokenizer's vocabulary and the
#: embedding matrix, 1_Pooling with mean pooling), the vocabulary the stand-in tables' words,
#: lower-cased as GloVe 6B's are, the 300-dimensional vectors random (row 0, PADDING_TOKEN, zero).
GLOVE = """
import json, os, re, sys, torch
out, words = sys.argv[1], sorted(set(sys.argv[2].lower().split()))
emb = os.path.join(out, "0_WordEmbeddings")
pool = os.path.join(out, "1_Pooling")
os.makedirs(emb)
os.makedirs(pool)
dump = lambda path, obj: json.dump(obj, open(path, "w"), indent=2)
dump(os.path.join(out, "modules.json"), [
    {"idx": 0, "name": "0", "path": "0_WordEmbeddings",
     "type": "sentence_transformers.models.WordEmbeddings"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])
dump(os.path.join(out, "config_sentence_transformers.json"), {"__version__": {}})
dump(os.path.join(emb, "wordembedding_config.json"), {
    "tokenizer_class":
        "sentence_transformers.models.tokenizer.WhitespaceTokenizer.WhitespaceTokenizer",
    "update_embeddings": False, "max_seq_length": 1000000})
dump(os.path.join(emb, "whitespacetokenizer_config.json"),
     {"vocab": ["PADDING_TOKEN", *words], "stop_words": [], "do_lower_case": False})
torch.manual_seed(0)
weights = torch.randn(len(words) + 1, 300) * 0.1
weights[0] = 0
torch.save({"emb_layer.weight": weights}, os.path.join(emb, "pytorch_model.bin"))
dump(os.path.join(pool, "config.json"), {
    "word_embedding_dimension": 300, "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False})
print("stand-in glove.6B.300d", len(words), "words")
"""
GLOVE_WORDS = ("Albert Park Grand Prix Circuit Melbourne Australia Autodromo Nazionale di Monza "
               "Italy Silverstone UK British German Italian French Brazilian Finnish McLaren "
               "Ferrari Williams albert_park monza silverstone")
GLOVE_ORIGIN = (
    "stand-in: sentence-transformers/average_word_embeddings_glove.6B.300d's layout (modules.json, "
    "0_WordEmbeddings: whitespace tokenizer and embedding matrix, 1_Pooling: mean) in a hub "
    "cache, the vocabulary the stand-in rel-f1's words, random 300-dimensional vectors; the hub "
    "is not reachable there")


def rllm_rel_f1(image: str, cache: Path) -> None:
    """rllm's rel-f1 zips (synthetic, RelBench's layout and schema) and the GloVe embedding
    model's files (random vectors) in a hub cache, in place of the RelBench server's download
    and the hub model the GPU machine cannot fetch."""
    repo = _repo("rllm_team__rllm")
    glove = next(a for a in repo.assets if a.name == "glove-6B-300d")
    store = AssetCache(cache)
    with _scratch() as scratch:
        run_script(image, REL_F1, scratch, "/out/rel-f1")
        store.ingest(repo, "rel-f1", Path(scratch) / "rel-f1", origin=REL_F1_ORIGIN)
        run_script(image, GLOVE, scratch, "/out/glove", GLOVE_WORDS)
        hub = hub_cache_layout(Path(scratch) / "glove", str(glove.id), Path(scratch) / "hub")
        store.ingest(repo, glove.name, hub, origin=GLOVE_ORIGIN)


# --------------------------------------------------------------------------- SpecForge

#: Qwen/Qwen2.5-0.5B-Instruct's config.json (the hub's keys and values but the sizes), shrunk:
#: width 64, 8 layers (train_eagle3's default auxiliary layers are 1, n/2 - 1 and n - 4, so
#: at least 5), 4 query and 2 key/value heads, and a 16384-entry embedding: the draft config
#: the setup derives keeps configs/qwen2.5-7b-eagle3.json's draft_vocab_size 16000, and the
#: vocabulary mapping fills the draft vocabulary with target ids below it.  The stand-in
#: tokenizer's ids are the first 353 of them.
QWEN25_CONFIG = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
                 "hidden_act": "silu", "hidden_size": 64, "initializer_range": 0.02,
                 "intermediate_size": 128, "max_position_embeddings": 32768,
                 "max_window_layers": 8, "model_type": "qwen2", "num_attention_heads": 4,
                 "num_hidden_layers": 8, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                 "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": True,
                 "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": True,
                 "use_sliding_window": False, "vocab_size": 16384}
SPECFORGE_MODEL_ORIGIN = (
    "stand-in: a tiny random Qwen2 (transformers' Qwen2ForCausalLM, 8 layers of width 64, 4 "
    "query and 2 key/value heads, a 16384-entry embedding; bfloat16 model.safetensors, tied "
    "lm_head left out) with Qwen/Qwen2.5-0.5B-Instruct's config.json keys, and a byte-level "
    "BPE tokenizer in Qwen2's form with a Qwen chat template, trained from scratch with "
    "tokenizers; the hub is not reachable there")
#: Eight ShareGPT conversations in the hub dataset's raw JSON form (a list of {id,
#: conversations: [{from, value}]}, human and gpt turns), which the setup's prepare_data.py
#: reads as its --data-path.
SHAREGPT_TURNS = [
    ("What is the capital of France?", "The capital of France is Paris."),
    ("Write a haiku about the sea.", "Grey waves fold and break / salt wind over the harbour "
     "/ gulls call the tide home."),
    ("How do I reverse a list in Python?", "Use my_list.reverse() in place, or my_list[::-1] "
     "for a reversed copy."),
    ("Explain photosynthesis in one sentence.", "Plants turn light, water and carbon dioxide "
     "into sugar and oxygen."),
    ("List three prime numbers.", "2, 3 and 5."),
    ("Translate 'good morning' into Spanish.", "Buenos dias."),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet."),
    ("Give me a tip for better sleep.", "Keep a regular bedtime and avoid screens for an hour "
     "before it."),
]
SHAREGPT_ORIGIN = (
    "stand-in: eight two-turn conversations in ShareGPT_Vicuna_unfiltered's raw JSON form "
    "(id, conversations of human/gpt turns), written here; the hub is not reachable there")


def specforge_assets(image: str, cache: Path) -> None:
    """SpecForge's target model (a tiny random Qwen2 in Qwen2.5-0.5B-Instruct's form, with a
    Qwen tokenizer) and eight ShareGPT conversations, in place of the hub model and data set
    the GPU machine cannot fetch; the setup steps derive the draft config and the training
    file from them as they would from the real ones."""
    repo = _repo("sgl_project__SpecForge")
    store = AssetCache(cache)
    with _scratch() as scratch:
        raw = Path(scratch) / "sharegpt"
        raw.mkdir()
        rows = [{"id": f"stand-in-{i}", "conversations": [{"from": "human", "value": q},
                                                          {"from": "gpt", "value": a}]}
                for i, (q, a) in enumerate(SHAREGPT_TURNS)]
        (raw / "ShareGPT_V4.3_unfiltered_cleaned_split.json").write_text(json.dumps(rows))
        store.ingest(repo, "sharegpt_train", raw, origin=SHAREGPT_ORIGIN)
        run_script(image, QWEN_MODEL, scratch, "/out/model", json.dumps(QWEN25_CONFIG),
                   "Qwen2ForCausalLM", "Qwen2Config")
        model = Path(scratch) / "model"
        qwen_tokenizer_files(model)
        store.ingest(repo, "target_model", model, origin=SPECFORGE_MODEL_ORIGIN)


# --------------------------------------------------------------------------- VoxCPM

#: openbmb/VoxCPM-0.5B's folder as VoxCPMModel.from_local reads it: config.json (VoxCPMConfig:
#: the MiniCPM-4 language model's config with its LongRoPE factors, the local encoder's and
#: DiT's sizes, the CFM settings), the tokenizer files LlamaTokenizerFast loads, audiovae.pth
#: ({"state_dict": ...}) and the model's weights without the VAE.  The model is the
#: repository's own VoxCPMModel built from a shrunk config (width 64, 2 layers, 2 heads of
#: 32, a 512-token vocabulary, the residual LM, encoder and DiT of 1 layer each); the AudioVAE
#: is the repository's default one (its architecture is fixed in the code when the config
#: names none, as the 0.5B's does: 75M parameters).  The tokenizer is a byte-level BPE made
#: with ``tokenizers`` (<unk>, <s>, </s> first; the model's audio start and end tokens, ids
#: 101 and 102, are inside the vocabulary).  All weights random.
VOXCPM_MODEL = """
import json, os, sys, torch
sys.path.insert(0, "/data/project/repo/src")
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaTokenizerFast
from voxcpm.model.voxcpm import VoxCPMConfig, VoxCPMModel
from voxcpm.modules.audiovae import AudioVAE
out = sys.argv[1]
device = "cuda" if torch.cuda.is_available() else "cpu"  # the KV caches made at init
os.makedirs(out)
special = ["<unk>", "<s>", "</s>"]
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
texts = ["Hello, this is a short sentence for the speech model.", "The weather is nice today."]
tok.train_from_iterator(texts * 4, trainers.BpeTrainer(
    vocab_size=400, special_tokens=special, show_progress=False,
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
fast = LlamaTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                          eos_token="</s>", add_bos_token=True, add_eos_token=False)
fast.save_pretrained(out)
head = 32
lm = {"bos_token_id": 1, "eos_token_id": 2, "hidden_size": 64, "intermediate_size": 128,
      "max_position_embeddings": 32768, "num_attention_heads": 2, "num_hidden_layers": 2,
      "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
      "rope_scaling": {"type": "longrope", "long_factor": [1.0] * (head // 2),
                       "short_factor": [1.0] * (head // 2),
                       "original_max_position_embeddings": 32768},
      "vocab_size": 512, "use_mup": False, "scale_emb": 12, "dim_model_base": 256,
      "scale_depth": 1.4, "rope_theta": 10000}
small = {"hidden_dim": 64, "ffn_dim": 128, "num_heads": 2, "num_layers": 1}
config = {"lm_config": lm, "patch_size": 2, "feat_dim": 64, "residual_lm_num_layers": 1,
          "scalar_quantization_latent_dim": 64, "scalar_quantization_scale": 9,
          "encoder_config": small,
          "dit_config": {**small, "cfm_config": {"sigma_min": 1e-06, "solver": "euler",
                                                 "t_scheduler": "log-norm",
                                                 "inference_cfg_rate": 2.0}},
          "max_length": 4096, "device": "cuda", "dtype": "bfloat16"}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
torch.manual_seed(0)
vae = AudioVAE()
torch.save({"state_dict": vae.state_dict()}, os.path.join(out, "audiovae.pth"))
built = VoxCPMConfig.model_validate({**config, "device": device})
model = VoxCPMModel(built, fast, vae)
state = {k: v.detach().to(torch.bfloat16).clone() for k, v in model.state_dict().items()
         if not k.startswith("audio_vae.")}
torch.save({"state_dict": state}, os.path.join(out, "pytorch_model.bin"))
print("stand-in VoxCPM-0.5B", sum(v.numel() for v in state.values()), "model and",
      sum(v.numel() for v in vae.state_dict().values()), "VAE values")
"""
VOXCPM_ORIGIN = (
    "stand-in: VoxCPM's own VoxCPMModel from a shrunk config (MiniCPM-4 LM of width 64, 2 "
    "layers, 512 tokens; 1-layer residual LM, encoder and DiT), random, bfloat16 "
    "pytorch_model.bin; the repository's default AudioVAE, random, in audiovae.pth; a "
    "byte-level BPE tokenizer for LlamaTokenizerFast made with tokenizers; the hub is not "
    "reachable there")


def voxcpm_model(image: str, cache: Path) -> None:
    """VoxCPM's ``VoxCPM-0.5B`` folder (config.json, tokenizer, audiovae.pth, the weights),
    random and small but the VAE, in place of the hub model the GPU machine cannot fetch."""
    repo = _repo("OpenBMB__VoxCPM")
    with _scratch() as scratch:
        run_script(image, VOXCPM_MODEL, scratch, "/out/model")
        AssetCache(cache).ingest(repo, "VoxCPM-0.5B", Path(scratch) / "model",
                                 origin=VOXCPM_ORIGIN)


# --------------------------------------------------------------------------- T-GATE

#: PixArt-alpha/PixArt-XL-2-1024-MS as main.py loads it (PixArtAlphaPipeline.from_pretrained by
#: hub id, from the HF_HOME hub cache): the pipeline's five parts at a tiny size, random, saved
#: with the pipeline's own save_pretrained (model_index.json and one folder a part).  Kept as
#: the 1024px model has them: the transformer's sample_size 128 (which picks the 1024 aspect-
#: ratio bins and the resolution/aspect-ratio conditioning), 4 latent channels in and 8 out
#: (learned sigma), 2x2 patches, ada_norm_single and an inner width 3 divides (the timestep,
#: resolution and aspect-ratio embeddings share it, as 1152 = 3 x 384); a VAE of four blocks
#: (scale factor 8); a T5 encoder whose width is the transformer's caption_channels; a T5
#: tokenizer on a sentencepiece unigram model trained here (T5's 100 extra ids); DPM-Solver++.
PIXART = """
import os, sys, torch
import sentencepiece as spm
from diffusers import (AutoencoderKL, DPMSolverMultistepScheduler, PixArtAlphaPipeline,
                       PixArtTransformer2DModel)
from transformers import T5Config, T5EncoderModel, T5Tokenizer
out, scratch = sys.argv[1], os.path.dirname(sys.argv[1])
texts = ["Astronaut in a jungle, cold color palette, muted colors, detailed, 8k",
         "A small cactus with a happy face in the Sahara desert.",
         "An astronaut riding a green horse", "A photo of a cat sitting on a wooden table."]
spm.SentencePieceTrainer.train(sentence_iterator=iter(texts * 8),
                               model_prefix=os.path.join(scratch, "spiece"), vocab_size=64,
                               model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                               character_coverage=1.0, hard_vocab_limit=False)
spm_dir = os.path.join(scratch, "spm")
os.makedirs(spm_dir)
os.replace(os.path.join(scratch, "spiece.model"), os.path.join(spm_dir, "spiece.model"))
with open(os.path.join(spm_dir, "tokenizer_config.json"), "w") as f:
    f.write('{"extra_ids": 100, "model_max_length": 512}')
tokenizer = T5Tokenizer.from_pretrained(spm_dir)  # the one spelling transformers 4 and 5 share
torch.manual_seed(0)
width = 32
text_encoder = T5EncoderModel(T5Config(vocab_size=len(tokenizer), d_model=width, d_kv=8,
                                       d_ff=64, num_layers=1, num_heads=4,
                                       relative_attention_num_buckets=32,
                                       feed_forward_proj="gated-gelu", is_encoder_decoder=False))
transformer = PixArtTransformer2DModel(num_attention_heads=3, attention_head_dim=16,
                                       in_channels=4, out_channels=8, num_layers=2,
                                       sample_size=128, patch_size=2, norm_type="ada_norm_single",
                                       caption_channels=width, cross_attention_dim=48,
                                       use_additional_conditions=True)
vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4,
                    down_block_types=("DownEncoderBlock2D",) * 4,
                    up_block_types=("UpDecoderBlock2D",) * 4,
                    block_out_channels=(8, 8, 8, 8), layers_per_block=1, norm_num_groups=4,
                    sample_size=1024, scaling_factor=0.18215)
scheduler = DPMSolverMultistepScheduler(beta_start=0.0001, beta_end=0.02,
                                        beta_schedule="linear", num_train_timesteps=1000)
pipe = PixArtAlphaPipeline(tokenizer=tokenizer, text_encoder=text_encoder, vae=vae,
                           transformer=transformer, scheduler=scheduler)
pipe.save_pretrained(out)
print("stand-in PixArt-XL-2-1024-MS", sum(p.numel() for m in (text_encoder, transformer, vae)
                                          for p in m.parameters()), "parameters")
"""
PIXART_ORIGIN = (
    "stand-in: a tiny random PixArtAlphaPipeline (PixArtTransformer2DModel of 2 layers, 3 "
    "heads of 16, sample_size 128; a 4-block AutoencoderKL of 8 channels; a 1-layer T5 "
    "encoder of width 32; a T5 tokenizer on a sentencepiece model trained here; "
    "DPM-Solver++) saved with the pipeline's save_pretrained in a hub cache; the hub is not "
    "reachable there")


def tgate_pixart(image: str, cache: Path) -> None:
    """T-GATE's ``pixart_alpha`` (PixArt-alpha/PixArt-XL-2-1024-MS) as a hub cache: the
    pipeline's parts at a tiny size, random, in place of the multi-GB hub model the GPU
    machine cannot fetch (needs diffusers and sentencepiece in the environment)."""
    repo = _repo("HaozheLiu_ST__T_GATE")
    asset = next(a for a in repo.assets if a.name == "pixart_alpha")
    with _scratch() as scratch:
        run_script(image, PIXART, scratch, "/out/pixart")
        hub = hub_cache_layout(Path(scratch) / "pixart", str(asset.id), Path(scratch) / "hub")
        AssetCache(cache).ingest(repo, asset.name, hub, origin=PIXART_ORIGIN)
