"""Batch E's stand-ins: hub assets the C1 stages of its rows read, which cannot be fetched here.

Made as the other batches made theirs (``standin_B.py``): by the repository's
own model classes (or its own file formats), with random weights, under the
image's interpreter in a container with no network, and put in the asset
cache with ``AssetCache.ingest(..., origin="stand-in: ...")``, so every
outcome that uses one says what it ran on.  The stages then show that the
environment runs the repository's code end to end; what the weights predict
is meaningless, and nothing claims otherwise.

``build.py`` calls them by the row's ``standin = "standin_E:<function>"`` with
the image's tag and the asset cache.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from standin import ROOT, load_repo

#: The venv every ``build.py`` image has.
PYTHON = "/opt/envs/research/bin/python"
CHECKOUT = "/data/project/repo"


def in_image(image: str, code: str, scratch: Path) -> None:
    """Run ``code`` with the image's venv python, network off, ``scratch`` writable at /out
    (argv: the checkout, /out)."""
    scratch.chmod(0o777)
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                    "-e", "HOME=/tmp", "-e", "PYTHONPATH=" + CHECKOUT + "/src",
                    "-v", f"{scratch}:/out", "--entrypoint", PYTHON, image, "-c", code,
                    CHECKOUT, "/out"], check=True)


# --------------------------------------------------------------------------- F5-TTS

#: F5-TTS's C1 (``infer_cli --model F5TTS_v1_Base --ckpt_file ...``) builds ``CFM(DiT(...))``
#: from the package's ``configs/F5TTS_v1_Base.yaml`` and the default vocab
#: (``infer/examples/vocab.txt``), exactly as ``utils_infer.load_model`` does, and loads the
#: checkpoint's EMA weights (a safetensors file is taken as the EMA state dict).  The stand-in
#: is that model with random weights, its state dict saved as the safetensors file (float16,
#: half the size; load_state_dict copies into the float32 model).  The vocoder is vocos'
#: ``Vocos`` from charactr/vocos-mel-24khz's config.yaml (the mel-24khz architecture), random
#: weights, its state dict as pytorch_model.bin.
F5_MODEL = """
import os, sys
from importlib.resources import files
import torch
from hydra.utils import get_class
from omegaconf import OmegaConf
from safetensors.torch import save_file
from f5_tts.infer import utils_infer as u
from f5_tts.model import CFM
from f5_tts.model.utils import get_tokenizer
cfg = OmegaConf.load(str(files("f5_tts").joinpath("configs/F5TTS_v1_Base.yaml")))
cls = get_class(f"f5_tts.model.{cfg.model.backbone}")
vocab = str(files("f5_tts").joinpath("infer/examples/vocab.txt"))
vocab_char_map, vocab_size = get_tokenizer(vocab, "custom")
torch.manual_seed(0)
model = CFM(transformer=cls(**cfg.model.arch, text_num_embeds=vocab_size, mel_dim=u.n_mel_channels),
            mel_spec_kwargs=dict(n_fft=u.n_fft, hop_length=u.hop_length, win_length=u.win_length,
                                 n_mel_channels=u.n_mel_channels,
                                 target_sample_rate=u.target_sample_rate,
                                 mel_spec_type=cfg.model.mel_spec.mel_spec_type),
            odeint_kwargs=dict(method=u.ode_method), vocab_char_map=vocab_char_map)
state = {"ema_model." + k: v.detach().to(torch.float16).contiguous()
         if v.is_floating_point() else v.contiguous() for k, v in model.state_dict().items()}
out = os.path.join(sys.argv[2], "F5TTS_v1_Base")
os.makedirs(out)
save_file(state, os.path.join(out, "model_1250000.safetensors"))
print("stand-in", out, sum(p.numel() for p in model.parameters()), "parameters")
"""
F5_MODEL_ORIGIN = ("stand-in: random-init CFM(DiT) of F5-TTS's own configs/F5TTS_v1_Base.yaml "
                   "and default vocab, made by the repository's classes, its EMA state dict "
                   "saved as safetensors in float16 (the hub is not reachable here)")

#: charactr/vocos-mel-24khz's config.yaml (the architecture of the hub's vocoder).
VOCOS_CONFIG = """\
feature_extractor:
  class_path: vocos.feature_extractors.MelSpectrogramFeatures
  init_args:
    sample_rate: 24000
    n_fft: 1024
    hop_length: 256
    n_mels: 100
    padding: center

