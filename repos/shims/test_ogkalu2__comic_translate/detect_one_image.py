"""pytest-reb shim for ogkalu2/comic-translate (C1, C3): the official stdin driver.

The official stages ran ``python - IMAGE MODEL_DIR`` from the repository root
with a driver fed on stdin (we run ``detect_one_image.py -- IMAGE MODEL_DIR``).
It runs the repository's RT-DETR-v2 ONNX text and bubble detector on one
image, offline:

* ``modules.detection.rtdetr_v2_onnx.hf_hub_download`` becomes a lookup of the
  requested file in MODEL_DIR (missing -> FileNotFoundError), so the prepared
  ``detector.onnx`` and ``config.json`` are used instead of the hub;
* ``FontEngineFactory.create_engine`` returns a dummy engine whose
  ``process`` says ``{"available": False}``, so no font models are fetched;
* ``RTDetrV2ONNXDetection(settings=None)`` with ``model_dir`` = MODEL_DIR,
  ``initialize(device=..., confidence_threshold=0.3)``, ``detect`` on the RGB
  image, and one line ``cpu_infer_ok num_blocks=N image=NAME`` (C1) or
  ``single_gpu_infer_ok num_blocks=N image=NAME cuda_visible_devices=..`` (C3).

C3 first raises unless onnxruntime offers ``CUDAExecutionProvider``.  Both
stages run the same command; as officially, the C1 stage hides every GPU
(``CUDA_VISIBLE_DEVICES=""``), so an empty CUDA_VISIBLE_DEVICES selects the
cpu driver and any other value the cuda one.  This is our rewrite; numpy,
Pillow and onnxruntime are the repository's own dependencies.
"""

import argparse
import os
import sys
from pathlib import Path


def check(path, what):
    if not path.exists():
        raise FileNotFoundError(f"{what} not found: {path}")


def main(image_arg, model_arg):
    sys.path.insert(0, os.getcwd())  # `python -` had the repository root (cwd) first
    import numpy as np
    from PIL import Image

    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""
    image = Path(image_arg).expanduser().resolve()
    model_dir = Path(model_arg).expanduser().resolve()
    check(image, "dataset path")
    check(model_dir, "model dir")
    for name in ("detector.onnx", "config.json"):
        check(model_dir / name, "expected model artifact")
    if gpu:
        import onnxruntime

        providers = onnxruntime.get_available_providers()
        if "CUDAExecutionProvider" not in providers:
            raise RuntimeError("CUDAExecutionProvider not available in onnxruntime. Install "
                               "onnxruntime-gpu and ensure CUDA is available.\n"
                               f"available_providers={providers}")

    import modules.detection.base as base
    import modules.detection.rtdetr_v2_onnx as rtdetr

    class NoFontEngine:
        def process(self, image):
            return {"available": False}

    def create_engine(cls, settings, backend="onnx"):
        return NoFontEngine()

    def local_hf_hub_download(repo_id, filename, *args, **kwargs):
        path = model_dir / filename
        if not path.exists():
            raise FileNotFoundError(f"hf_hub_download requested missing local file: {path} "
                                    f"(repo_id={repo_id}, filename={filename})")
        return str(path)

    base.FontEngineFactory.create_engine = classmethod(create_engine)
    rtdetr.hf_hub_download = local_hf_hub_download

    pixels = np.asarray(Image.open(image).convert("RGB"))
    detector = rtdetr.RTDetrV2ONNXDetection(settings=None)
    detector.model_dir = str(model_dir)
    detector.initialize(device="cuda" if gpu else "cpu", confidence_threshold=0.3)
    blocks = detector.detect(pixels)
    if gpu:
        print(f"single_gpu_infer_ok num_blocks={len(blocks)} image={image.name} "
              f"cuda_visible_devices={os.environ.get('CUDA_VISIBLE_DEVICES', '')}")
    else:
        print(f"cpu_infer_ok num_blocks={len(blocks)} image={image.name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("model_dir")
    args = parser.parse_args()
    main(args.image, args.model_dir)
