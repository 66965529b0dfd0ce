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
