"""Stand-ins for the batch-D rows of ``table.py``: hub models and data sets that cannot be had here.

The hub and the URLs the modules' prepare steps download from are not
reachable where the real runs are made, so, as ``standin.py`` did for
Depth-Anything, each function below puts into the asset cache a file of the
format the repository's code reads, with random weights or synthetic content,
recorded with ``AssetCache.ingest(..., origin="stand-in: ...")``, so the C1
stage runs the repository's own code on it and no reader takes its output for
a real result.  ``build.py`` calls them as ``standin_D:NAME`` with the image's
tag and the asset cache.  Nothing here is collected by pytest.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from standin import ROOT, load_repo

from pytest_reb.assets.cache import AssetCache

#: RT-DETR-v2's query count: the detector's outputs have one row per query.
QUERIES = 300
#: What ``RTDetrV2ONNXDetection._detect_single_image`` feeds the session.
IMAGE_SIDE = 640

DETECTOR_ORIGIN = (
    "stand-in: a random-weight ONNX graph with the interface RTDetrV2ONNXDetection reads "
    "(inputs images [1,3,640,640] float32 and orig_target_sizes [1,2] int64; outputs labels "
    "[1,300] int64, boxes [1,300,4] float32 in pixels, scores [1,300] float32), made with the "
    "onnx package: the repository ships no model class, only the ONNX consumer, and the hub "
    "is not reachable here")
HOPPER_ORIGIN = ("stand-in: a synthetic 128x128 RGB JPEG (gradients and two filled "
                 "rectangles) made with Pillow; the URL is not reachable here")


def detector_onnx(path: Path, seed: int = 0) -> None:
    """A small random detector with RT-DETR-v2's ONNX interface: a strided convolution, global
    pooling, and two random heads (class logits; ordered boxes scaled to the image size)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    n, feats = QUERIES, 8

    def const(name: str, value: np.ndarray) -> onnx.TensorProto:
        return numpy_helper.from_array(value, name)

    inits = [
        const("conv_w", rng.normal(0, 0.5, (feats, 3, 3, 3)).astype(np.float32)),
        const("conv_b", rng.normal(0, 0.1, (feats,)).astype(np.float32)),
        const("cls_w", rng.normal(0, 2.0, (feats, n * 3)).astype(np.float32)),
        const("box_w", rng.normal(0, 2.0, (feats, n * 4)).astype(np.float32)),
        const("cls_shape", np.array([1, n, 3], dtype=np.int64)),
        const("box_shape", np.array([1, n, 4], dtype=np.int64)),
        const("half", np.array(0.5, dtype=np.float32)),
        const("axis1", np.array([1], dtype=np.int64)),
        const("s0", np.array([0], dtype=np.int64)),
        const("s2", np.array([2], dtype=np.int64)),
        const("s4", np.array([4], dtype=np.int64)),
        const("last", np.array([2], dtype=np.int64)),
    ]
    node = helper.make_node
    nodes = [
        node("Conv", ["images", "conv_w", "conv_b"], ["conv"], strides=[32, 32], pads=[1, 1, 1, 1]),
        node("Relu", ["conv"], ["relu"]),
        node("GlobalAveragePool", ["relu"], ["pool"]),
        node("Flatten", ["pool"], ["feat"]),
        node("MatMul", ["feat", "cls_w"], ["cls_flat"]),
        node("Reshape", ["cls_flat", "cls_shape"], ["logits"]),
        node("Sigmoid", ["logits"], ["probs"]),
        node("ReduceMax", ["probs"], ["scores"], axes=[2], keepdims=0),
        node("ArgMax", ["logits"], ["labels"], axis=2, keepdims=0),
        node("MatMul", ["feat", "box_w"], ["box_flat"]),
        node("Reshape", ["box_flat", "box_shape"], ["box_raw"]),
        node("Sigmoid", ["box_raw"], ["box_unit"]),
        node("Mul", ["box_unit", "half"], ["box_half"]),
        # x1y1 in [0, .5], x2y2 = x1y1 + a size in [0, .5]: ordered corners, as RT-DETR gives
        node("Slice", ["box_half", "s0", "s2", "last"], ["xy1"]),
        node("Slice", ["box_half", "s2", "s4", "last"], ["wh"]),
        node("Add", ["xy1", "wh"], ["xy2"]),
        node("Concat", ["xy1", "xy2"], ["box_rel"], axis=2),
        node("Cast", ["orig_target_sizes"], ["size_f"], to=TensorProto.FLOAT),
        node("Concat", ["size_f", "size_f"], ["size4"], axis=1),
        node("Unsqueeze", ["size4", "axis1"], ["size"]),
        node("Mul", ["box_rel", "size"], ["boxes"]),
    ]
    graph = helper.make_graph(
        nodes, "rtdetr_v2_standin",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, IMAGE_SIDE, IMAGE_SIDE]),
         helper.make_tensor_value_info("orig_target_sizes", TensorProto.INT64, [1, 2])],
        [helper.make_tensor_value_info("labels", TensorProto.INT64, [1, n]),
         helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, n])],
        initializer=inits)
    # opset 13: ReduceMax still takes ``axes`` as an attribute; onnxruntime of any recent
    # release runs it
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="pytest-reb stand-in")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def synthetic_jpeg(path: Path, side: int = 128) -> None:
    """A small RGB JPEG with some structure (the detector stand-in does not read it)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (side, side))
    image.putdata([(x * 2 % 256, y * 2 % 256, (x + y) % 256)
                   for y in range(side) for x in range(side)])
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 60, 40), fill=(255, 255, 255))
    draw.ellipse((70, 70, 120, 110), fill=(240, 240, 240))
    image.save(path, "JPEG", quality=90)


def comic_detector(image: str, cache: Path) -> None:
    """comic-translate's C1 assets: the RT-DETR-v2 detector stand-in (``detector.onnx`` with a
    ``config.json`` naming its three classes) and the hopper image stand-in.  ``image`` is
    unused: neither file needs the image's interpreter (the graph is made by ``onnx`` here)."""
    del image
    repo = load_repo(ROOT / "repos" / "test_ogkalu2__comic_translate.py")
    cached = AssetCache(cache)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "comic-text-and-bubble-detector"
        folder.mkdir()
        detector_onnx(folder / "detector.onnx")
        (folder / "config.json").write_text(json.dumps(
            {"model_type": "rt_detr_v2", "num_queries": QUERIES,
             "id2label": {"0": "bubble", "1": "text_bubble", "2": "text_free"},
             "note": "pytest-reb stand-in, random weights"}, indent=1) + "\n")
        cached.ingest(repo, "comic-text-and-bubble-detector", folder, origin=DETECTOR_ORIGIN)
        jpeg = Path(scratch) / "hopper.jpg"
        synthetic_jpeg(jpeg)
        cached.ingest(repo, "hopper", jpeg, origin=HOPPER_ORIGIN)
