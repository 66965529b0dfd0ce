"""comic-translate's driver (``repos/shims/test_ogkalu2__comic_translate``), run for real
against a stand-in checkout whose detector would download through the hub.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repomodules import write_tree as write
from support.shims import SHIMS
from support.shims import run_python as run

COMIC = SHIMS / "test_ogkalu2__comic_translate"


@pytest.fixture
def comic(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A stand-in comic-translate checkout whose detector downloads through hf_hub_download and
    asks FontEngineFactory for a font engine; both must not reach the network."""
    pytest.importorskip("PIL")
    pytest.importorskip("numpy")
    from PIL import Image

    repo = write(tmp_path / "repo", {
        "modules/__init__.py": "",
        "modules/detection/__init__.py": "",
        "modules/detection/base.py": """
            class FontEngineFactory:
                @classmethod
                def create_engine(cls, settings, backend="onnx"):
                    raise RuntimeError("would download the font models")

            class DetectionEngine:
                def __init__(self, settings=None):
                    self.settings = settings
        """,
        "modules/detection/rtdetr_v2_onnx.py": """
            import os
            import onnxruntime as ort
            from huggingface_hub import hf_hub_download
            from .base import DetectionEngine, FontEngineFactory

            class RTDetrV2ONNXDetection(DetectionEngine):
                def __init__(self, settings=None):
                    super().__init__(settings)
                    self.repo_name = "ogkalu/comic-text-and-bubble-detector"
                    self.model_dir = "/nonexistent/models/detection"

                def initialize(self, device="cpu", confidence_threshold=0.3):
                    os.makedirs(self.model_dir, exist_ok=True)
                    hf_hub_download(repo_id=self.repo_name, filename="config.json")
                    path = hf_hub_download(repo_id=self.repo_name, filename="detector.onnx")
                    self.session = ort.InferenceSession(path, providers=[device])
                    print("initialize", device, confidence_threshold, self.settings)

                def detect(self, image):
                    font = FontEngineFactory.create_engine(self.settings, backend="onnx")
                    print("detect", image.shape, image.dtype, font.process(image))
                    return ["bubble", "text"]
        """,
    })
    libs = write(tmp_path / "libs", {
        "huggingface_hub/__init__.py": """
            def hf_hub_download(repo_id, filename, **kwargs):
                raise OSError(f"network access for {repo_id}/{filename}")
        """,
        "onnxruntime/__init__.py": """
            import os
            def get_available_providers():
                return os.environ["FAKE_PROVIDERS"].split(",")
            class InferenceSession:
                def __init__(self, path, providers):
                    print("session", path, providers)
        """,
    })
    model = tmp_path / "assets" / "model" / "comic-text-and-bubble-detector"
    model.mkdir(parents=True)
    (model / "detector.onnx").write_bytes(b"onnx")
    (model / "config.json").write_text("{}")
    image = tmp_path / "assets" / "dataset" / "hopper.jpg"
    image.parent.mkdir(parents=True)
    Image.new("L", (8, 6), 128).save(image)
    return repo, libs, image, model


def test_comic_cpu_driver(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    res = run([str(COMIC / "detect_one_image.py"), "--", str(image), str(model)], repo,
              [COMIC, libs], CUDA_VISIBLE_DEVICES="", FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        f"session {model}/detector.onnx ['cpu']",
        "initialize cpu 0.3 None",
        "detect (6, 8, 3) uint8 {'available': False}",
        "cpu_infer_ok num_blocks=2 image=hopper.jpg"]


def test_comic_gpu_driver(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    argv = [str(COMIC / "detect_one_image.py"), "--", str(image), str(model)]
    res = run(argv, repo, [COMIC, libs], CUDA_VISIBLE_DEVICES="0",
              FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode != 0
    assert "CUDAExecutionProvider not available in onnxruntime" in res.stderr
    assert "session" not in res.stdout
    res = run(argv, repo, [COMIC, libs], CUDA_VISIBLE_DEVICES="0",
              FAKE_PROVIDERS="CUDAExecutionProvider,CPUExecutionProvider")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == (
        "single_gpu_infer_ok num_blocks=2 image=hopper.jpg cuda_visible_devices=0")
    assert "initialize cuda 0.3 None" in res.stdout


def test_comic_driver_needs_both_model_files(comic: tuple[Path, Path, Path, Path]) -> None:
    repo, libs, image, model = comic
    (model / "config.json").unlink()
    res = run([str(COMIC / "detect_one_image.py"), "--", str(image), str(model)], repo,
              [COMIC, libs], CUDA_VISIBLE_DEVICES="", FAKE_PROVIDERS="CPUExecutionProvider")
    assert res.returncode != 0
    assert f"expected model artifact not found: {model}/config.json" in res.stderr
