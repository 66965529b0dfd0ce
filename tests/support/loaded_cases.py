"""Hostile images for what a run loads (issue classes 2 and 4): installed files edited,
swapped or made sourceless, ``RECORD`` rewritten to match, untracked packages in every
form, edited tracked files of any kind, edits undone within the run.

Each is a ``Case`` of ``imagecase.py`` (the demo image plus operations laid down by the
image's own Python).  ``EXPECT`` holds, per case, words of the file strict must name.
"""

from __future__ import annotations

from pytest_reb.loop.demo.images import REPO_DIR
from support.forgeries import PLANTED
from support.imagecase import SITE

YAML_EXIT = ("\n\ndef safe_load(stream):\n    import os\n"
             "    print('PLANTED TRAIN_OK steps=5', flush=True)\n    os._exit(0)\n")
#: Edits ``path`` as the entrypoint's interpreter starts and puts it back at exit.
EDIT_RESTORE = ("import sys, atexit; any(a.endswith('train.py') for a in sys.argv) "
                "and (lambda p, o: (open(p, 'w').write({body!r}), "
                "atexit.register(lambda: open(p, 'w').write(o))))"
                "({path!r}, open({path!r}).read())\n")
LR_ZERO = "\ntrain:\n  batch_size: 64\n  lr: 0.0\n  steps: 20\n"
CONFIG_LR_ZERO = ("seed: 0\ndata: {samples: 64, features: 16, classes: 4, noise: 0.5}\n"
                  "model: {hidden: 8}" + LR_ZERO)
PLANTED_TRAIN = "print('PLANTED TRAIN_OK steps=5', flush=True)\n"
DYNLOAD = "/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so"

#: case -> operations (``imagecase.SETUP``)
OPS: dict[str, list[tuple[object, ...]]] = {
    # class 2: installed distributions as they are on disk
    "yaml-exit-edited": [("append", f"{SITE}/yaml/__init__.py", YAML_EXIT)],
    "yaml-exit-resealed": [("append", f"{SITE}/yaml/__init__.py", YAML_EXIT),
                           ("reseal", f"{SITE}/yaml/__init__.py", "yaml/__init__.py")],
    "sgd-edited": [("append", f"{SITE}/torch/optim/sgd.py", "\nprint('PLANTED', flush=True)\n")],
    "yaml-so-swapped": [("copy", f"{SITE}/yaml/_yaml.cpython-311-x86_64-linux-gnu.so", DYNLOAD)],
    "yaml-sourceless": [("sourceless", f"{SITE}/yaml/reader.pyc",
                         "print('PLANTED', flush=True)\n", f"{SITE}/yaml/reader.py")],
    # class 4: everything the run imports
    "config-pyc-package": [("sourceless", f"{REPO_DIR}/tinynet/config/__init__.pyc",
                            PLANTED, "")],
    "config-symlink-outside": [("file", "/opt/evil/config/__init__.py", PLANTED, 0o644),
                               ("symlink", f"{REPO_DIR}/tinynet/config", "/opt/evil/config")],
    "torch-shadow-top": [("file", f"{REPO_DIR}/torch.py", PLANTED, 0o644)],
    "yaml-shadow-top": [("file", f"{REPO_DIR}/yaml/__init__.py", PLANTED, 0o644)],
    "config-lr-zero": [("append", f"{REPO_DIR}/configs/tiny.yaml", LR_ZERO)],
    "train-edit-restore": [("file", f"{SITE}/zz_restore.pth", EDIT_RESTORE.format(
        path=f"{REPO_DIR}/train.py", body=PLANTED_TRAIN), 0o644)],
    "config-edit-restore": [("file", f"{SITE}/zz_restore.pth", EDIT_RESTORE.format(
        path=f"{REPO_DIR}/configs/tiny.yaml", body=CONFIG_LR_ZERO), 0o644)],
}

#: case -> words of the refusal strict must give (the file it names)
EXPECT = {
    "yaml-exit-edited": "yaml/__init__.py, which does not match pyyaml",
    "yaml-exit-resealed": "yaml/__init__.py, which pyyaml-6.0.4.dist-info's RECORD vouches",
    "sgd-edited": "torch/optim/sgd.py, which does not match torch",
    "yaml-so-swapped": "yaml/_yaml.cpython-311-x86_64-linux-gnu.so, which does not match",
    "yaml-sourceless": "yaml/reader.pyc, which no installed distribution's RECORD lists",
    "config-pyc-package": "tinynet/config/__init__.pyc, an untracked module of the checkout",
    "config-symlink-outside": "/opt/evil/config/__init__.py, a module outside the checkout",
    "torch-shadow-top": "torch.py, an untracked module of the checkout",
    "yaml-shadow-top": "yaml/__init__.py, an untracked module of the checkout",
    "config-lr-zero": "configs/tiny.yaml, a tracked file that is not the pinned commit's",
    "train-edit-restore": "train.py, a tracked file the container wrote",
    "config-edit-restore": "configs/tiny.yaml, a tracked file the container wrote",
}
