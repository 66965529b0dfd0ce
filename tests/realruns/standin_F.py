"""Stand-ins for the URL assets of batch F's C1 stages (``table.py``: ``standin_F:NAME``).

The download hosts are not reachable here, so each function makes what the
stage would have read, in a container of the row's image with the network
off, in the format the repository's code reads, and ``AssetCache.ingest``
records each with its origin, so the stage's evidence says it ran on a
stand-in.  A C1 that passes proves the environment runs the repository's
pipeline end to end, not that any prediction is right.  Nothing here is
collected by pytest.
"""

from __future__ import annotations

from pathlib import Path

from build import module_of
from standin import load_repo
from standin_C import _make

#: Vim's stages train detectron2's Faster R-CNN R-50-FPN for one iteration on
#: ``coco_2017_val_100`` with ``MODEL.WEIGHTS`` = the MSRA ``R-50.pkl``.  The data: four random
#: JPEGs named as COCO's val2017 and an ``instances_val2017_100.json`` in COCO's format (two
#: boxes of real category ids each), side by side as the prepared view holds them.  The model:
#: the Caffe2 blob dict the MSRA pickle is (``conv1_w``, ``res_conv1_bn_{s,b}``,
#: ``res{2..5}_{i}_branch{1,2a,2b,2c}_w`` with ``_bn_{s,b}``, ``fc1000_{w,b}``), random values of
#: ResNet-50's shapes, which detectron2's checkpointer maps by its Caffe2 heuristics.
VIM = """
import json, os, pickle, sys
import numpy as np
from PIL import Image
out = sys.argv[1]
rng = np.random.default_rng(0)
coco = os.path.join(out, "coco")
os.makedirs(os.path.join(coco, "val2017"))
images, annotations = [], []
cats = [{"id": 1, "name": "person", "supercategory": "person"},
        {"id": 3, "name": "car", "supercategory": "vehicle"}]
for i in range(4):
    w, h = 160, 128
    name = f"{139 + i:012d}.jpg"
    Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(
        os.path.join(coco, "val2017", name))
    images.append({"id": 139 + i, "file_name": name, "width": w, "height": h})
    for j, cat in enumerate((1, 3)):
        box = [10.0 + 40 * j, 12.0, 50.0, 60.0]
        annotations.append({"id": 10 * i + j + 1, "image_id": 139 + i, "category_id": cat,
                            "bbox": box, "area": box[2] * box[3], "iscrowd": 0,
                            "segmentation": [[box[0], box[1], box[0] + box[2], box[1],
                                              box[0] + box[2], box[1] + box[3], box[0],
                                              box[1] + box[3]]]})
with open(os.path.join(coco, "instances_val2017_100.json"), "w") as f:
    json.dump({"images": images, "annotations": annotations, "categories": cats,
               "info": {"description": "stand-in"}, "licenses": []}, f)
blobs = {}
def conv(name, cout, cin, k):
    blobs[name + "_w"] = (rng.standard_normal((cout, cin, k, k)) * 0.01).astype(np.float32)
def bn(name, c):
    blobs[name + "_bn_s"] = np.ones(c, np.float32)
    blobs[name + "_bn_b"] = np.zeros(c, np.float32)
conv("conv1", 64, 3, 7); bn("res_conv1", 64)
cin = 64
for stage, (blocks, mid) in enumerate(((3, 64), (4, 128), (6, 256), (3, 512)), start=2):
    cout = mid * 4
    for b in range(blocks):
        p = f"res{stage}_{b}_branch"
        if b == 0:
            conv(p + "1", cout, cin, 1); bn(p + "1", cout)
        conv(p + "2a", mid, cin if b == 0 else cout, 1); bn(p + "2a", mid)
        conv(p + "2b", mid, mid, 3); bn(p + "2b", mid)
        conv(p + "2c", cout, mid, 1); bn(p + "2c", cout)
    cin = cout
blobs["fc1000_w"] = (rng.standard_normal((1000, 2048)) * 0.01).astype(np.float32)
blobs["fc1000_b"] = np.zeros(1000, np.float32)
os.makedirs(os.path.join(out, "model"))
with open(os.path.join(out, "model", "R-50.pkl"), "wb") as f:
    pickle.dump(blobs, f)
print("stand-in coco", len(images), "images,", len(annotations), "boxes; R-50.pkl",
      len(blobs), "blobs", sum(v.size for v in blobs.values()), "values")
"""
VIM_DATA_ORIGIN = ("stand-in: four random 160x128 JPEGs named as COCO val2017 and an "
                   "instances_val2017_100.json in COCO's format, two boxes each (the download "
                   "host is not reachable here)")
VIM_MODEL_ORIGIN = ("stand-in: R-50.pkl as the MSRA Caffe2 blob dict of ResNet-50 (its blob "
                    "names and shapes), random values (the download host is not reachable here)")


def vim_assets(image: str, cache: Path) -> None:
    """The COCO val2017_100 stand-in and the R-50.pkl stand-in for Vim's C1, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(module_of("hustvl/Vim"))
    with _make(image, VIM, "/out") as scratch:
        cache_ = AssetCache(cache)
        cache_.ingest(repo, "coco_2017_val_100", Path(scratch, "coco"), origin=VIM_DATA_ORIGIN)
        cache_.ingest(repo, "R-50", Path(scratch, "model", "R-50.pkl"), origin=VIM_MODEL_ORIGIN)
