"""pytest-reb shim for FunAudioLLM/SenseVoice (C1, C3, C4): the prepared model, offline.

api.py (``SenseVoiceSmall.from_pretrained``) and FunASR's ``train_ds.py`` load
``iic/SenseVoiceSmall`` by id: ``AutoModel.build_model`` -> ``download_model``
-> ``download_from_ms`` -> ``get_or_download_model_dir``, which imports
``snapshot_download`` from ``modelscope.hub.snapshot_download`` at each call
(the same from FunASR 1.1, mid-2024, to 1.4.3).  With the files already in
ModelScope's cache, that function still asks the hub for the revision, and the
target has no network.  pytest-reb's prepare puts the model at
``<ModelScope cache>/models/<owner>/<name>/`` (the cache is ``$MODELSCOPE_CACHE``,
else ``~/.cache/modelscope/hub`` of the stage's HOME).  This shim wraps that
module's ``snapshot_download`` (where modelscope 1.16.1, 1.30.0 and 1.40.2 all
keep it) so that a model call with no ``cache_dir`` or ``local_dir`` for an id
whose folder there holds ``configuration.json`` returns that folder without
contacting the hub; every other call goes to modelscope unchanged.  This is
not an official shim: the official harness ran with the network.  Our own
code; it touches no file of the repository.  A sitecustomize the environment
itself has, shadowed by this one, is run afterwards.
"""

import functools
import inspect
import os

from reb_shim import after_import, run_shadowed  # pytest-reb's shim library, next on the path

#: The module FunASR imports ``snapshot_download`` from.
MODULE = "modelscope.hub.snapshot_download"
#: The file that makes a folder a model FunASR reads (``download_from_ms`` looks for it).
MARKER = "configuration.json"


def cache_root():
    """ModelScope's cache for this process: ``$MODELSCOPE_CACHE``, else the HOME's."""
    root = os.environ.get("MODELSCOPE_CACHE")
    if not root:
        root = os.path.join("~", ".cache", "modelscope", "hub")
    return os.path.expanduser(root)


def prepared_folder(model_id):
    """The prepared folder of ``model_id`` ("owner/name"), or None when there is none."""
    if not isinstance(model_id, str) or model_id.count("/") != 1 or ".." in model_id:
        return None
    owner, name = model_id.split("/")
    if not owner or not name:
        return None
    # ModelScope spells a dot in a name as "___" in its cache folders
    for folder_name in (name, name.replace(".", "___")):
        folder = os.path.join(cache_root(), "models", owner, folder_name)
        if os.path.isfile(os.path.join(folder, MARKER)):
            return folder
    return None


def _wrap(snapshot_download):
    signature = inspect.signature(snapshot_download)

    @functools.wraps(snapshot_download)
    def wrapper(*args, **kwargs):
        try:
            call = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return snapshot_download(*args, **kwargs)
        folder = None
        if (call.get("repo_type") in (None, "model") and call.get("cache_dir") is None
                and call.get("local_dir") is None):
            folder = prepared_folder(call.get("repo_id") or call.get("model_id"))
        if folder is None:
            return snapshot_download(*args, **kwargs)
        return folder

    wrapper.reb_prepared = True
    return wrapper


def _patch(module):
    original = getattr(module, "snapshot_download", None)
    if callable(original) and not getattr(original, "reb_prepared", False):
        module.snapshot_download = _wrap(original)


after_import({MODULE: _patch})
run_shadowed(__file__)
