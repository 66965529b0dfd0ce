"""Stand-ins for the hub and URL assets of batch C's C1 stages (``table.py``: ``standin_C:NAME``).

The hub and the download hosts are not reachable here, so each function makes
what the stage would have read with the repository's *own* code, in a
container of the row's image with the network off: its model classes with
random weights (saved the way the repository loads them) and, for data, a tiny
synthetic file in the format the code reads.  ``AssetCache.ingest`` records
each with its origin, so the stage's evidence says it ran on a stand-in; a
C1 that passes proves the environment runs the repository's pipeline end to
end, not that any prediction is right.  Nothing here is collected by pytest.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from build import REPO_DIR, VENV, module_of
from standin import load_repo

#: yomitoku resolves each model by hub id (``Net.from_pretrained(cfg.hf_hub_repo, cfg=cfg)``,
#: huggingface_hub's mixin); this saves every catalog model whose hub id the module declares,
#: random weights, with ``save_pretrained`` into a Hugging Face cache layout.  The mixin writes
#: no config.json for an OmegaConf ``cfg``, and offline ``from_pretrained`` fails on its absence
#: from the cache (``LocalEntryNotFoundError``), so the snapshot gets the config as plain JSON.
YOMITOKU = """
import json, os, sys, torch
from omegaconf import OmegaConf
from yomitoku.layout_parser import LayoutParserModelCatalog
from yomitoku.table_structure_recognizer import TableStructureRecognizerModelCatalog
from yomitoku.text_detector import TextDetectorModelCatalog
from yomitoku.text_recognizer import TextRecognizerModelCatalog
out, wanted = sys.argv[1], set(sys.argv[2:])
torch.manual_seed(0)
rev = "0" * 40
for catalog in (TextDetectorModelCatalog(), TextRecognizerModelCatalog(),
                LayoutParserModelCatalog(), TableStructureRecognizerModelCatalog()):
    for name in catalog.list_model():
        config, net = catalog.get(name)
        cfg = OmegaConf.structured(config)
        if cfg.hf_hub_repo not in wanted:
            continue
        wanted.discard(cfg.hf_hub_repo)
        model = net(cfg=cfg)
        root = os.path.join(out, "models--" + cfg.hf_hub_repo.replace("/", "--"))
        snapshot = os.path.join(root, "snapshots", rev)
        model.save_pretrained(snapshot)
        with open(os.path.join(snapshot, "config.json"), "w") as f:
            json.dump({"cfg": OmegaConf.to_container(cfg)}, f)
        os.makedirs(os.path.join(root, "refs"), exist_ok=True)
        open(os.path.join(root, "refs", "main"), "w").write(rev)
        print("stand-in", cfg.hf_hub_repo, type(model).__name__,
              sum(p.numel() for p in model.parameters()), "parameters")
if wanted:
    raise SystemExit(f"no catalog model for {sorted(wanted)}")
"""
YOMITOKU_ORIGIN = ("stand-in: random-init DBNet, PARSeq and RTDETRv2 models of yomitoku's own "
                   "catalogs, saved with save_pretrained into a Hugging Face cache layout (the "
                   "hub is not reachable here)")

#: lightly-train's ``dinov3/vitt16`` loads ``dinov3_vitt16_distillationv2.pth`` (a state dict)
#: from LIGHTLY_TRAIN_MODEL_CACHE_DIR; the data folder is read as a tree of images.
LIGHTLY = """
import os, sys, torch
from PIL import Image
from lightly_train._models.dinov3.dinov3_package import DINOv3Package
out = sys.argv[1]
torch.manual_seed(0)
model = DINOv3Package.get_model("vitt16", load_weights=False)
torch.save(model.state_dict(), os.path.join(out, "dinov3_vitt16_distillationv2.pth"))
print("stand-in dinov3/vitt16", sum(p.numel() for p in model.parameters()), "parameters")
images = os.path.join(out, "coco128_unlabeled", "images")
os.makedirs(images)
for i in range(4):
    pixels = (torch.rand(96, 128, 3) * 255).to(torch.uint8).numpy()
    Image.fromarray(pixels).save(os.path.join(images, f"{i:012d}.jpg"))
"""
LIGHTLY_MODEL_ORIGIN = ("stand-in: random-init DINOv3 ViT-T/16 state dict made by lightly-train's "
                        "own DINOv3Package (the download host is not reachable here)")
LIGHTLY_DATA_ORIGIN = "stand-in: four random 128x96 JPEGs (the download host is not reachable here)"

def _make(image: str, script: str, *args: str) -> tempfile.TemporaryDirectory[str]:
    """Run ``script`` with the image's venv python, network off, writing into a scratch folder
    (returned; the caller cleans it up) mounted at ``/out``."""
    scratch = tempfile.TemporaryDirectory()
    Path(scratch.name).chmod(0o777)
    subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                    "-e", f"PYTHONPATH={REPO_DIR}/src", "-e", "HOME=/tmp",
                    "-v", f"{scratch.name}:/out", "--entrypoint", f"{VENV}/bin/python", image,
                    "-c", script, *args], check=True)
    return scratch


def yomitoku_models(image: str, cache: Path) -> None:
    """The four yomitoku models the CLI loads, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("kotaro-kinoshita/yomitoku"))
    asset = next(a for a in repo.assets if a.name == "yomitoku_models")
    with _make(image, YOMITOKU, "/out/hub", *asset.hub_ids) as scratch:
        AssetCache(cache).ingest(repo, asset.name, Path(scratch, "hub"), origin=YOMITOKU_ORIGIN)


def lightly_train_assets(image: str, cache: Path) -> None:
    """The DINOv3 ViT-T/16 checkpoint and an image folder for lightly-train, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("lightly-ai/lightly-train"))
    with _make(image, LIGHTLY, "/out") as scratch:
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "dinov3_vitt16", Path(scratch, "dinov3_vitt16_distillationv2.pth"),
                      origin=LIGHTLY_MODEL_ORIGIN)
        cache_.ingest(repo, "coco128_unlabeled", Path(scratch, "coco128_unlabeled"),
                      origin=LIGHTLY_DATA_ORIGIN)
