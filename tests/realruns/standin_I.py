"""Stand-ins for the hub assets of batch I's C1 stages (``table.py``: ``standin_I:NAME``).

The hub is not reachable here, so each function makes what the stage would have
read with the repository's *own* code, in a container of the row's image with the
network off: its model classes with random weights, saved the way the repository
loads them.  ``AssetCache.ingest`` records each with its origin, so the stage's
evidence says it ran on a stand-in; a C1 that passes proves the environment runs
the repository's pipeline end to end, not that any prediction is right.  Nothing
here is collected by pytest.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import standin_C
from build import REPO_DIR, VENV, module_of
from standin import load_repo

#: ClearerVoice-Studio's train.py builds ``network_wrapper(args).se_network``, i.e.
#: ``FRCRN_SE_16K(args).model`` (a DCCRN) with the STFT settings of its config, and
#: ``Solver._load_pretrained_model`` reads ``checkpoint['model']`` (else the dict itself).
#: The hub snapshot holds ``last_best_checkpoint.pt`` and the pointer file
#: ``last_best_checkpoint`` naming it; the stand-in has both, the weights random.
FRCRN = """
import os, sys, types, torch, yaml
sys.path.insert(0, ".")
from models.frcrn.frcrn import FRCRN_SE_16K
out = sys.argv[1]
with open("config/train/FRCRN_SE_16K.yaml") as f:
    cfg = yaml.safe_load(f)
args = types.SimpleNamespace(win_len=cfg["win_len"], win_inc=cfg["win_inc"],
                             fft_len=cfg["fft_len"], win_type=cfg["win_type"])
torch.manual_seed(0)
model = FRCRN_SE_16K(args).model
os.makedirs(out)
torch.save({"model": model.state_dict()}, os.path.join(out, "last_best_checkpoint.pt"))
open(os.path.join(out, "last_best_checkpoint"), "w").write("last_best_checkpoint.pt\\n")
print("stand-in FRCRN_SE_16K", type(model).__name__,
      sum(p.numel() for p in model.parameters()), "parameters")
"""
FRCRN_ORIGIN = ("stand-in: random-init FRCRN_SE_16K (DCCRN) state dict made by "
                "ClearerVoice-Studio's own model class with its training config's STFT settings, "
                "saved as {'model': state_dict} in last_best_checkpoint.pt (the hub is not "
                "reachable here)")


def _make(image: str, script: str, *args: str, cwd: str = REPO_DIR,
          pythonpath: str = REPO_DIR) -> tempfile.TemporaryDirectory[str]:
    """Run ``script`` with the image's venv python in ``cwd``, network off, writing into a
    scratch folder (returned; the caller cleans it up) mounted at ``/out``."""
    scratch = tempfile.TemporaryDirectory()
    Path(scratch.name).chmod(0o777)
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                    "-e", f"PYTHONPATH={pythonpath}", "-e", "HOME=/tmp", "-w", cwd,
                    "-v", f"{scratch.name}:/out", "--entrypoint", f"{VENV}/bin/python", image,
                    "-c", script, *args], check=True)
    return scratch


def clearervoice_frcrn(image: str, cache: Path) -> None:
    """A random FRCRN_SE_16K checkpoint in the hub snapshot's layout, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("modelscope/ClearerVoice-Studio"))
    where = f"{REPO_DIR}/train/speech_enhancement"
    with _make(image, FRCRN, "/out/FRCRN_SE_16K", cwd=where, pythonpath=where) as scratch:
        AssetCache(cache).ingest(repo, "FRCRN_SE_16K", Path(scratch, "FRCRN_SE_16K"),
                                 origin=FRCRN_ORIGIN)


#: yomitoku's stand-in (``standin_C.YOMITOKU``: the four catalog models, random weights, in a
#: hub cache layout) with two heads set so the random models' output is usable downstream.
#: With random weights DBNet's map gave degenerate quads (zero width or height after scaling),
#: ``extract_roi_with_perspective`` cut an empty crop and ``cv2.warpPerspective`` asserted
#: (``_src.total() > 0``: the batch-C record's C1 ``runtime``).  Here DBNet's last
#: ``binarize`` layer is zero with bias 6 (sigmoid 0.998 everywhere: one text region, the
#: whole page, a crop the recognizer reads), and the RT-DETRv2 decoders' class heads are zero
#: with bias -30 (no layout element or table cell passes the score threshold, so no crop is
#: cut from random boxes).  Every other weight is random; the recogniser's text is noise.
YOMITOKU_TAME = standin_C.YOMITOKU.replace("""        model = net(cfg=cfg)
""", """        model = net(cfg=cfg)
        with torch.no_grad():
            for name, module in model.named_modules():
                if name.endswith("decoder.binarize"):
                    module[6].weight.zero_()
                    module[6].bias.fill_(6.0)
                if name.endswith("dec_score_head"):
                    for head in module:
                        head.weight.zero_()
                        head.bias.fill_(-30.0)
""")
assert YOMITOKU_TAME != standin_C.YOMITOKU
YOMITOKU_ORIGIN = (standin_C.YOMITOKU_ORIGIN + "; DBNet's last binarize layer set to a constant "
                   "text map (one region: the page) and the RT-DETRv2 class heads to no "
                   "detection, so no crop is cut from a random box")


