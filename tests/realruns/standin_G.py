"""Stand-ins for the batch-G rows of ``table.py``: hub assets their C1 stages read.

The hub is not reachable here, so a C1 stage that loads a model or data set
by hub id gets a stand-in instead: the repository's own model class with
random weights (or a tiny synthetic file in the format the code reads), made
in a container of the row's image with the network off, and put in the asset
cache with ``AssetCache.ingest(..., origin="stand-in: ...")`` so every outcome
that uses it says what it is.  ``build.py`` calls each function as
``standin_G:function`` with the image's tag and the asset cache.  Nothing
here is collected by pytest.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import standin
from standin_A import run_in_image

from pytest_reb.assets.cache import AssetCache

#: RenderFormer at a small size (the base model is 200M parameters): one radiosity layer and
#: the four view-transformer layers the DPT decoder reads, heads of 128 dimensions as in the
#: released configs (the triangle RoPE's frequencies fit them), the texture patch size the
#: scene converter writes; saved by the class's own ``PyTorchModelHubMixin.save_pretrained``
#: (config.json and model.safetensors), which ``RenderFormer.from_pretrained`` reads.
RENDERFORMER_MODEL = """
import sys, torch
sys.path.insert(0, "/data/project/repo")
from renderformer.models.config import RenderFormerConfig
from renderformer.models.renderformer import RenderFormer
config = RenderFormerConfig(latent_dim=128, num_layers=1, num_heads=1, dim_feedforward=256,
                            num_register_tokens=4, view_transformer_latent_dim=128,
                            view_transformer_ffn_hidden_dim=256, view_transformer_n_heads=1,
                            view_transformer_n_layers=4, dpt_features=16,
                            dpt_out_channels=[16, 32, 64, 128])
torch.manual_seed(0)
model = RenderFormer(config)
model.save_pretrained(sys.argv[1])
print("stand-in", sys.argv[1], sum(p.numel() for p in model.parameters()), "parameters")
"""
RENDERFORMER_ORIGIN = (
    "stand-in: random-init RenderFormer (the repository's own class; latent 128, 1 radiosity "
    "layer, 4 view layers, 1 head of 128, DPT features 16) saved with its "
    "PyTorchModelHubMixin.save_pretrained (the hub's microsoft/renderformer-v1-base is not "
    "reachable here)")


def renderformer_model(image: str, cache: Path) -> None:
    """RenderFormer's model folder (``renderformer-v1-base``), random weights, into the cache."""
    repo = standin.load_repo(standin.ROOT / "repos" / "test_microsoft__renderformer.py")
    with tempfile.TemporaryDirectory() as scratch:
        run_in_image(image, RENDERFORMER_MODEL, scratch, "model")
        AssetCache(cache).ingest(repo, "renderformer-v1-base", Path(scratch) / "model",
                                 origin=RENDERFORMER_ORIGIN)
