"""pytest-reb shim for NVIDIA/kvpress (C1, C3, C4): LooGLE from the prepared hub files.

evaluation/evaluate.py (and our fraction.py) call
``datasets.load_dataset("simonjegou/loogle", data_dir="shortdep_qa", split="test")``.
The official prepare made that call once with the network, which left the
split in the datasets cache that HF_DATASETS_CACHE names; the stages then
loaded it from there.  pytest-reb's prepare stores the raw hub files instead,
at ``$HF_DATASETS_CACHE/reb_hub/<hub id>/<data_dir>/`` (the asset's layout),
and the target has no network.  This shim wraps ``datasets.load_dataset`` so
that a call for a hub id and data_dir whose files are prepared there loads
them with the generic builder of their format (``parquet``, ``json``, ``csv``,
``arrow``) and ``data_files`` split by file name as ``datasets`` infers it for
a hub data_dir; the rows are the same.  Every other call is untouched, and
nothing happens when HF_DATASETS_CACHE names no prepared folder.  Our own
rewrite of that effect; it touches no file of the repository.

WordNet, pytest-reb's addition (the official stage downloaded it at run time
with ``nltk.download("wordnet")`` into ``~/nltk_data``): when ``nltk`` is
imported, ``$XDG_CACHE_HOME/nltk_data``, where the module's ``wordnet`` asset
is prepared, is appended to ``nltk.data.path`` if it exists.  Where its files
are links (a Docker target seeds the writable ``cache/`` with symbolic links
to the read-only prepared files, which are hard links into the asset store),
a plain copy of the folder beside it (``nltk_data.reb-copy``, made once) is
appended instead: nltk 3.10 refuses a corpus file that resolves outside the
corpus root and one with more than one hard link.  Without the
network ``nltk.download`` prints its error and returns False, and the corpus
is then found there.  A sitecustomize the environment itself has, shadowed by
this one, is run afterwards.
"""

import functools
import inspect
import os
import re

from reb_shim import after_import, run_shadowed  # pytest-reb's shim library, next on the path

#: Where the prepared hub files are, under HF_DATASETS_CACHE.
PREPARED = "reb_hub"
#: The generic builder for each data file suffix.
BUILDERS = {".parquet": "parquet", ".json": "json", ".jsonl": "json", ".csv": "csv",
            ".arrow": "arrow"}
#: The split a file belongs to by a word in its path, as ``datasets`` names them.
SPLIT_WORDS = {"train": ("train", "training"), "validation": ("validation", "valid", "dev", "val"),
               "test": ("test", "testing", "eval", "evaluation")}
#: Hub-only options the generic builder has no use for.
HUB_ONLY = ("name", "data_dir", "revision", "token", "use_auth_token", "trust_remote_code")


def prepared_files(root, hub_id, data_dir):
    """``{split: [files]}`` under ``root/<hub id>/<data_dir>``, or None when none are there
    (a call without a data_dir is the hub's whole repository, which is not prepared)."""
    if not root or not isinstance(hub_id, str) or hub_id.count("/") != 1 or ".." in hub_id:
        return None
    if not isinstance(data_dir, str) or not data_dir.strip("/") or ".." in data_dir:
        return None
    folder = os.path.join(root, PREPARED, *hub_id.split("/"), *data_dir.strip("/").split("/"))
    found = []
    for dirpath, _, names in os.walk(folder, followlinks=True):
        for name in names:
            if os.path.splitext(name)[1] in BUILDERS:
                found.append(os.path.join(dirpath, name))
    if not found:
        return None
    splits = {}
    for path in sorted(found):
        rel = os.path.relpath(path, folder)
        words = re.split(r"[^A-Za-z]+", rel.lower())
        split = next((s for s, names in SPLIT_WORDS.items() if any(w in words for w in names)),
                     None)
        splits.setdefault(split, []).append(path)
    unnamed = splits.pop(None, [])
    if not splits:  # no file names a split: all of them are "train", as datasets says
        splits = {"train": unnamed}
    return splits


def _wrap(load_dataset):
    signature = inspect.signature(load_dataset)

    @functools.wraps(load_dataset)
    def wrapper(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return load_dataset(*args, **kwargs)
        call = dict(bound.arguments)
        call.update(call.pop("config_kwargs", None) or {})
        path = call.get("path")
        if call.get("data_files") is not None or call.get("name"):
            return load_dataset(*args, **kwargs)
        files = prepared_files(os.environ.get("HF_DATASETS_CACHE"), path, call.get("data_dir"))
        if files is None:
            return load_dataset(*args, **kwargs)
        suffix = os.path.splitext(next(iter(files.values()))[0])[1]
        for key in ("path", *HUB_ONLY):
            call.pop(key, None)
        call["data_files"] = files
        return load_dataset(BUILDERS[suffix], **call)

    wrapper.reb_prepared = True
    return wrapper


def _patch(datasets):
    if getattr(datasets.load_dataset, "reb_prepared", False):
        return
    wrapped = _wrap(datasets.load_dataset)
    datasets.load_dataset = wrapped
    load = getattr(datasets, "load", None)
    if load is not None and hasattr(load, "load_dataset"):
        load.load_dataset = wrapped


#: Where the prepared nltk data is, under XDG_CACHE_HOME (the ``wordnet`` asset's place).
NLTK_DATA = "nltk_data"


def _nltk_path(nltk):
    root = os.environ.get("XDG_CACHE_HOME")
    if not root:
        return
    folder = os.path.join(root, NLTK_DATA)
    if not os.path.isdir(folder):
        return
    folder = _plain_folder(folder)
    if folder not in nltk.data.path:
        nltk.data.path.append(folder)


def _plain_folder(folder):
    """``folder``, or a copy of it with plain files when any of its files is a link."""
    linked = False
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or os.stat(path).st_nlink > 1:
                linked = True
    if not linked:
        return folder
    copy = folder.rstrip(os.sep) + ".reb-copy"
    if not os.path.isdir(copy):
        import contextlib
        import shutil
        import tempfile

        staging = tempfile.mkdtemp(prefix=".reb-copy-", dir=os.path.dirname(copy))
        shutil.copytree(folder, os.path.join(staging, "d"), copy_function=shutil.copyfile)
        with contextlib.suppress(OSError):  # another process made it first
            os.rename(os.path.join(staging, "d"), copy)
        shutil.rmtree(staging, ignore_errors=True)
    return copy


after_import({"datasets": _patch, "nltk": _nltk_path})
run_shadowed(__file__)