backbone:
  class_path: vocos.models.VocosBackbone
  init_args:
    input_channels: 100
    dim: 512
    intermediate_dim: 1536
    num_layers: 8

head:
  class_path: vocos.heads.ISTFTHead
  init_args:
    dim: 512
    n_fft: 1024
    hop_length: 256
    padding: center
"""

F5_VOCOS = """
import os, sys
import torch
from vocos import Vocos
out = os.path.join(sys.argv[2], "vocos-mel-24khz")
config = os.path.join(out, "config.yaml")
torch.manual_seed(0)
vocoder = Vocos.from_hparams(config)
torch.save(vocoder.state_dict(), os.path.join(out, "pytorch_model.bin"))
print("stand-in", out, sum(p.numel() for p in vocoder.parameters()), "parameters")
"""
F5_VOCOS_ORIGIN = ("stand-in: random-init vocos Vocos of charactr/vocos-mel-24khz's config.yaml "
                   "(mel features, 8-layer backbone, ISTFT head), its state dict as "
                   "pytorch_model.bin (the hub is not reachable here)")


def f5_tts_models(image: str, cache: Path) -> None:
    """F5-TTS's checkpoint and vocoder, stand-ins made with the image's f5_tts and vocos."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_SWivid__F5_TTS.py")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        (out / "vocos-mel-24khz").mkdir()
        (out / "vocos-mel-24khz").chmod(0o777)
        (out / "vocos-mel-24khz" / "config.yaml").write_text(VOCOS_CONFIG)
        in_image(image, F5_VOCOS, out)
        in_image(image, F5_MODEL, out)
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "vocos-mel-24khz", out / "vocos-mel-24khz", origin=F5_VOCOS_ORIGIN)
        cache_.ingest(repo, "F5TTS_v1_Base",
                      out / "F5TTS_v1_Base" / "model_1250000.safetensors",
                      origin=F5_MODEL_ORIGIN)


# --------------------------------------------------------------------------- SenseVoice

#: SenseVoice's C1 starts api.py, which loads ``iic/SenseVoiceSmall`` (ModelScope) through
#: FunASR's ``AutoModel.build_model``: the folder's configuration.json names config.yaml, the
#: weights model.pt, the sentencepiece model and the CMVN file am.mvn, and config.yaml the
#: classes (the repository's ``SenseVoiceEncoderSmall`` and ``SenseVoiceSmall``, FunASR's
#: ``WavFrontend`` and ``SentencepiecesTokenizer``).  The stand-in keeps the hub model's
#: configuration.json and its frontend (80 mel bins, LFR 7/6: 560-dim features, so am.mvn has
#: 560 means and scales) and shrinks what only sizes the network (2 encoder blocks of 64 units,
#: 1 tp block; a 60-piece sentencepiece model trained here, the CTC head sized to it).  The
#: model is built by the repository's class through FunASR with no weights (random init) and
#: its state dict saved as model.pt.
SENSEVOICE_CONFIG = """\
encoder: SenseVoiceEncoderSmall
encoder_conf:
    output_size: 64
    attention_heads: 4
    linear_units: 128
    num_blocks: 2
    tp_blocks: 1
    dropout_rate: 0.1
    positional_dropout_rate: 0.1
    attention_dropout_rate: 0.1
    input_layer: pe
    pos_enc_class: SinusoidalPositionEncoder
    normalize_before: true
    kernel_size: 11
    sanm_shfit: 0
    selfattention_layer_type: sanm

model: SenseVoiceSmall
model_conf:
    length_normalized_loss: true
    sos: 1
    eos: 2
    ignore_id: -1

tokenizer: SentencepiecesTokenizer
tokenizer_conf:
  bpemodel: null
  unk_symbol: <unk>
  split_with_space: true

frontend: WavFrontend
frontend_conf:
    fs: 16000
    window: hamming
    n_mels: 80
    frame_length: 25
    frame_shift: 10
    lfr_m: 7
    lfr_n: 6
    cmvn_file: null
"""