def yomitoku_models(image: str, cache: Path) -> None:
    """The four yomitoku models the CLI loads, random with the two heads above, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("kotaro-kinoshita/yomitoku"))
    asset = next(a for a in repo.assets if a.name == "yomitoku_models")
    with _make(image, YOMITOKU_TAME, "/out/hub", *asset.hub_ids,
               pythonpath=f"{REPO_DIR}/src") as scratch:
        AssetCache(cache).ingest(repo, asset.name, Path(scratch, "hub"), origin=YOMITOKU_ORIGIN)


#: Olympus's train.py loads everything from ``--model_name_or_path`` ({assets}/model/model,
#: the ``Yuanze/Olympus`` snapshot): ``MiphaPhiConfig`` (a Phi-2 text config with the SigLIP
#: tower's and the projector's configs inside it, so no tower is fetched), the
#: ``MiphaPhiForCausalLM`` weights, ``AutoTokenizer`` (phi-2's CodeGen BPE) and
#: ``SiglipImageProcessor`` (the zero image of a text-only example takes its size).  The
#: stand-in is the same classes, shrunk: a 2-layer Phi of width 64, a 2-layer SigLIP tower on
#: 32x32 images, the mlp2x_gelu projector; the tokenizer a byte-level BPE with the 256 byte
#: symbols, no merges, and phi-2's ``<|endoftext|>`` (eos, unk and pad, as the code expects).
#: The data stand-in is a one-element Olympus.json in the repository's conversation format
#: (the setup step cuts its first example, as the official prepare did).
OLYMPUS = """
import json, os, sys, torch
from transformers import CodeGenTokenizer, SiglipImageProcessor
from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode
from mipha.model.language_model.configuration_mipha import (MiphaPhiConfig, MiphaVisionConfig,
                                                            ProjectorConfig)
from mipha.model.language_model.mipha_phi import MiphaPhiForCausalLM
out = sys.argv[1]
model_dir, data_dir = os.path.join(out, "model"), os.path.join(out, "dataset")
os.makedirs(model_dir)
os.makedirs(data_dir)
vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
vocab["<|endoftext|>"] = len(vocab)
with open(os.path.join(out, "vocab.json"), "w") as f:
    json.dump(vocab, f)
with open(os.path.join(out, "merges.txt"), "w") as f:
    f.write("#version: 0.2\\n")
eot = "<|endoftext|>"
tokenizer = CodeGenTokenizer(os.path.join(out, "vocab.json"), os.path.join(out, "merges.txt"),
                             unk_token=eot, bos_token=eot, eos_token=eot)
tokenizer.save_pretrained(model_dir)
tower = MiphaVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=2, image_size=32, patch_size=16,
                          hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6,
                          vision_model_name_or_path="siglip-stand-in")
projector = ProjectorConfig(mm_projector_type="mlp2x_gelu", mm_hidden_size=32, hidden_size=64)
config = MiphaPhiConfig(vision_config={"vision_tower": tower.to_dict(),
                                       "mm_projector": projector.to_dict()},
                        vocab_size=len(vocab), hidden_size=64, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=2,
                        max_position_embeddings=256, bos_token_id=vocab[eot],
                        eos_token_id=vocab[eot])
torch.manual_seed(0)
model = MiphaPhiForCausalLM(config)
model.save_pretrained(model_dir)
SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(model_dir)
print("stand-in Yuanze/Olympus", type(model).__name__,
      sum(p.numel() for p in model.parameters()), "parameters")
example = {"id": "stand-in-0", "image": "stand-in-0.jpg", "conversations": [
    {"from": "human", "value": "Please generate an image of a cat sitting on a red sofa."},
    {"from": "gpt", "value": "<image_gen>a cat sitting on a red sofa</image_gen>"}]}
with open(os.path.join(data_dir, "Olympus.json"), "w") as f:
    json.dump([example], f, indent=1)
"""
OLYMPUS_MODEL_ORIGIN = ("stand-in: random-init MiphaPhiForCausalLM made by Olympus's own classes "
                        "(a 2-layer Phi of width 64 with a 2-layer SigLIP tower and the "
                        "mlp2x_gelu projector, configs inside MiphaPhiConfig), a byte-level "
                        "CodeGen BPE tokenizer (256 byte symbols and <|endoftext|>) and a "
                        "SiglipImageProcessor for 32x32, saved with save_pretrained (the hub "
                        "is not reachable here)")
OLYMPUS_DATA_ORIGIN = ("stand-in: a one-example Olympus.json in the repository's LLaVA "
                       "conversation format (human/gpt turns, an image field the setup drops; "
                       "the hub is not reachable here)")


def olympus_assets(image: str, cache: Path) -> None:
    """The shrunk Olympus model folder and a one-example Olympus.json, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("yuanze-lin/Olympus"))
    with _make(image, OLYMPUS, "/out/made") as scratch:
        made = Path(scratch, "made")
        store = AssetCache(cache)
        store.ingest(repo, "Olympus", made / "model", origin=OLYMPUS_MODEL_ORIGIN)
        store.ingest(repo, "olympus_min", made / "dataset", origin=OLYMPUS_DATA_ORIGIN)
