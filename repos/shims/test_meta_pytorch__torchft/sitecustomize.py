"""pytest-reb shim for meta-pytorch/torchft (C1, C3, C4): the budget of train_ddp.py.

train_ddp.py, the README DDP example, trains until step 10000 on CIFAR-10
with batch 64, two loader workers and a 25M-row ``nn.Embedding``, and it
picks its GPU by writing ``CUDA_VISIBLE_DEVICES`` itself.  The official
harness put a sitecustomize.py first on PYTHONPATH that bounds it without
touching the repository; this is our own rewrite of the same effects, each
driven by a variable the stage sets (empty or unset: no effect):

* ``SCIMLOPSBENCH_MAX_STEPS``: once ``Manager.current_step()`` (torchft.manager)
  reaches it, the method answers ``10**9``, so the example's
  ``current_step() >= 10000`` exit fires after that many steps;
* ``SCIMLOPSBENCH_BATCH_SIZE`` / ``SCIMLOPSBENCH_NUM_WORKERS``: torchdata's
  ``StatefulDataLoader`` is built with that batch size and worker count;
* ``SCIMLOPSBENCH_DATASET_DIR``: torchvision's ``CIFAR10`` reads the prepared
  folder (which holds ``cifar-10-batches-py``) with ``download=False``;
* ``SCIMLOPSBENCH_EMBEDDING_CAP``: ``nn.Embedding`` gets at most that many rows;
* ``SCIMLOPSBENCH_FORCE_CPU=1``: ``CUDA_VISIBLE_DEVICES`` and
  ``XPU_VISIBLE_DEVICES`` are emptied now, and any later assignment of them
  through ``os.environ`` stores an empty value instead;
* ``SCIMLOPSBENCH_REQUIRE_CUDA=1`` / ``SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT=N``:
  importing torch raises RuntimeError when CUDA is unavailable or fewer than
  N GPUs are visible.

Unlike the official file, nothing heavy is imported here: each patch runs
right after its module's own code, when the program imports it.  The GPU
requirement is checked once per process tree, by the first process that
imports torch (torchrun's launcher, with the stage's own device list); it
leaves ``_REB_TORCHFT_CUDA_CHECKED`` in the environment so that its children
skip the check, because train_ddp.py narrows ``CUDA_VISIBLE_DEVICES`` to one
GPU per replica group before it imports torch and would otherwise count one.
The official file checked at interpreter start but swallowed the error; here
the requirement holds.  A sitecustomize the environment itself has, shadowed
by this one, is run afterwards.
"""

import functools
import os

from reb_shim import after_import, run_shadowed  # pytest-reb's shim library, next on the path

#: Set once a process of the tree has checked the GPU requirement.
CHECKED = "_REB_TORCHFT_CUDA_CHECKED"
#: The step ``Manager.current_step`` reports once the budget is spent.
PAST_ANY_BOUND = 10**9
#: The folder the prepared CIFAR-10 archive unpacks to (CIFAR100 uses another).
CIFAR10_FOLDER = "cifar-10-batches-py"


def _int(name):
    """The positive integer in variable ``name``, else None."""
    try:
        value = int(os.environ.get(name, "").strip())
    except ValueError:
        return None
    return value if value > 0 else None


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "y")


def _force_cpu():
    environ = type(os.environ)
    original = environ.__setitem__

    def setitem(self, key, value):
        if key in ("CUDA_VISIBLE_DEVICES", "XPU_VISIBLE_DEVICES"):
            value = ""
        original(self, key, value)

    environ.__setitem__ = setitem
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["XPU_VISIBLE_DEVICES"] = ""


def _require_gpus(torch):
    if os.environ.get(CHECKED):
        return
    need_cuda = _flag("SCIMLOPSBENCH_REQUIRE_CUDA")
    min_gpus = _int("SCIMLOPSBENCH_REQUIRE_MIN_GPU_COUNT")
    if not need_cuda and not min_gpus:
        return
    if not torch.cuda.is_available():
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        raise RuntimeError("this stage requires CUDA, but torch.cuda.is_available() is False "
                           f"(CUDA_VISIBLE_DEVICES={visible!r})")
    count = torch.cuda.device_count()
    if min_gpus and count < min_gpus:
        raise RuntimeError(f"this stage requires >= {min_gpus} GPUs, but "
                           f"torch.cuda.device_count() == {count}")
    os.environ[CHECKED] = "1"


def _cap_embedding(nn):
    cap = _int("SCIMLOPSBENCH_EMBEDDING_CAP")
    if cap is None:
        return
    original = nn.Embedding.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        if kwargs.get("_weight") is None:  # from_pretrained passes its weight: leave its shape
            if args:
                args = (min(int(args[0]), cap), *args[1:])
            elif "num_embeddings" in kwargs:
                kwargs["num_embeddings"] = min(int(kwargs["num_embeddings"]), cap)
        original(self, *args, **kwargs)

    nn.Embedding.__init__ = __init__


def _cap_steps(manager):
    max_steps = _int("SCIMLOPSBENCH_MAX_STEPS")
    if max_steps is None:
        return
    original = manager.Manager.current_step

    @functools.wraps(original)
    def current_step(self):
        step = original(self)
        return PAST_ANY_BOUND if step >= max_steps else step

    manager.Manager.current_step = current_step


def _prepared_cifar10(datasets):
    folder = os.environ.get("SCIMLOPSBENCH_DATASET_DIR", "").strip()
    if not folder:
        return
    cls = datasets.CIFAR10
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        # CIFAR10(root, train=True, transform=None, target_transform=None, download=False)
        if getattr(type(self), "base_folder", CIFAR10_FOLDER) == CIFAR10_FOLDER:
            args = list(args)
            if args:
                args[0] = folder
            else:
                kwargs["root"] = folder
            if len(args) > 4:
                args[4] = False
            else:
                kwargs["download"] = False
        original(self, *args, **kwargs)

    cls.__init__ = __init__


def _small_loader(module):
    batch = _int("SCIMLOPSBENCH_BATCH_SIZE")
    workers = os.environ.get("SCIMLOPSBENCH_NUM_WORKERS", "").strip()
    workers = int(workers) if workers.isdigit() else None
    if batch is None and workers is None:
        return
    cls = module.StatefulDataLoader
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        # DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, ...)
        args = list(args)
        for index, name, value in ((1, "batch_size", batch), (5, "num_workers", workers)):
            if value is None:
                continue
            if len(args) > index:
                args[index] = value
            else:
                kwargs[name] = value
        original(self, *args, **kwargs)

    cls.__init__ = __init__


if _flag("SCIMLOPSBENCH_FORCE_CPU"):
    _force_cpu()
after_import({
    "torch": _require_gpus,
    "torch.nn": _cap_embedding,
    "torchft.manager": _cap_steps,
    "torchvision.datasets": _prepared_cifar10,
    "torchdata.stateful_dataloader": _small_loader,
})
run_shadowed(__file__)