#: The hub model's configuration.json (what FunASR's download_from_ms reads).
SENSEVOICE_JSON = """\
{
  "framework": "pytorch",
  "task": "auto-speech-recognition",
  "model": {"type": "funasr"},
  "pipeline": {"type": "funasr-pipeline"},
  "model_name_in_hub": {"ms": "", "hf": ""},
  "file_path_metas": {
    "init_param": "model.pt",
    "config": "config.yaml",
    "tokenizer_conf": {"bpemodel": "chn_jpn_yue_eng_ko_spectok.bpe.model"},
    "frontend_conf": {"cmvn_file": "am.mvn"}
  }
}
"""

SENSEVOICE_MODEL = """
import os, sys
import sentencepiece as spm
import torch
repo, out = sys.argv[1], sys.argv[2]
folder = os.path.join(out, "SenseVoiceSmall")
words = ("some call me nature others call me mother nature here we generate something just "
         "for test the quick brown fox jumps over the lazy dog speech recognition").split()
spm.SentencePieceTrainer.train(sentence_iterator=iter([" ".join(words)] * 20),
                               model_prefix=os.path.join(folder, "chn_jpn_yue_eng_ko_spectok.bpe"),
                               vocab_size=60, model_type="bpe", hard_vocab_limit=False,
                               minloglevel=2)
dim = 80 * 7
with open(os.path.join(folder, "am.mvn"), "w") as fh:
    fh.write("<Nnet>\\n<Splice> %d %d\\n[ 0 ]\\n" % (dim, dim))
    shift, scale = " ".join(["-8.0"] * dim), " ".join(["0.25"] * dim)
    fh.write("<AddShift> %d %d\\n<LearnRateCoef> 0 [ %s ]\\n" % (dim, dim, shift))
    fh.write("<Rescale> %d %d\\n<LearnRateCoef> 0 [ %s ]\\n" % (dim, dim, scale))
    fh.write("</Nnet>\\n")
sys.path.insert(0, repo)
import model as _repo_model  # the repository's SenseVoiceSmall and encoder, registered
from funasr import AutoModel
torch.manual_seed(0)
net, kwargs = AutoModel.build_model(model=folder, device="cpu", disable_update=True)
assert type(net).__module__ == "model", type(net)
torch.save(net.state_dict(), os.path.join(folder, "model.pt"))
print("stand-in", folder, type(net).__module__, type(net).__name__,
      sum(p.numel() for p in net.parameters()), "parameters, vocab", kwargs["vocab_size"])
"""
SENSEVOICE_MODEL_ORIGIN = ("stand-in: random-init SenseVoiceSmall built by the repository's "
                           "model.py classes through FunASR from a shrunk config.yaml (2+1 "
                           "encoder blocks of 64 units; the hub's frontend: 80 mel bins, LFR "
                           "7/6), a 60-piece sentencepiece model trained here, a flat am.mvn, "
                           "the hub's configuration.json layout (ModelScope is not reachable "
                           "here)")
SENSEVOICE_WAV_ORIGIN = ("stand-in: synthetic 2 s 16 kHz mono 16-bit PCM wav (a 440 Hz tone "
                         "with noise) in place of asr_example_en.wav (the OSS URL is not "
                         "reachable here)")


def tone_wav(path: Path, seconds: float = 2.0, rate: int = 16000) -> None:
    """A mono 16-bit PCM wav: a quiet tone with a little noise."""
    import math
    import random
    import struct
    import wave

    rng = random.Random(0)
    frames = b"".join(
        struct.pack("<h", int(6000 * math.sin(2 * math.pi * 440 * i / rate)
                              + rng.randint(-300, 300)))
        for i in range(int(seconds * rate)))
    with wave.open(str(path), "wb") as fh:
        fh.setnchannels(1)
        fh.setsampwidth(2)
        fh.setframerate(rate)
        fh.writeframes(frames)


def sensevoice_assets(image: str, cache: Path) -> None:
    """SenseVoice's model folder and its sample wav, stand-ins."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_FunAudioLLM__SenseVoice.py")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        folder = out / "SenseVoiceSmall"
        folder.mkdir()
        folder.chmod(0o777)
        (folder / "config.yaml").write_text(SENSEVOICE_CONFIG)
        (folder / "configuration.json").write_text(SENSEVOICE_JSON)
        in_image(image, SENSEVOICE_MODEL, out)
        wav = out / "asr_example_en.wav"
        tone_wav(wav)
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "SenseVoiceSmall", folder, origin=SENSEVOICE_MODEL_ORIGIN)
        cache_.ingest(repo, "asr_example_en", wav, origin=SENSEVOICE_WAV_ORIGIN)
