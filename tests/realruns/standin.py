"""Checkouts of the real repositories and the stand-in assets their real runs use.

Used by ``depth_anything_v2.py`` (the Docker image here) and ``gpu.sh`` (the
GPU machine).  Nothing here is collected by pytest.

The hub is not reachable where these runs were made, so the 100 MB
Depth-Anything-V2 metric checkpoint cannot be fetched.  Its stand-in is a
state dict of the same architecture with random weights, made by the
repository's own model class under the environment's interpreter, and put in
the asset cache with ``AssetCache.ingest`` as "a cache filled elsewhere".  The
tiers then verify the environment runs the repository's pipeline end to end;
the depth it predicts is meaningless, which no tier claims otherwise.

    python tests/realruns/standin.py checkout MIRROR COMMIT DEST
    python tests/realruns/standin.py dav2-model PYTHON REPO_DIR CACHE

``da1_model`` is Depth Anything v1's, made the same way for ``build.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DAV2_MODULE = ROOT / "repos" / "test_DepthAnything__Depth_Anything_V2.py"
#: The architecture run.py builds for ``--encoder vits --max-depth 20``.
DAV2_STANDIN = """
import sys, torch
sys.path.insert(0, sys.argv[1] + "/metric_depth")
from depth_anything_v2.dpt import DepthAnythingV2
torch.manual_seed(0)
model = DepthAnythingV2(encoder="vits", features=64, out_channels=[48, 96, 192, 384], max_depth=20)
torch.save(model.state_dict(), sys.argv[2])
print("stand-in", sys.argv[2], sum(p.numel() for p in model.parameters()), "parameters")
"""
STANDIN_ORIGIN = ("stand-in: random-init DepthAnythingV2(vits, max_depth=20) state dict made by "
                  "the repository's own model class (the hub is not reachable here)")

#: Depth Anything v1's run.py loads ``LiheYoung/depth_anything_vits14`` by hub id; this writes the
#: same model class (random weights, ``save_pretrained``: config.json, model.safetensors) into a
#: Hugging Face cache layout, which the hub client falls back to when the network is off.
DA1_STANDIN = """
import os, sys, torch
sys.path.insert(0, sys.argv[1])
from depth_anything.dpt import DepthAnything
torch.manual_seed(0)
model = DepthAnything({"encoder": "vits", "features": 64, "out_channels": [48, 96, 192, 384]})
root = os.path.join(sys.argv[2], "models--LiheYoung--depth_anything_vits14")
rev = "0" * 40
model.save_pretrained(os.path.join(root, "snapshots", rev))
os.makedirs(os.path.join(root, "refs"), exist_ok=True)
open(os.path.join(root, "refs", "main"), "w").write(rev)
print("stand-in", root, sum(p.numel() for p in model.parameters()), "parameters")
"""
#: The venv every ``build.py`` image has (``build.VENV``; not imported: build imports us).
#: The first Depth Anything v1 image had its own ``/opt/envs/depth_anything``.
PYTHON = "/opt/envs/research/bin/python"

DA1_ORIGIN = ("stand-in: random-init DepthAnything(vits) saved with save_pretrained by the "
              "repository's own model class into a Hugging Face cache layout (the hub is not "
              "reachable here)")


def checkout(mirror: str, commit: str, dest: Path) -> None:
    """A git clone of ``mirror`` at ``commit`` in ``dest`` (its code is never committed here)."""
    if not (dest / ".git").is_dir():
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", mirror, str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", commit], check=True)


def load_repo(path: Path) -> Any:
    """The ``repo`` of a repository module, imported by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_realrun_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.repo


def dav2_model(python: list[str], repo_dir: str, cache: Path) -> None:
    """Make the stand-in checkpoint with ``python`` (argv prefix) and put it in ``cache``.

    ``python`` may be a ``docker run ... image python`` prefix whose ``/out``
    is the scratch folder; ``repo_dir`` is the checkout as that python sees it.
    """
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(DAV2_MODULE)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "depth_anything_v2_metric_hypersim_vits.pth"
        inside = "/out/" + out.name if "docker" in python[0] else str(out)
        argv = [a.replace("{scratch}", scratch) for a in python]
        subprocess.run([*argv, "-c", DAV2_STANDIN, repo_dir, inside], check=True)
        AssetCache(cache).ingest(repo, "metric_hypersim_vits", out, origin=STANDIN_ORIGIN)


def da1_model(image: str, cache: Path) -> None:
    """The Depth Anything v1 stand-in, made in a container of ``image``, into ``cache``."""
    from pytest_reb.assets.cache import AssetCache

    repo = load_repo(ROOT / "repos" / "test_LiheYoung__Depth_Anything.py")
    with tempfile.TemporaryDirectory() as scratch:
        hub = Path(scratch) / "hub"
        hub.mkdir()
        hub.chmod(0o777)
        subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", str(os.getuid()),
                        "-v", f"{hub}:/out", "--entrypoint", PYTHON,
                        image, "-c", DA1_STANDIN, "/data/project/repo", "/out"], check=True)
        AssetCache(cache).ingest(repo, "depth_anything_vits14", hub, origin=DA1_ORIGIN)


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    if what == "checkout":
        checkout(args[0], args[1], Path(args[2]))
    elif what == "dav2-model":
        dav2_model([args[0]], args[1], Path(args[2]))
    else:
        raise SystemExit(__doc__)
