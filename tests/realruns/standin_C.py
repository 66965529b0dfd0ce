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
#: random weights, with ``save_pretrained`` into a Hugging Face cache layout.
YOMITOKU = """
import os, sys, torch
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
        model.save_pretrained(os.path.join(root, "snapshots", rev))
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

#: Vim's stages train detectron2's Faster R-CNN R50-FPN on ``coco_2017_val_100`` from
#: ``MODEL.WEIGHTS`` R-50.pkl: a backbone state dict in detectron2's model-zoo format, and a
#: COCO json whose categories are detectron2's own 80 (its builtin metadata must agree).
VIM = """
import json, os, pickle, sys, torch
from PIL import Image
sys.path.insert(0, sys.argv[1] + "/det")
from detectron2.config import get_cfg
from detectron2.data.datasets.builtin_meta import COCO_CATEGORIES
from detectron2.modeling import build_model
out = sys.argv[2]
torch.manual_seed(0)
cfg = get_cfg()
cfg.merge_from_file(sys.argv[1] + "/det/configs/COCO-Detection/faster_rcnn_R_50_FPN_1x.yaml")
cfg.MODEL.DEVICE = "cpu"
model = build_model(cfg)
weights = {"backbone.bottom_up." + k: v.numpy() for k, v in
           model.backbone.bottom_up.state_dict().items()}
with open(os.path.join(out, "R-50.pkl"), "wb") as f:
    pickle.dump({"model": weights, "__author__": "stand-in (random init)"}, f)
print("stand-in R-50.pkl", sum(v.size for v in weights.values()), "parameters")
coco = os.path.join(out, "coco")
os.makedirs(os.path.join(coco, "val2017"))
images, annotations = [], []
for i in range(2):
    name = f"{i + 1:012d}.jpg"
    pixels = (torch.rand(240, 320, 3) * 255).to(torch.uint8).numpy()
    Image.fromarray(pixels).save(os.path.join(coco, "val2017", name))
    images.append({"id": i + 1, "file_name": name, "height": 240, "width": 320})
    annotations.append({"id": i + 1, "image_id": i + 1, "category_id": 1, "iscrowd": 0,
                        "bbox": [40.0, 30.0, 120.0, 90.0], "area": 10800.0,
                        "segmentation": [[40, 30, 160, 30, 160, 120, 40, 120]]})
categories = [{"id": c["id"], "name": c["name"], "supercategory": "stand-in"}
              for c in COCO_CATEGORIES if c["isthing"]]
with open(os.path.join(coco, "instances_val2017_100.json"), "w") as f:
    json.dump({"images": images, "annotations": annotations, "categories": categories}, f)
"""
VIM_MODEL_ORIGIN = ("stand-in: random-init ResNet-50 bottom-up of detectron2's own "
                    "faster_rcnn_R_50_FPN_1x model, in its model-zoo pickle format (the download "
                    "host is not reachable here)")
VIM_DATA_ORIGIN = ("stand-in: two random 320x240 JPEGs and a COCO json with one box each over "
                   "detectron2's 80 categories (the download host is not reachable here)")


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


def vim_assets(image: str, cache: Path) -> None:
    """R-50.pkl and a two-image COCO val2017_100 for Vim's detectron2 stages, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("hustvl/Vim"))
    with _make(image, VIM, REPO_DIR, "/out") as scratch:
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "R-50", Path(scratch, "R-50.pkl"), origin=VIM_MODEL_ORIGIN)
        cache_.ingest(repo, "coco_2017_val_100", Path(scratch, "coco"), origin=VIM_DATA_ORIGIN)
