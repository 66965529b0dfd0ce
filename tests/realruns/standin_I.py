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
