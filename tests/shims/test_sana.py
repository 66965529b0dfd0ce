"""Sana's shims (``repos/shims/test_NVlabs__Sana``): the config copy, the null embedding and
the checkpoint choice.

Sana's null embedding is checked against a stand-in ``torch`` that records what it was
asked to save.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support.repomodules import module
from support.shims import Tree, run, shim

SANA = "test_NVlabs__Sana"


#: The parts of configs/sana_config/1024ms/Sana_600M_img1024.yaml (pinned commit) around the key,
#: plus the cases the patch must leave alone: a nested resume_from and a real value.
SANA_CONFIG = """\
data:
  data_dir: [data/toy_data]
# model config
model:
  model: SanaMS_600M_P1_D28
  load_from:
  resume_from:
  aspect_ratio_type: ASPECT_RATIO_1024
  mlp_acts:
    - silu
    -
other:
  resume_from: null  # nothing yet\r
  keep:
    resume_from:
      checkpoint: latest
  real:
    resume_from: /ckpt/epoch_1.pth
"""


def test_sana_patch_train_config(tmp_path: Path) -> None:
    """Only empty, non-nested resume_from values become 'latest'; every other byte is kept."""
    source, dest = tmp_path / "in.yaml", tmp_path / "out" / "sub" / "config_patched.yaml"
    source.write_bytes(SANA_CONFIG.encode())
    res = run([sys.executable, shim(SANA, "patch_train_config.py"), str(source), str(dest)],
              tmp_path)
    assert res.returncode == 0, res.stderr
    want = (SANA_CONFIG
            .replace("  load_from:\n  resume_from:\n", "  load_from:\n  resume_from: latest\n")
            .replace("  resume_from: null  # nothing yet\r",
                     "  resume_from: latest # nothing yet\r"))
    assert dest.read_bytes() == want.encode()
    assert source.read_bytes() == SANA_CONFIG.encode()


def test_sana_patch_train_config_fails_without_source(tmp_path: Path) -> None:
    res = run([sys.executable, shim(SANA, "patch_train_config.py"), str(tmp_path / "missing"),
               str(tmp_path / "out.yaml")], tmp_path)
    assert res.returncode != 0
    assert not (tmp_path / "out.yaml").exists()


#: A stand-in of torch: enough of zeros/ones/long/save to see what the helper saves.
FAKE_TORCH = """\
import json
long = "torch.int64"
def zeros(*shape, dtype="torch.float32"):
    return {"fill": 0, "shape": list(shape), "dtype": dtype}
def ones(*shape, dtype="torch.float32"):
    return {"fill": 1, "shape": list(shape), "dtype": dtype}
def save(obj, path):
    with open(path, "w") as fh:
        json.dump(obj, fh)
"""


def test_sana_ensure_null_embed(tmp_path: Path) -> None:
    """The module's setup (config copy, folders, null embedding) with a stand-in torch: zeros of
    1x300x2304 and an all-ones long mask under the two keys train.py reads; kept when present."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text(FAKE_TORCH)
    tree = Tree(tmp_path, SANA)
    config = tree["repo"] / "configs" / "sana_config" / "1024ms" / "Sana_600M_img1024.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(SANA_CONFIG)
    checkpoints = tree["assets"] / "model" / "sana_600m_1024px" / "checkpoints"
    checkpoints.mkdir(parents=True)
    (checkpoints / "Sana_600M_1024px.pth").write_text("")
    stage = module(SANA).repo.single_gpu
    tree.setup(stage, PYTHONPATH=str(fake))

    null = tree["out"] / "null_embed_root" / "null_embed_diffusers_gemma-2-2b-it_300token_2304.pth"
    assert json.loads(null.read_text()) == {
        "uncond_prompt_embeds": {"fill": 0, "shape": [1, 300, 2304], "dtype": "torch.float32"},
        "uncond_prompt_embeds_mask": {"fill": 1, "shape": [1, 300], "dtype": "torch.int64"},
    }
    assert "resume_from: latest" in (tree["out"] / "config_patched.yaml").read_text()
    for folder in ("work_dir", "valid_prompt_embed_root"):
        assert (tree["out"] / folder).is_dir()
    argv = tree.argv(stage.argv)
    assert f"--config_path={tree['out']}/config_patched.yaml" in argv
    assert f"--train.null_embed_root={null.parent}" in argv

    null.write_text("theirs")  # an existing file is kept
    tree.setup(stage, PYTHONPATH=str(fake))
    assert null.read_text() == "theirs"


def test_sana_null_embed_needs_torch(tmp_path: Path) -> None:
    """Without torch in the interpreter (-S: no site-packages) the helper fails, and so the
    stage, writing nothing."""
    path = tmp_path / "null" / "x.pth"
    res = run([sys.executable, "-S", shim(SANA, "ensure_null_embed.py"), f"--path={path}",
               "--max-length=3", "--hidden-size=4"], tmp_path, PYTHONPATH="")
    assert res.returncode == 1
    assert "No module named 'torch'" in res.stderr
    assert not path.exists()


def test_sana_checkpoint_is_the_shortest_name(tmp_path: Path) -> None:
    """--load_from is the first sorted checkpoints/*.pth, which is the official shortest name."""
    tree = Tree(tmp_path, SANA)
    folder = tree["assets"] / "model" / "sana_600m_1024px" / "checkpoints"
    folder.mkdir(parents=True)
    for name in ("Sana_600M_1024px_MultiLing.pth", "Sana_600M_1024px.pth"):
        (folder / name).write_text("")
    argv = tree.argv(module(SANA).repo.multi_gpu.argv)
    assert f"--load_from={folder}/Sana_600M_1024px.pth" in argv
    assert "--master_port=29555" in argv
